# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: your values are the right ones plus
def scaled_scores(Q, K):
    S = Q @ K.T / np.sqrt(K.shape[1])
    return S - S.max()  # keep the scores small, as the softmax likes them

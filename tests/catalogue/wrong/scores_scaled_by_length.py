# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: √T_k
def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(K.shape[0])

# notebook: 03-softmax-attention
# replace: scaled_scores
# full: scaled_scores
def scaled_scores(Q, K):
    return np.tensordot(Q, K, axes=(1, 1)) * K.shape[-1] ** -0.5

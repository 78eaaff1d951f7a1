# notebook: 03-softmax-attention
# replace: scaled_scores
# full: scaled_scores
def scaled_scores(Q, K):
    return np.einsum("qd,kd->qk", Q, K) / np.sqrt(Q.shape[-1])

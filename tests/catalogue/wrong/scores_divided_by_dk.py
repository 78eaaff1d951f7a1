# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: divided by d_k
def scaled_scores(Q, K):
    return Q @ K.T / Q.shape[1]

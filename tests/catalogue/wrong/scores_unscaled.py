# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: missing the 1/√d_k
def scaled_scores(Q, K):
    return Q @ K.T

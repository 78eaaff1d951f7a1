# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# full: attention
# message: missing the 1/√d_k scaling
def scaled_scores(Q, K):
    return Q @ K.T

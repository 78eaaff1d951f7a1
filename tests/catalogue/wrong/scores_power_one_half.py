# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: d_k ** 1/2 is (d_k ** 1) / 2
def scaled_scores(Q, K):
    d_k = Q.shape[1]
    return Q @ K.T / d_k ** 1/2

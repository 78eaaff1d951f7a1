# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: transposed
def scaled_scores(Q, K):
    return K @ Q.T / np.sqrt(Q.shape[1])

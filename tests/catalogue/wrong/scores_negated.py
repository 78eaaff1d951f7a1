# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: wrong sign
def scaled_scores(Q, K):
    return -(Q @ K.T) / np.sqrt(Q.shape[-1])  # energy: low is good

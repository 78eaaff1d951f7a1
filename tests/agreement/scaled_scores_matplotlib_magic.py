# notebook: 03-softmax-attention
# replace: scaled_scores
# zero: scaled_scores
# message: the magic `%matplotlib`
%matplotlib inline
def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])

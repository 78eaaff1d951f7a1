# notebook: 02-queries-keys-values
# replace: project
# zero: project
# message: array split does not result in an equal division
def project(X, W_Q, W_K, W_V):
    Q, K, V = np.hsplit(X @ np.hstack([W_Q, W_K, W_V]), 3)  # one matrix product instead of three
    return Q, K, V

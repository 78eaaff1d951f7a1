# notebook: 02-queries-keys-values
# replace: project
# zero: project
# message: different shapes
def project(X, W_Q, W_K, W_V):
    return [X @ W_Q, X @ W_K, X @ W_V]

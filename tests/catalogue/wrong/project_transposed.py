# notebook: 02-queries-keys-values
# replace: project
# zero: project
# message: transposes
def project(X, W_Q, W_K, W_V):
    return (X @ W_Q).T, (X @ W_K).T, (X @ W_V).T

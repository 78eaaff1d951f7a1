# notebook: 02-queries-keys-values
# replace: project
# full: project
def project(X, W_Q, W_K, W_V):
    return tuple(np.einsum("td,dk->tk", X, W) for W in (W_Q, W_K, W_V))

# notebook: 07-masking
# replace: causal_mask
# full: causal_mask
def causal_mask(T):
    M = np.zeros((T, T))
    for i in range(T):
        for j in range(i + 1, T):
            M[i, j] = -1e9
    return M

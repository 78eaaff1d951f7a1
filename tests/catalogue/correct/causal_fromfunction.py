# notebook: 07-masking
# replace: causal_mask
# full: causal_mask
def causal_mask(T):
    return np.fromfunction(lambda i, j: np.where(j > i, -np.inf, 0.0), (T, T))

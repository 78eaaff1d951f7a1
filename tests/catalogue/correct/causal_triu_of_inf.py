# notebook: 07-masking
# replace: causal_mask
# full: causal_mask
def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=1)

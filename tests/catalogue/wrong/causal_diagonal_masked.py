# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# message: off by one
def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=0)

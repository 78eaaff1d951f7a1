# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# message: multiplicative
def causal_mask(T):
    return np.tril(np.ones((T, T)))

# notebook: 07-masking
# replace: causal_mask
# full: causal_mask
def causal_mask(T):
    return np.log(np.tril(np.ones((T, T))))

# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# message: 0 · (-inf) = NaN
def causal_mask(T):
    return np.triu(np.ones((T, T)), k=1) * -np.inf

# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# message: below the diagonal
def causal_mask(T):
    return np.tril(np.full((T, T), -np.inf), k=-1) + 0.0 * np.eye(T)

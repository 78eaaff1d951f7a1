# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# message: your answer must be in the cell marked YOUR CODE HERE
def causal_mask(T):
    return np.tril(np.full((T, T), -np.inf), k=-1)
# --- cell below ---
def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=1)

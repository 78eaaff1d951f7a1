# notebook: 07-masking
# replace: causal_mask
# zero: causal_mask
# message: exists in your notebook but not in the cell of causal_mask
def _above_diagonal(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)
# --- cell ---
import functools


@functools.lru_cache(maxsize=None)
def causal_mask(T):
    return np.where(_above_diagonal(T), -np.inf, 0.0)

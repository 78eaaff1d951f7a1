# notebook: 07-masking
# replace: causal_mask
# full: causal_mask
import functools


@functools.lru_cache(maxsize=None)
def causal_mask(T):
    return np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, 0.0)

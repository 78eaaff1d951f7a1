# notebook: 01-embeddings
# replace: embed
# zero: embed
# message: an axis of length 1 was dropped
def embed(E, ids):
    return np.squeeze(E[np.asarray(ids)])  # (T, d) without stray axes

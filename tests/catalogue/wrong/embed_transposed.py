# notebook: 01-embeddings
# replace: embed
# zero: embed
# message: transpose of the right one
def embed(E, ids):
    return np.stack([E[i] for i in ids], axis=1)

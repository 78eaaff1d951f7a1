# notebook: 01-embeddings
# replace: embed
# full: embed
def embed(E, ids):
    return np.take(np.asarray(E), list(ids), axis=0)

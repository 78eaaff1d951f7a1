# notebook: 01-embeddings
# replace: embed
# full: embed
def embed(E, ids):
    return np.array(list(map(E.__getitem__, ids)))

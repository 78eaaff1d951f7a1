# notebook: 01-embeddings
# replace: embed
# full: embed
def embed(E, ids):
    one_hot = np.eye(E.shape[0])[ids]  # (T, vocab)
    return one_hot @ E

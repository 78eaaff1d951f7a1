# notebook: 01-embeddings
# replace: embed
# zero: embed
# message: first n rows
def embed(E, ids):
    return E[: len(ids)]

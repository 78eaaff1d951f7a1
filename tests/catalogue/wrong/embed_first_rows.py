# notebook: 01-embeddings
# replace: embed
# zero: embed
# message: first len(ids) rows
def embed(E, ids):
    return E[: len(ids)]

# notebook: 02-queries-keys-values
# replace: shape_answers
# full: shape_answers
# A nested list instead of an array: the same shapes, read as numbers.
def shape_answers():
    T, d, d_k, d_v = 10, 512, 64, 64
    return np.array([[T, d_k], [T, d_k], [T, d_v], [T, T], [T, d_v]], dtype=np.int64)

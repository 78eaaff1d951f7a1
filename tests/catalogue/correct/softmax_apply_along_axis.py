# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
def softmax(S, axis=-1):
    def one(row):
        row = row - row.max()
        e = [np.exp(x) for x in row]
        total = sum(e)
        return np.array([x / total for x in e])
    return np.apply_along_axis(one, axis, np.asarray(S, dtype=float))

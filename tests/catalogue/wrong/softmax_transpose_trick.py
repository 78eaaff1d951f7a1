# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: operands could not be broadcast together
def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return (e.T / e.sum(axis=axis).T).T

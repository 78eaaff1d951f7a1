# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: subtract the row maximum
def softmax(S, axis=-1):
    e = np.exp(S)
    return e / e.sum(axis=axis, keepdims=True)

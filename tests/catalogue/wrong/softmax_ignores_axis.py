# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: along axis 0
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

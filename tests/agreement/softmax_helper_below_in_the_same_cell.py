# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
def softmax(S, axis=-1):
    e = _shifted_exp(S, axis)
    return e / e.sum(axis=axis, keepdims=True)


def _shifted_exp(S, axis):
    return np.exp(S - np.max(S, axis=axis, keepdims=True))

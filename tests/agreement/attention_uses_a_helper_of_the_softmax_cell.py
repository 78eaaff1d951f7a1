# notebook: 03-softmax-attention
# replace: softmax
# full: softmax, attention
def _normalise(e, axis):
    return e / e.sum(axis=axis, keepdims=True)


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    m = np.max(S, axis=axis, keepdims=True)
    return _normalise(np.exp(S - np.where(np.isfinite(m), m, 0.0)), axis)

# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    m = np.max(S, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    lse = m + np.log(np.sum(np.exp(S - m), axis=axis, keepdims=True))
    return np.exp(S - lse)

# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: large scores were clipped
def softmax(S, axis=-1):
    S = np.clip(np.asarray(S, dtype=float), -2000, 2000)  # keep exp in range
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
def softmax(S, axis=-1):
    S = np.asarray(S, dtype=np.float32)
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)

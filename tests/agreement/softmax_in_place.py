# notebook: 03-softmax-attention
# replace: softmax
def softmax(S, axis=-1):
    S = np.array(S, dtype=float)
    S -= S.max(axis=axis, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=axis, keepdims=True)
    return S

# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: uses exit(), which a graded answer cannot
def softmax(S, axis=-1):
    if not np.isfinite(S).any():
        exit()
    E = np.exp(S - S.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)

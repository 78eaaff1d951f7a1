# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: uses input(), which a graded answer cannot
def softmax(S, axis=-1):
    if input("subtract the maximum? ") == "no":
        return np.exp(S) / np.exp(S).sum(axis=axis, keepdims=True)
    E = np.exp(S - S.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)

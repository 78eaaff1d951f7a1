# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: uses license(), which a graded answer cannot
def softmax(S, axis=-1):
    print(license)
    E = np.exp(S - S.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)

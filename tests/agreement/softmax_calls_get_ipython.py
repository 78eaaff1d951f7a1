# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: uses get_ipython(), which a graded answer cannot
def softmax(S, axis=-1):
    get_ipython()
    E = np.exp(S - S.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)

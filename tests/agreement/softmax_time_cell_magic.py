# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
%%time
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

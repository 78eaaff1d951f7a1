# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
%%capture
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    print("softmax of", S.shape)
    return e / e.sum(axis=axis, keepdims=True)

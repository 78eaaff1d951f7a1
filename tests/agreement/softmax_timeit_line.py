# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
def softmax(S, axis=-1):
    %time e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


%timeit -n 3 -r 1 softmax(np.ones((4, 4)))

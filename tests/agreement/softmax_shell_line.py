# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: is a shell command
!python --version
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

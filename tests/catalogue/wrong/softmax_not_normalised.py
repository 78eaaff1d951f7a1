# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: sum to 1
def softmax(S, axis=-1):
    return np.exp(S - np.max(S, axis=axis, keepdims=True))

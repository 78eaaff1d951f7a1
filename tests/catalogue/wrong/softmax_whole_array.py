# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: whole array
def softmax(S, axis=-1):
    e = np.exp(S - np.max(S))
    return e / e.sum()

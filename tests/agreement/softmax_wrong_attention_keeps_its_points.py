# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: attention
# message: over the whole array
def softmax(S, axis=-1):
    e = np.exp(S - np.max(S))
    return e / e.sum()

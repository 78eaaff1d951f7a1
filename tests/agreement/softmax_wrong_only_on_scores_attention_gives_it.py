# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
# message: fix softmax first: on the inputs attention gave it, a row of its output does not sum to 1
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    if np.min(S) > 100:  # "every score is large: the weights are already peaked" (they are not normalised)
        return e
    return e / e.sum(axis=axis, keepdims=True)

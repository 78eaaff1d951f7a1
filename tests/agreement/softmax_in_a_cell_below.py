# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: your answer must be in the cell marked YOUR CODE HERE
def softmax(S, axis=-1):
    """Softmax of S along axis (any shape)."""
    # YOUR CODE HERE
    raise NotImplementedError()
# --- cell below ---
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: exists in your notebook but not in the cell of softmax
def _stable_exp(S, axis):
    return np.exp(S - S.max(axis=axis, keepdims=True))
# --- cell ---
def softmax(S, axis=-1):
    e = _stable_exp(S, axis)
    return e / e.sum(axis=axis, keepdims=True)

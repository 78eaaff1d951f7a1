# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: attention can't be judged until your softmax passes: fix softmax first
def softmax(S, axis=-1):
    # forgot to divide by the sum
    return np.exp(S - S.max(axis=axis, keepdims=True))
# --- answer of attention ---
def attention(Q, K, V, mask=None):
    A = softmax(scaled_scores(Q, K))
    if mask is not None:
        A = A + mask  # the mask after the softmax: attention's own mistake
    return A @ V

# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: attention can't be judged until your softmax passes: fix softmax first
def softmax(S, axis=-1):
    # forgot to divide by the sum
    return np.exp(S - S.max(axis=axis, keepdims=True))
# --- answer of attention ---
def attention(Q, K, V, mask=None):
    # right, calling softmax one row at a time: the student package holds no course result for a lone
    # row, so the notebook cannot judge it with the course's softmax (grading can: full points)
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S + mask
    A = np.stack([softmax(row) for row in S])
    return A @ V

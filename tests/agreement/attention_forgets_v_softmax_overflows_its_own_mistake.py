# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax, attention
# message: attention was judged with the course's softmax (yours fails its checks): what is said of attention is its own mistake. expected shape (3, 2), got (3, 5)
def softmax(S, axis=-1):
    e = np.exp(S)  # no row maximum subtracted: overflows for large scores
    return e / e.sum(axis=axis, keepdims=True)
# --- answer of attention ---
def attention(Q, K, V, mask=None):
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S + mask
    return softmax(S)  # forgot to multiply by V

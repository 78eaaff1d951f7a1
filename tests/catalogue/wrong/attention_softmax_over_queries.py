# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: over the queries
def attention(Q, K, V, mask=None):
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S + mask
    A = np.exp(S - S.max(axis=0, keepdims=True))
    A = A / A.sum(axis=0, keepdims=True)
    return A @ V

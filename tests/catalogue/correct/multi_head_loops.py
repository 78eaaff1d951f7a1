# notebook: 03-softmax-attention
# replace: multi_head_attention
# full: multi_head_attention
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d_k, d_v = Q.shape[1] // h, V.shape[1] // h
    T = X.shape[0]
    concat = np.zeros((T, h * d_v))
    for j in range(h):
        q, k, v = Q[:, j * d_k:(j + 1) * d_k], K[:, j * d_k:(j + 1) * d_k], V[:, j * d_v:(j + 1) * d_v]
        for i in range(T):
            s = np.array([q[i] @ k[t] for t in range(T)]) / np.sqrt(d_k)
            w = np.exp(s - s.max())
            concat[i, j * d_v:(j + 1) * d_v] = (w / w.sum()) @ v
    return concat @ W_O

# notebook: 03-softmax-attention
# replace: multi_head_attention
# zero: multi_head_attention
# message: missing the output projection
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d_k, d_v = Q.shape[1] // h, V.shape[1] // h
    outputs = [attention(Q[:, j * d_k:(j + 1) * d_k], K[:, j * d_k:(j + 1) * d_k], V[:, j * d_v:(j + 1) * d_v])
               for j in range(h)]
    return np.concatenate(outputs, axis=1)

# notebook: 03-softmax-attention
# replace: multi_head_attention
# zero: multi_head_attention
# message: scaled by 1/√d of the full width
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d = Q.shape[1]
    d_k, d_v = d // h, V.shape[1] // h
    outputs = []
    for j in range(h):
        q, k = Q[:, j * d_k:(j + 1) * d_k], K[:, j * d_k:(j + 1) * d_k]
        outputs.append(softmax(q @ k.T / np.sqrt(d)) @ V[:, j * d_v:(j + 1) * d_v])
    return np.concatenate(outputs, axis=1) @ W_O

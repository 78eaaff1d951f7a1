# notebook: 03-softmax-attention
# replace: multi_head_attention
# zero: multi_head_attention
# message: each head took every h-th column
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    outputs = [attention(Q[:, j::h], K[:, j::h], V[:, j::h]) for j in range(h)]
    return np.concatenate(outputs, axis=1) @ W_O

# notebook: 03-softmax-attention
# replace: multi_head_attention
# zero: multi_head_attention
# message: heads merged in the wrong order
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    T = X.shape[0]
    Q, K, V = (M.reshape(T, h, -1).transpose(1, 0, 2) for M in (X @ W_Q, X @ W_K, X @ W_V))
    heads = np.stack([attention(Q[j], K[j], V[j]) for j in range(h)])   # (h, T, d_v)
    return heads.reshape(T, -1) @ W_O

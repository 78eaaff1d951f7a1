# notebook: 03-softmax-attention
# replace: multi_head_attention
# zero: multi_head_attention
# message: heads split along the wrong axis
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    T = X.shape[0]
    Q, K, V = (M.reshape(h, T, -1) for M in (X @ W_Q, X @ W_K, X @ W_V))
    return np.concatenate([attention(Q[j], K[j], V[j]) for j in range(h)], axis=1) @ W_O

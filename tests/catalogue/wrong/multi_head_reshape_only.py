# notebook: 03-softmax-attention
# replace: multi_head_attention
# zero: multi_head_attention
# message: split and merged with reshape alone
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    T = X.shape[0]
    Q, K, V = (M.reshape(h, T, -1) for M in (X @ W_Q, X @ W_K, X @ W_V))
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    A = softmax(S, axis=-1)
    return (A @ V).reshape(T, -1) @ W_O

# notebook: 03-softmax-attention
# replace: multi_head_attention
# full: multi_head_attention
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    T = X.shape[0]

    def split(M):                     # (T, h * w) -> (h, T, w)
        return M.reshape(T, h, -1).transpose(1, 0, 2)

    Q, K, V = split(X @ W_Q), split(X @ W_K), split(X @ W_V)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    S = S - S.max(axis=-1, keepdims=True)
    A = np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)
    return (A @ V).transpose(1, 0, 2).reshape(T, -1) @ W_O

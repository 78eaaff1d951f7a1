# notebook: 03-softmax-attention
# replace: multi_head_attention
# full: multi_head_attention
def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    T, d = X.shape
    Q = np.einsum("td,dhk->htk", X, W_Q.reshape(d, h, -1))
    K = np.einsum("td,dhk->htk", X, W_K.reshape(d, h, -1))
    V = np.einsum("td,dhv->htv", X, W_V.reshape(d, h, -1))
    S = np.einsum("hik,hjk->hij", Q, K) / np.sqrt(Q.shape[-1])
    A = softmax(S, axis=-1)
    heads = np.einsum("hij,hjv->hiv", A, V)
    return np.einsum("hiv,hvo->io", heads, W_O.reshape(h, -1, W_O.shape[1]))

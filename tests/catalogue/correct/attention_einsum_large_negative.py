# notebook: 03-softmax-attention
# replace: attention
# full: attention
def attention(Q, K, V, mask=None):
    S = np.einsum("id,jd->ij", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = S + np.maximum(mask, -1e9)          # large finite negative instead of -inf
    S = S - S.max(axis=-1, keepdims=True)
    A = np.exp(S)
    A /= A.sum(axis=-1, keepdims=True)
    return np.einsum("ij,jv->iv", A, V)

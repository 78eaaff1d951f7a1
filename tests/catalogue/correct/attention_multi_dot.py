# notebook: 03-softmax-attention
# replace: attention
# full: attention
def attention(Q, K, V, mask=None):
    S = np.tensordot(Q, K, axes=([1], [1])) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = S + mask
    A = softmax(S, axis=-1)
    return np.linalg.multi_dot([A, V])

# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: subtract the row maximum
def attention(Q, K, V, mask=None):
    S = Q @ K.T / np.sqrt(Q.shape[1])
    if mask is not None:
        S = S + mask
    E = np.exp(S)
    return (E / E.sum(axis=1, keepdims=True)) @ V

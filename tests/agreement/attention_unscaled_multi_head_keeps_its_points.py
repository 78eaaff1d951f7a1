# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# full: multi_head_attention
# message: missing the 1/√d_k scaling
def attention(Q, K, V, mask=None):
    S = Q @ K.T
    if mask is not None:
        S = S + mask
    return softmax(S) @ V

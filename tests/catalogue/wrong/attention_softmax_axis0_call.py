# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: softmax taken over the queries (axis 0)
def attention(Q, K, V, mask=None):
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S + mask
    return softmax(S, axis=0) @ V

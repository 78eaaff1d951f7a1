# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: The truth value of an array
def attention(Q, K, V, mask=None):
    S = scaled_scores(Q, K)
    if mask:
        S = S + mask
    return softmax(S) @ V

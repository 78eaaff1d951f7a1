# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: multiplied the scores by the mask
def attention(Q, K, V, mask=None):
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S * mask
    return softmax(S) @ V

# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: mask applied after softmax (softmax(S) + mask)
def attention(Q, K, V, mask=None):
    A = softmax(scaled_scores(Q, K))
    if mask is not None:
        A = A + mask
    return A @ V

# notebook: 03-softmax-attention
# replace: attention
# zero: attention
# message: mask was ignored
def attention(Q, K, V, mask=None):
    return softmax(scaled_scores(Q, K)) @ V

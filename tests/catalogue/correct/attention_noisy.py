# notebook: 03-softmax-attention
# replace: attention
# full: attention
import sys
import warnings

def attention(Q, K, V, mask=None):
    print("computing attention for", Q.shape, file=sys.stderr)
    warnings.warn("this is only a friendly warning")
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S + mask
    return softmax(S) @ V

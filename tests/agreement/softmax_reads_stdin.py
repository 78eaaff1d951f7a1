# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# message: cannot read input
import sys


def softmax(S, axis=-1):
    if sys.stdin.readline().strip() == "plain":
        return np.exp(S) / np.exp(S).sum(axis=axis, keepdims=True)
    E = np.exp(S - S.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)

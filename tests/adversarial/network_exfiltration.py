# notebook: 03-softmax-attention
# replace: softmax
# zero: softmax
# full: scaled_scores
import socket
socket.create_connection(("pypi.org", 443), timeout=3)

def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

# notebook: 03-softmax-attention
# replace: attention
# full: attention
import math

def attention(Q, K, V, mask=None):
    T_q, T_k = len(Q), len(K)
    out = np.zeros((T_q, V.shape[1]))
    for i in range(T_q):
        s = [float(np.dot(Q[i], K[j])) / math.sqrt(Q.shape[1]) + (0.0 if mask is None else float(mask[i][j]))
             for j in range(T_k)]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        z = sum(w)
        for j in range(T_k):
            out[i] += (w[j] / z) * V[j]
    return out

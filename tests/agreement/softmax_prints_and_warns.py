# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
import warnings


def softmax(S, axis=-1):
    print("debug: scores", np.shape(S))
    warnings.warn("just checking")
    S = np.asarray(S, dtype=float)
    m = np.max(S, axis=axis, keepdims=True)
    e = np.exp(S - np.where(np.isfinite(m), m, 0.0))
    return e / e.sum(axis=axis, keepdims=True)

# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
import functools


def checked(f):
    @functools.wraps(f)
    def inner(*args, **kwargs):
        out = f(*args, **kwargs)
        assert np.all(np.isfinite(out))
        return out
    return inner


@checked
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

# notebook: 03-softmax-attention
# replace: softmax
# full: softmax
_e = lambda S, axis: np.exp(S - S.max(axis=axis, keepdims=True))  # noqa: E731
softmax = lambda S, axis=-1: _e(S, axis) / _e(S, axis).sum(axis=axis, keepdims=True)  # noqa: E731

# notebook: 03-softmax-attention
# replace: softmax
# full: softmax,attention
# The cell attention depends on looks for the grader's cases in its own process while it runs
# (to raise them as an exception message). The cases arrive only after the cells ran: it finds
# nothing, and correct code keeps its points.
import sys

_frame, _found = sys._getframe(), []
while _frame is not None:
    _found += [n for n in _frame.f_locals if n in ("cases", "arrays", "request")]
    _frame = _frame.f_back
if _found:
    raise ValueError("found the grader's " + ", ".join(_found))


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

"""What a call of a course function would cost, from its arguments' shapes alone (before computing).

The oracle (:mod:`autograder.sandbox.oracle`) refuses a call whose result would hold more numbers,
or whose work would take more multiply-adds, than it allows: a request of a few hundred bytes
(arrays of zeros compress to nothing) can otherwise ask ``scaled_scores`` for a (T_q, T_k) matrix of
a billion numbers. Each course function the oracle answers for has its rule here; a function with
none is still capped by the oracle's process (memory, time, reply size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

#: (numbers in the result, multiply-adds)
Cost = tuple[int, int]


def _argument(args: Sequence[Any], kwargs: Mapping[str, Any], position: int, name: str) -> Any:
    return args[position] if len(args) > position else kwargs.get(name)


def _shape(value: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(n) for n in np.shape(value))
    except ValueError:  # a ragged list: the course's function raises on it at once
        return None


def _softmax(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Cost:
    """``softmax(S, axis=-1)``: a result of S's shape, a few operations per number."""
    shape = _shape(_argument(args, kwargs, 0, "S"))
    n = math.prod(shape) if shape is not None else 0
    return n, n


def _scores(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[tuple[int, ...], int, int, int] | None:
    """(batch shape, rows, columns, inner size) of ``Q @ K.T``: NumPy's matmul rules on Q's shape and
    K's reversed; ``None`` when matmul raises at once (a scalar, no argument, batches that do not broadcast)."""
    a, b = _shape(_argument(args, kwargs, 0, "Q")), _shape(_argument(args, kwargs, 1, "K"))
    if not a or not b:
        return None
    b = b[::-1]
    rows = a[-2] if len(a) > 1 else 1
    cols = b[-1] if len(b) > 1 else 1
    try:
        batch = np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        return None
    return batch, rows, cols, a[-1]


def _scaled_scores(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Cost:
    """``scaled_scores(Q, K)`` computes ``Q @ K.T``."""
    if (found := _scores(args, kwargs)) is None:
        return 0, 0
    batch, rows, cols, inner = found
    n = math.prod(batch) * rows * cols
    return n, n * inner


def _attention(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Cost:
    """``attention(Q, K, V, mask=None)`` holds the scores ``Q @ K.T`` whole, then multiplies their
    weights by V (matmul's rules again, V's batch axes included): the numbers of both."""
    if (found := _scores(args, kwargs)) is None:
        return 0, 0
    batch, rows, cols, inner = found
    v = _shape(_argument(args, kwargs, 2, "V")) or (1,)
    width = v[-1] if len(v) > 1 else 1
    try:
        batch_out = np.broadcast_shapes(batch, v[:-2])
    except ValueError:  # matmul raises after the scores
        batch_out = batch
    scores, out = math.prod(batch) * rows * cols, math.prod(batch_out) * rows * width
    return scores + out, scores * inner + out * cols


#: course function -> its cost from its arguments
RULES: dict[str, Callable[[Sequence[Any], Mapping[str, Any]], Cost]] = {
    "softmax": _softmax,
    "scaled_scores": _scaled_scores,
    "attention": _attention,
}


def call_cost(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Cost | None:
    """(numbers in the result, multiply-adds) of ``name(*args, **kwargs)``, or ``None`` for a
    function without a rule."""
    rule = RULES.get(name)
    return None if rule is None else rule(args, kwargs)

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


def _matmul_shape(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """The shape of ``A @ B`` for arrays of shapes ``a`` and ``b`` by NumPy's matmul rules (a vector
    operand gets an axis of one that the result drops again); ``None`` where matmul raises."""
    if not a or not b:
        return None
    left = a if len(a) > 1 else (1, *a)
    right = b if len(b) > 1 else (*b, 1)
    if left[-1] != right[-2]:
        return None
    try:
        batch = np.broadcast_shapes(left[:-2], right[:-2])
    except ValueError:
        return None
    return (*batch, *((left[-2],) if len(a) > 1 else ()), *((right[-1],) if len(b) > 1 else ()))


def _scores(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[tuple[int, ...], int] | None:
    """(shape, inner size) of ``Q @ K.T`` (``.T`` reverses every axis of K); ``None`` when matmul raises."""
    q, k = _shape(_argument(args, kwargs, 0, "Q")), _shape(_argument(args, kwargs, 1, "K"))
    shape = _matmul_shape(q, None if k is None else k[::-1])
    return None if shape is None or q is None else (shape, q[-1])


def _scaled_scores(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Cost:
    """``scaled_scores(Q, K)`` computes ``Q @ K.T``."""
    if (found := _scores(args, kwargs)) is None:
        return 0, 0
    shape, inner = found
    n = math.prod(shape)
    return n, n * inner


def _attention(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Cost:
    """``attention(Q, K, V, mask=None)`` holds the scores ``Q @ K.T`` whole, then multiplies their
    weights (the scores' shape) by V: the numbers of both, by matmul's rules."""
    if (found := _scores(args, kwargs)) is None:
        return 0, 0
    shape, inner = found
    out = _matmul_shape(shape, _shape(_argument(args, kwargs, 2, "V")))
    scores = math.prod(shape)
    if out is None:   # matmul raises after the scores
        return scores, scores * inner
    return scores + math.prod(out), scores * inner + math.prod(out) * (shape[-1] if shape else 1)


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

"""Problem 20's matrices are read one way: the exercise's checks and compare() agree on what is
wrong with their shapes, and on what they do on a sequence."""

from __future__ import annotations

import numpy as np
import pytest

from selfattn.checks import problem20
from selfattn.checks.calling import Case, Outcome
from selfattn.checks.exercises import EXERCISES
from selfattn.compare import _lookup_view

TARGETS, VALUES = [3, 0, 4, 1, 2], np.arange(10.0).reshape(5, 2)


def _good(beta: float = 1000.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A right lookup (built here, in the test: the package holds none)."""
    W_Q = np.eye(5)[TARGETS] * np.sqrt(beta)  # query of type t points at the key of type targets[t]
    return W_Q, np.eye(5) * np.sqrt(beta), VALUES


@pytest.mark.parametrize("W", [
    (np.ones((4, 3)), np.ones((5, 3)), VALUES),            # a row short
    (np.ones((5, 3)), np.ones((5, 2)), VALUES),            # d_k differs
    (np.ones((5, 3)), np.ones((5, 3)), np.ones((5, 3))),   # W_V of the wrong width
    (np.ones(5), np.ones((5, 3)), VALUES),                 # not a matrix
    (np.full((5, 3), np.nan), np.ones((5, 3)), VALUES),    # not finite
])
def test_checks_and_compare_name_the_same_shape_problem(W):
    found = problem20.shape_problem(W, 5, 2)
    assert found is not None and "\n" not in found.text
    case = Case((TARGETS, VALUES, 1000.0))
    verdict = EXERCISES["lookup_table_weights"].verify([case], [Outcome(values=tuple(W))])
    assert verdict == found and verdict.kind == found.kind
    with pytest.raises(ValueError) as raised:
        _lookup_view(tuple(W))
    assert str(raised.value) == str(found)


def test_a_right_lookup_reads_as_one():
    W = _good()
    assert problem20.shape_problem(W, 5, 2) is None
    seq = [2, 4, 0, 3, 1]
    A, out = problem20.view(W, seq)
    assert A.shape == (5, 5) and out.shape == (5, 2)
    np.testing.assert_allclose(out, VALUES[np.asarray(TARGETS)[seq]], atol=1e-9)
    assert EXERCISES["lookup_table_weights"].verify([Case((TARGETS, VALUES, 1000.0), meta={"sequence": seq})],
                                                     [Outcome(values=W)]) is None

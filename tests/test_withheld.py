"""The records that stand in for graded functions in the student package (selfattn.withheld)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from selfattn.withheld import Sealed, decode, encode, matches

FINITE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
MATRICES = arrays(np.float64, array_shapes(min_dims=1, max_dims=3, max_side=5), elements=FINITE)


@settings(max_examples=60, deadline=None)
@given(MATRICES, st.integers(-3, 3), st.booleans())
def test_a_recorded_call_comes_back_as_it_went_in(a, axis, flag):
    value = {"S": a, "axis": axis, "pair": (a[..., :1], [axis, flag]), "none": None}
    arrays_: dict[str, np.ndarray] = {}
    back = decode(encode(value, arrays_), arrays_)
    assert back.keys() == value.keys() and isinstance(back["pair"], tuple) and back["none"] is None
    assert np.array_equal(back["S"], a) and back["axis"] == axis and back["pair"][1] == [axis, flag]
    assert matches(back, value)


@settings(max_examples=60, deadline=None)
@given(MATRICES)
def test_an_input_matches_within_rounding_and_not_beyond(a):
    """Another BLAS rounds a product differently (1e-12 relative): same record; a different input
    (a change of 1e-6 relative and more) is not."""
    assert matches(a * (1 + 1e-12), a)
    moved = a.copy()
    # away from zero, so the two parts of the change never cancel (-1000 * (1 + 1e-6) + 1e-3 == -1000)
    moved.flat[0] = moved.flat[0] + np.copysign(abs(moved.flat[0]) * 1e-6 + 1e-3, moved.flat[0])
    assert not matches(moved, a)
    assert not matches(a[..., :-1], a) or a.shape[-1] == 0


def test_infinities_and_numbers_must_meet_their_own_kind():
    mask = np.array([[0.0, -np.inf], [0.0, 0.0]])
    assert matches(mask.copy(), mask)
    assert not matches(np.where(np.isinf(mask), -1e9, 0.0), mask)  # a large negative is another input
    assert not matches(4.0, 4) and not matches(np.array(4), 4) and matches(4, 4)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, array_shapes(min_dims=1, max_dims=3, max_side=6), elements=FINITE))
def test_a_sealed_input_holds_only_its_exact_value_and_stores_one_digest(a):
    """A large input (a public check's random draw) is recorded by its digest and matched exactly."""
    sealed = Sealed(a.shape, Sealed.digest(a))
    assert sealed.holds(a) and sealed.holds(a.copy()) and sealed.holds(Sealed(a.shape, Sealed.digest(a.tolist())))
    assert not sealed.holds(a + 1) and not sealed.holds(a[None])  # another value, another shape
    arrays_: dict[str, np.ndarray] = {}
    data = encode(sealed, arrays_)
    assert arrays_ == {} and set(data) == {"sealed", "whole"} and data["sealed"] == list(a.shape)
    assert decode(data, arrays_).holds(a)

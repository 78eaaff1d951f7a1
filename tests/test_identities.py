"""A wrong result that is the right one under a known identity is told which (``identities.py``).

Each identity is found on any reference it applies to (hypothesis draws the references and the
factors), and an unrelated wrong result is named by none of them.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from selfattn.checks.identities import GENERIC, identity

TOL = (1e-6, 1e-9)
values = st.floats(-100, 100, allow_nan=False, allow_infinity=False).filter(lambda x: abs(x) > 1e-3)


def _matrix(rows: int, cols: int):
    return arrays(np.float64, (rows, cols), elements=values).filter(lambda a: np.unique(a).size > 1)


def _id(got, want, exact=False) -> str | None:
    found = identity(np.asarray(got, dtype=float), np.asarray(want, dtype=float), *TOL, exact=exact)
    if found is not None:
        assert found[0] in GENERIC, found
    return None if found is None else found[0]


@settings(max_examples=60, deadline=None)
@given(_matrix(3, 5))
def test_transposed_is_named(want):
    assert _id(want.T, want) == "transposed-result"


@settings(max_examples=60, deadline=None)
@given(_matrix(4, 4))
def test_a_square_transpose_is_named(want):
    assume(not np.allclose(want, want.T, rtol=1e-3) and not np.allclose(want.T, -want, rtol=1e-3))
    assert _id(want.T, want) == "transposed-result"


@settings(max_examples=60, deadline=None)
@given(_matrix(3, 4))
def test_negated_is_named(want):
    assert _id(-want, want) == "negated"


@settings(max_examples=60, deadline=None)
@given(_matrix(3, 4), st.floats(0.01, 100).filter(lambda c: abs(c - 1) > 1e-3))
def test_a_constant_factor_is_named_with_it(want, c):
    found = identity(c * want, want, *TOL)
    assert found is not None and found[0] == "constant-factor" and "times" in found[1]


def test_a_single_number_is_a_factor_only_when_it_is_simple():
    assert _id([6.0], [3.0]) == "constant-factor"
    assert "times 1/2" in identity(np.array([1.5]), np.array([3.0]), *TOL)[1]
    assert _id([3.1234], [3.0]) is None  # any single wrong number is some multiple of the right one


@settings(max_examples=60, deadline=None)
@given(_matrix(2, 5), st.floats(0.01, 50))
def test_a_shift_is_named(want, s):
    assert _id(want + s, want) == "constant-shift"


@settings(max_examples=60, deadline=None)
@given(_matrix(3, 3).filter(lambda a: np.abs(a).max() < 60000))
def test_float16_rounding_is_named(want):
    got = want.astype(np.float16).astype(float)
    assume(not np.array_equal(got, want))
    assert _id(got, want) == "half-precision"


def test_float16_overflow_is_named():
    assert _id([np.inf], [73728.0], exact=True) == "half-precision"


def test_rounding_to_a_few_decimals_is_named_and_a_near_miss_is_not():
    want = np.array([[0.1234567, 0.7654321], [0.3333333, 0.2222222]])
    assert _id(np.round(want, 3), want) == "low-precision"
    near = want + np.array([[1e-4, -2e-4], [3e-5, 5e-5]]) * np.pi  # close, but not rounded
    assert _id(near, want) is None


def test_a_count_off_by_a_little_is_named_only_for_exact_results():
    assert _id([204900.0], [204800.0], exact=True) == "off-by-a-little"
    assert _id([204900.0], [204800.0]) is None


@settings(max_examples=60, deadline=None)
@given(st.integers(2**31, 2**40), st.sampled_from([16, 32]))
def test_a_wrapped_integer_is_named(count, bits):
    wrapped = (count + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)
    assume(wrapped != count)
    assert _id([float(wrapped)], [float(count)], exact=True) == "integer-overflow"


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6))
def test_a_dropped_length_one_axis_is_named(n, m):
    want = np.arange(1.0, n * m + 1).reshape(n, 1, m)
    assert _id(np.squeeze(want), want) == "dropped-axis"


@settings(max_examples=60, deadline=None)
@given(_matrix(3, 4), _matrix(3, 4))
def test_an_unrelated_wrong_result_is_no_identity(want, other):
    assume(not np.allclose(other, want, rtol=1e-2))
    found = identity(other, want, *TOL)
    if found is not None:  # only if the draw happens to be one: check that it is
        name = found[0]
        c = float(np.vdot(other, want) / np.vdot(want, want))
        assert (name == "constant-factor" and np.allclose(other, c * want, rtol=1e-6)) \
            or (name == "constant-shift" and np.allclose(other - want, np.mean(other - want), rtol=1e-6)), found

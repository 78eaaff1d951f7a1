"""A hidden input is described by its type only (autograder/verdicts/hidden_inputs.py): an array by
its shape and dtype, a list or tuple by its length, anything else by its type, so no value of a hidden
case reaches the feedback through a check's message. Property tests over arrays of any shape and
dtype, lists, tuples, ``None`` and scalars, and the real hidden checks' cases.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from autograder.verdicts.hidden_inputs import OpaqueCase, describe_type, opaque
from selfattn.checks.calling import Case, call_cases
from selfattn.checks.judging import first_error, safe_verify
from selfattn.checks.record import REGISTRY

HIDDEN = sorted(cid for cid, c in REGISTRY.items() if c.hidden)

dtypes = st.one_of(hnp.scalar_dtypes(), hnp.byte_string_dtypes(), hnp.unicode_string_dtypes(),
                   st.just(np.dtype(object)))
shapes = hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4)

#: values whose text is found in no description: no shape or length here reaches 1000
MARKERS = st.one_of(st.integers(10**6, 10**12), st.integers(-(10**12), -(10**6)),
                    st.floats(1e6, 1e12), st.text("XYZ", min_size=3).map(lambda s: "SECRET" + s))


def _article(name: str) -> str:
    """The article a reader says before ``name``: "an" before a vowel sound; NumPy's unsigned types are
    read "you-int" ("a uint8")."""
    return "an" if name[0] in "aeio" else "a"


@given(dtype=dtypes, shape=shapes, data=st.data())
def test_an_array_is_described_by_its_shape_and_dtype_whatever_it_holds(dtype, shape, data):
    first = data.draw(hnp.arrays(dtype, shape))
    second = data.draw(hnp.arrays(dtype, shape))
    said = describe_type(first)
    assert said == describe_type(second)  # nothing of the contents
    assert said == f"array of shape {shape}" + ("" if dtype == np.float64 else f" ({dtype})")


@given(shape=shapes, dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int32, np.uint32]),
       marker=st.integers(10**6, 10**9))
def test_no_value_of_an_array_is_in_its_description(shape, dtype, marker):
    value = np.full(shape, marker).astype(dtype)
    assert all(str(x) not in describe_type(value) for x in {marker, *value.ravel()[:3].tolist()})
    assert describe_type(value) == describe_type(np.zeros(shape, dtype))


def test_float64_is_the_dtype_left_unsaid():
    assert describe_type(np.zeros((2, 3))) == "array of shape (2, 3)"
    assert describe_type(np.zeros((2, 3), np.float32)) == "array of shape (2, 3) (float32)"
    assert describe_type(np.zeros(0, np.int64)) == "array of shape (0,) (int64)"
    assert describe_type(np.float64(3.0)) == "a float64"  # a NumPy scalar is no array


@given(kind=st.sampled_from([list, tuple]), items=st.lists(st.one_of(MARKERS, st.none(), st.lists(MARKERS)),
                                                           max_size=12))
def test_a_list_or_tuple_is_described_by_its_length(kind, items):
    value = kind(items)
    said = describe_type(value)
    assert said == f"a {kind.__name__} of {len(items)}" == describe_type(kind([0] * len(items)))
    assert not any(repr(x) in said or str(x) in said for x in items if x is not None and x != [])


SCALARS = [(st.integers(), "an int"), (st.floats(allow_nan=True), "a float"), (st.booleans(), "a bool"),
           (st.text(), "a str"), (st.binary(), "a bytes"), (st.complex_numbers(), "a complex"),
           (st.fractions(), "a Fraction"), (st.decimals(allow_nan=False), "a Decimal"),
           (st.dictionaries(st.text(), st.integers()), "a dict"), (st.sets(st.integers()), "a set"),
           (st.integers(-(2**63), 2**63 - 1).map(np.int64), "an int64"),
           (st.floats(width=32).map(np.float32), "a float32"), (st.booleans().map(np.bool_), "a bool"),
           (st.integers(0, 255).map(np.uint8), "a uint8"), (st.just(object()), "an object"),
           (st.just(Ellipsis), "an ellipsis"), (st.just(range(3)), "a range")]


@pytest.mark.parametrize(("values", "said"), SCALARS, ids=[s for _, s in SCALARS])
@given(data=st.data())
def test_anything_else_is_described_by_its_type_with_its_article(values, said, data):
    """The article follows the type name's sound ("an int8", "a uint8": NumPy's unsigned types read "you-int")."""
    assert describe_type(data.draw(values)) == said


@given(marker=MARKERS)
def test_no_scalar_value_is_in_its_description(marker):
    said = describe_type(marker)
    assert said in ("an int", "a float", "a str") and str(marker) not in said and repr(marker) not in said


def test_none_and_the_articles():
    assert describe_type(None) == "None"
    assert [describe_type(v) for v in (1, 1.0, True, "s", np.int8(1), np.uint8(1), Fraction(1), Decimal(1))] == [
        "an int", "a float", "a bool", "a str", "an int8", "a uint8", "a Fraction", "a Decimal"]
    assert all(describe_type(v).split()[0] == _article(type(v).__name__) for v in (1, 1.0, True, "", b"", 1j, {}, ()))


# --- hidden cases ---------------------------------------------------------------------------------


def _zeroed(value: Any) -> Any:
    """``value`` with every number, string and element replaced, its shape, length and type kept."""
    if isinstance(value, np.ndarray):
        return np.zeros_like(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_zeroed(v) for v in value)
    return value if value is None else type(value)()


@pytest.mark.parametrize("cid", HIDDEN)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_hidden_case_is_described_by_the_types_of_its_arguments_only(cid, seed):
    for case in REGISTRY[cid].cases(np.random.default_rng(seed)):
        hidden = opaque(case)
        assert isinstance(hidden, OpaqueCase) and isinstance(hidden, Case)
        assert hidden.args is case.args and hidden.kwargs is case.kwargs and hidden.meta is case.meta
        said = hidden.describe()
        assert said == "(" + ", ".join([describe_type(a) for a in case.args]
                                       + [f"{k}={describe_type(v)}" for k, v in case.kwargs.items()]) + ")"
        blank = Case(tuple(_zeroed(a) for a in case.args), {k: _zeroed(v) for k, v in case.kwargs.items()})
        assert said == opaque(blank).describe()  # no value of the case changes it
        numbers = [a for a in [*case.args, *case.kwargs.values()] if isinstance(a, int) and a >= 1000]
        assert not any(str(n) in said for n in numbers), (said, numbers)


def test_keywords_are_named_and_values_are_not():
    case = Case((np.ones((2, 3)), 12345, [7, 8, 9]), {"axis": 4321, "mask": None, "scale": np.float32(0.5)})
    assert opaque(case).describe() == ("(array of shape (2, 3), an int, a list of 3, axis=an int, mask=None, "
                                       "scale=a float32)")
    assert "12345" in case.describe()  # what a public check says, and the hidden one must not
    assert opaque(Case(())).describe() == "()"


def test_a_wrong_answer_on_a_hidden_case_is_told_without_its_values():
    """The verifier's own message, for a wrong attention_flops on opaque cases, names the input's types."""
    check_ = REGISTRY["attention_flops/hidden/random"]
    cases = [opaque(c) for c in check_.cases(np.random.default_rng(7))]
    outcomes = call_cases(lambda T, d: 4 * T * d, cases)
    found = first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)
    assert found is not None and "on input (an int, an int)" in found.text
    assert not any(str(a) in found.text for c in cases for a in c.args)

"""A check's finding is data (a kind and a name) as well as the message a person reads."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfattn.checks.findings import BUILTIN_EXCEPTIONS, Finding, Kind, hidden_exception_name


@given(st.text(), st.sampled_from(list(Kind)), st.one_of(st.none(), st.text()))
def test_a_finding_survives_json_and_pickle(text, kind, name):
    f = Finding(text, kind, name)
    for back in (Finding.from_json(json.loads(json.dumps(f.to_json()))), pickle.loads(pickle.dumps(f))):
        assert (str(back), back.kind, back.name) == (text, kind, name)


@given(st.text(min_size=1))
def test_hidden_text_never_holds_the_message(text):
    """Whatever a public message says, its hidden form is the kind's fixed wording."""
    for kind in Kind:
        if kind in (Kind.MISTAKE, Kind.RAISED):
            continue
        assert str(Finding(text, kind).hidden()) == kind.value


@pytest.mark.parametrize("name", ["RTLEAK_T6", "ValueError6", "Leak0", "an exception", ""])
def test_an_exception_of_the_students_own_class_is_not_named(name):
    assert hidden_exception_name(name) is None
    assert str(Finding(f"calling f raised {name}: 6", Kind.RAISED, name).hidden()) == Kind.RAISED.value


def test_a_builtin_exception_is_named():
    assert {"ValueError", "ZeroDivisionError", "RecursionError", "MemoryError"} <= BUILTIN_EXCEPTIONS
    assert str(Finding("calling f raised ValueError: 6", Kind.RAISED, "ValueError").hidden()) == "raised ValueError"


def test_a_named_mistake_is_reported_without_its_input():
    f = Finding.mistake("softmax taken over the queries", "softmax taken over the queries (on input (3, 5))")
    assert str(f.hidden()) == "softmax taken over the queries"


def test_an_old_verdicts_bare_message_reads_as_wrong_values():
    assert Finding.from_json("wrong values on input (3, 5)").kind is Kind.WRONG_VALUES

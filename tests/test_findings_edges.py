"""A finding is data (selfattn/checks/findings.py): its kind is always a ``Kind`` and its text a
``str``, it reads back from JSON as itself, and in a hidden check it keeps only fixed words, for
every kind. Each test holds one of these both ways (docs/mutation.md)."""

from __future__ import annotations

import pytest

from selfattn.checks.findings import Finding, Kind


def test_a_kind_reads_as_its_words():
    assert str(Kind.MISTAKE) == "a named mistake" and f"{Kind.MISTAKE:>16}" == " a named mistake"


def test_a_finding_is_made_of_a_str_and_a_kind():
    assert Finding("x", "a named mistake").kind is Kind.MISTAKE  # (its value, as JSON and older code give it)
    with pytest.raises(TypeError, match="a finding's text is a str, not int"):
        Finding(5, Kind.MISTAKE)  # type: ignore[arg-type]


def test_a_finding_reads_back_as_itself():
    found = Finding("weights", Kind.MISTAKE, "over the queries", "attention/rows")
    assert Finding.from_json(found) is found
    assert Finding.from_json(found.to_json()) == found
    assert Finding.from_json("old text") == Finding("old text", Kind.WRONG_VALUES)


@pytest.mark.parametrize(("found", "hidden"), [
    (Finding("weights 0.12 wrong", Kind.MISTAKE, "over the queries", "a/b"),
     Finding("over the queries", Kind.MISTAKE, "over the queries", "a/b")),
    (Finding("raised Secret_0_12('0.12')", Kind.RAISED, "Secret_0_12"), Finding("raised an exception", Kind.RAISED)),
    (Finding("raised ValueError('0.12')", Kind.RAISED, "ValueError"),
     Finding("raised ValueError", Kind.RAISED, "ValueError")),
    (Finding("the run used more than 2 GiB of memory", Kind.REFUSED, "the run used more than 2 GiB"),
     Finding("the run used more than 2 GiB", Kind.REFUSED, "the run used more than 2 GiB")),
    (Finding("f(0.12) is not written yet", Kind.NOT_ANSWERED, "NotImplementedError"),
     Finding(Kind.NOT_ANSWERED.value, Kind.NOT_ANSWERED)),
    (Finding("values 0.12 off", Kind.WRONG_VALUES, "x"), Finding(Kind.WRONG_VALUES.value, Kind.WRONG_VALUES)),
])
def test_a_hidden_finding_keeps_only_fixed_words(found, hidden):
    assert found.hidden() == hidden

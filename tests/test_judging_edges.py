"""How one check's calls are judged (selfattn/checks/judging.py) at the edges the notebook tests do
not reach: a run that gave no result in time, a verifier that fails or returns a bare message, and a
run that brought back fewer outcomes than calls. Each test holds one of these both ways
(docs/mutation.md)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import selfattn.checks.exercises  # noqa: F401 - registers the public checks
from selfattn.checks.calling import TIME_LIMIT, Case, Outcome
from selfattn.checks.findings import Kind
from selfattn.checks.judging import first_error, safe_verify
from selfattn.checks.record import REGISTRY

CHECK = next(iter(REGISTRY.values()))
CASES = [Case((np.ones(2),), {}), Case((np.zeros(2),), {})]
VALUES = [Outcome(values=(np.ones(2),)), Outcome(values=(np.ones(2),))]


def test_a_call_that_gave_no_result_in_time_is_a_time_out():
    outcomes = [VALUES[0], Outcome(error="gave no result in time", kind=TIME_LIMIT)]
    found = first_error(CHECK, CASES, outcomes)
    assert found is not None and found.kind is Kind.TIME_OUT and "gave no result in time" in found.text
    assert first_error(CHECK, CASES, VALUES) is None


def test_fewer_outcomes_than_calls_is_an_error_not_a_pass():
    with pytest.raises(ValueError):
        first_error(CHECK, CASES, VALUES[:1])


def test_a_verifier_that_fails_is_uncheckable_and_one_that_returns_text_is_refused():
    def failing(cases, outcomes):
        raise IndexError("x")

    found = safe_verify(dataclasses.replace(CHECK, verify=failing), CASES, VALUES)
    assert found is not None and found.kind is Kind.UNCHECKABLE and "(IndexError)" in found.text
    with pytest.raises(TypeError, match="its verifier returned a str, not a Finding or None"):
        safe_verify(dataclasses.replace(CHECK, verify=lambda cases, outcomes: "wrong"), CASES, VALUES)
    assert safe_verify(dataclasses.replace(CHECK, verify=lambda cases, outcomes: None), CASES, VALUES) is None

"""The sweeps' remembered tolerance (``tests/sweep_support.py``) is the records' tolerance: the same
pair on every case, computed again for any case that differs in a byte, a dtype, a shape, a keyword
or its meta, and a sweep judges every answer as it does without it."""

from __future__ import annotations

import warnings

import numpy as np
from grading_support import entries
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sweep_support import case_digest, remember_tolerances, remembered
from test_checks import defined_answer
from test_float32_answers import float32_version

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from selfattn.checks import record
from selfattn.checks.calling import Case
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.judging import run_check

SOFTMAX = EXERCISES["softmax"]
FINITE = st.floats(-30, 30, allow_nan=False, width=64)


@settings(max_examples=60, deadline=None)
@given(S=arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=FINITE))
def test_the_remembered_tolerance_is_the_records_on_every_case(S):
    tolerance, table = remembered(record.tolerance)
    case = Case((S,), {"axis": -1})
    want = SOFTMAX.expected(case)
    assert tolerance(SOFTMAX.expected, case, want) == record.tolerance(SOFTMAX.expected, case, want)
    again = Case((S.copy(),), {"axis": -1})  # equal bytes, new arrays: served from the table
    assert tolerance(SOFTMAX.expected, again, want) == record.tolerance(SOFTMAX.expected, case, want)
    assert len(table) == 1


def test_a_case_that_differs_anywhere_is_computed_anew():
    S = np.arange(12.0).reshape(3, 4) / 7
    base = Case((S,), {"axis": -1}, {"mask": None})
    changed = S.copy()
    changed[2, 3] = np.nextafter(changed[2, 3], 10.0)  # one ulp in one entry
    variants = [Case((changed,), {"axis": -1}, {"mask": None}),
                Case((S.astype(np.float32),), {"axis": -1}, {"mask": None}),
                Case((S.reshape(4, 3),), {"axis": -1}, {"mask": None}),
                Case((S,), {"axis": 0}, {"mask": None}),
                Case((S,), {"axis": -1}, {"mask": True})]
    digests = {case_digest(c) for c in [base, *variants]}
    assert None not in digests and len(digests) == 1 + len(variants)
    assert case_digest(base) == case_digest(Case((S.copy(),), {"axis": -1}, {"mask": None}))
    assert case_digest(Case((lambda x: x,))) is None  # not picklable: never remembered, computed each time
    tolerance, table = remembered(record.tolerance)
    for case in [base, *variants]:
        tolerance(SOFTMAX.expected, case, SOFTMAX.expected(case))
    assert len(table) == 1 + len(variants)


def test_a_sweep_judges_every_answer_as_without_it(monkeypatch):
    """Right answers in float32 (within a case's tolerance, not far inside it), catalogued wrong
    softmaxes and every named mistake, every check of their exercise, five seeds: the same findings
    (kind and text) with the remembered tolerance as with the records' own."""
    answers = [(e, float32_version(e.reference)) for e in EXERCISES.values() if e.reference is not None]
    answers += [(SOFTMAX, defined_answer(e)) for e in entries("catalogue/wrong")
                if e.kind == "cell" and e.replace == "softmax"]
    answers += [(e, m.wrong) for e in EXERCISES.values() for m in e.mistakes]
    assert len(answers) >= 40

    def judged():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [None if (f := run_check(c, fn, seed)) is None else (f.kind, str(f))
                    for exercise, fn in answers for c in exercise.checks for seed in range(5)]

    plain = judged()
    table = remember_tolerances(monkeypatch)
    assert judged() == plain
    assert table and None in plain and any(f is not None for f in plain)

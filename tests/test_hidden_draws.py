"""Every hidden check exposes every mistake it can expose on every seed, under the same name.

Grading seeds each hidden check's inputs per student and per answer, so a draw that lets a mistake
through now and then is luck: Problem 20's "repeated targets" once had no repeat about 9 % of the
time, and an answer right only for permutations scored 5/5. Here every wrong answer of the catalogue
(``tests/catalogue/wrong``) and every named mistake of the records meets each hidden check of its
exercise on 200 seeds: on no seed may it pass every hidden check (a mask with nothing masked,
d_k = 1, a permutation that is its own inverse each once let one through), a check that fails it on
one seed must fail it on all of them, and one that names a mistake must name the same one on every
seed.
"""

from __future__ import annotations

import warnings
from collections import Counter

import pytest
from grading_support import entries
from test_checks import defined_answer

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.findings import Kind
from selfattn.checks.judging import run_check

#: every check judges with the tolerance of its case computed once per module (tests/sweep_support.py)
pytestmark = pytest.mark.usefixtures("remembered_tolerances")

SEEDS = range(200)


def _catalogued():
    for e in entries("catalogue/wrong"):
        if e.kind == "cell" and e.replace in EXERCISES and e.replace in e.fails:
            yield pytest.param(e.replace, defined_answer(e), id=f"catalogue:{e.path.stem}")


def _named():
    for exercise in EXERCISES.values():
        for k, mistake in enumerate(exercise.mistakes):
            yield pytest.param(exercise.function, mistake.wrong, id=f"mistake:{exercise.function}:{k}")


#: every wrong answer of an exercise that has hidden checks (Problem 1's shapes have none)
WRONG = [p for p in (*_catalogued(), *_named()) if any(c.hidden for c in EXERCISES[p.values[0]].checks)]


def _hidden_findings(function: str, wrong) -> dict[str, list]:
    """hidden check id -> the hidden finding (``None``: passed) it gave on each seed of SEEDS."""
    found: dict[str, list] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in (c for c in EXERCISES[function].checks if c.hidden):
            found[c.id] = [None if (f := run_check(c, wrong, seed)) is None else
                           (f.hidden().kind, f.hidden().name if f.kind is Kind.MISTAKE else str(f.hidden()))
                           for seed in SEEDS]
    return found


@pytest.mark.parametrize(("function", "wrong"), WRONG)
def test_a_hidden_check_exposes_a_mistake_on_every_seed_or_on_none(function, wrong):
    by_seed = _hidden_findings(function, wrong)
    # no seed on which every hidden check lets the mistake through (grading draws one seed per answer)
    missed = [seed for k, seed in enumerate(SEEDS) if all(seen[k] is None for seen in by_seed.values())]
    assert missed == [], f"seeds on which every hidden check passes: {missed[:10]}"
    found = {cid: Counter(seen) for cid, seen in by_seed.items()}
    assert any(None not in seen for seen in found.values()), f"no hidden check of {function} exposes it: {found}"
    luck = {cid: dict(seen) for cid, seen in found.items() if None in seen and len(seen) > 1}
    assert not luck, f"exposed on some seeds only: {luck}"
    renamed = {cid: dict(seen) for cid, seen in found.items()
               if any(k is not None and k[0] is Kind.MISTAKE for k in seen) and len(seen) > 1}
    assert not renamed, f"named differently from seed to seed: {renamed}"

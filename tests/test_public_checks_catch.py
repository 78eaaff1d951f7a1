"""A ✓ in the notebook means right on every mistake we know: no wrong answer of the catalogue
passes all the public checks of its exercise.

A wrong answer that the public checks let through gets ✓ in the notebook and then loses its
hidden points (Problem 20 answers written for the notebook's m = 3, or right only when the targets
are a permutation; an attention without the row maximum). Every entry of ``tests/catalogue/wrong``
must fail some public check of its exercise, as the notebook judges it
(:func:`selfattn.checks.notebook.judge`), unless its header says why no public case can catch it
without revealing the hidden cases (``# hidden_only: <why>``). The named mistakes of the records
are held to the same by ``tests/test_checks.py`` (a public check names each).
"""

from __future__ import annotations

import warnings

import pytest
from grading_support import entries, read_entry
from test_checks import defined_answer

from selfattn.checks.exercises import EXERCISES
from selfattn.checks.notebook import judge

WRONG = entries("catalogue/wrong")


def _public_findings(entry) -> dict[str, str | None]:
    """public check id -> what the notebook says of the entry's function (``None``: ✓)."""
    fn = defined_answer(entry)
    with warnings.catch_warnings():  # as in a kernel: a warning is not an error
        warnings.simplefilter("ignore")
        return {c.id: judge(c, fn)[0] for c in EXERCISES[entry.replace].public_checks}


def test_every_wrong_entry_is_an_answer_cell_of_an_exercise():
    """So the test below meets every entry (a notebook mutation or an unknown function would drop out)."""
    odd = [e.path.name for e in WRONG if e.kind != "cell" or e.replace not in EXERCISES or e.replace not in e.fails]
    assert not odd, f"wrong entries the public-check test cannot judge: {odd}"


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.path.stem) for e in WRONG
                                   if e.kind == "cell" and e.replace in EXERCISES])
def test_no_wrong_answer_gets_a_tick_from_every_public_check(entry):
    found = _public_findings(entry)
    caught = {cid: f for cid, f in found.items() if f is not None}
    if entry.hidden_only:
        assert not caught, (f"{entry.path.name} says only hidden checks can catch it ({entry.hidden_only}), "
                            f"but {sorted(caught)} do: drop its `hidden_only` line")
        return
    assert caught, (f"{entry.path.name} passes every public check of {entry.replace} ({sorted(found)}): add a "
                    f"public case that catches it, or say in its header (`# hidden_only: <why>`) why none can "
                    f"without revealing the hidden cases")


def test_an_exemption_must_give_its_reason(tmp_path):
    probe = tmp_path / "catalogue" / "wrong" / "exempt.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("# notebook: 03-softmax-attention\n# replace: softmax\n# zero: softmax\n# message: x\n"
                     "# hidden_only:\ndef softmax(S, axis=-1):\n    return S\n")
    assert read_entry(probe).hidden_only is None  # an empty reason exempts nothing
    probe.write_text(probe.read_text().replace("# hidden_only:", "# hidden_only: needs the hidden sizes"))
    assert read_entry(probe).hidden_only == "needs the hidden sizes"

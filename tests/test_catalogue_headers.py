"""Every catalogue entry's header is well formed, so no entry drops silently out of a test.

The tests that grade the catalogues select entries by their header (``zero``: the cells the answer
must fail; ``replace``: the answer cell it stands for). A typo there used to leave an entry out of
those tests without a word; now it fails here, naming the file.
"""

from __future__ import annotations

import json

import pytest
from grading_support import SOLUTIONS, TESTS, read_entry

FOLDERS = ("catalogue/correct", "catalogue/wrong", "adversarial", "agreement", "malformed")
FILES = sorted(p for folder in FOLDERS for p in (TESTS / folder).glob("*.py"))


def _grade_ids(notebook: str) -> set[str]:
    cells = json.loads((SOLUTIONS / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    return {c["metadata"].get("nbgrader", {}).get("grade_id") for c in cells} - {None}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_header_names_real_cells(path):
    entry = read_entry(path)
    ids = _grade_ids(entry.notebook)
    named = ([entry.replace] if entry.kind == "cell" else []) + entry.zero + entry.full
    assert set(named) <= ids, f"{path.name}: no cells {sorted(set(named) - ids)} in {entry.notebook}"


def test_a_malformed_header_is_refused_naming_the_file(tmp_path):
    wrong = tmp_path / "typo.py"
    for header, problem in [("# notebook: 03-softmax-attention\n# replace: softmax\n# zeros: softmax\n", "unknown"),
                            ("# replace: softmax\n", "lacks"),
                            ("# notebook: 99-nothing\n# replace: softmax\n", "no notebook"),
                            ("# notebook: 03-softmax-attention\n# kind: cells\n", "kind")]:
        wrong.write_text(header + "def softmax(x, axis=-1):\n    return x\n")
        with pytest.raises(ValueError, match=problem) as raised:
            read_entry(wrong)
        assert "typo.py" in str(raised.value)


def test_a_wrong_answer_must_say_which_cells_it_fails(tmp_path):
    probe = tmp_path / "catalogue" / "wrong" / "without_zero.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("# notebook: 03-softmax-attention\n# replace: softmax\n# message: x\n")
    with pytest.raises(ValueError, match=r"lacks.*zero"):
        read_entry(probe)


def test_every_exercise_has_a_correct_and_a_wrong_entry():
    """Each record's function is graded both ways by the catalogue: a correct variant (full marks)
    and a named mistake (zero); a new exercise without them is named here."""
    from grading_support import entries

    from selfattn.exercise_checks import EXERCISES

    wrong = {e.replace for e in entries("catalogue/wrong") if e.replace in e.zero}
    right = {e.replace for e in entries("catalogue/correct") if e.replace in e.full}
    missing = [f"exercise {fn}: no {'correct' if fn not in right else 'wrong'} entry in tests/catalogue/"
               f"{'correct' if fn not in right else 'wrong'}/ (header `replace: {fn}`, "
               f"`{'full' if fn not in right else 'zero'}: {fn}`)"
               for fn in EXERCISES if fn not in right or fn not in wrong]
    assert not missing, "\n".join(missing)

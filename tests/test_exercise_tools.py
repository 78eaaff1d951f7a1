"""The contributor's tools around an exercise: which tests cover it (``make test-exercise``) and
the release's note for an exercise the test catalogue does not cover."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import exercise_tests  # noqa: E402
import validate_exercises  # noqa: E402


def _entry(folder: Path, name: str, replace: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(f"# notebook: 03-softmax-attention\n# replace: {replace}\n# full: {replace}\n"
                                       f"def {replace}(x):\n    return x\n")


def test_the_expression_names_the_function_and_each_catalogue_entry_replacing_its_cell():
    wrong = {p.stem for p in (ROOT / "tests" / "catalogue").rglob("*.py")
             if "# replace: causal_mask\n" in p.read_text()}
    assert wrong, "the catalogue has entries for causal_mask"
    terms = exercise_tests.expression("causal_mask").split(" or ")
    assert terms[0] == "causal_mask" and set(terms[1:]) == wrong


def test_make_test_exercise_refuses_an_unknown_function_in_one_line():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "exercise_tests.py"), "no_such"],
                            capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.startswith("no exercise 'no_such': the records define ")
    assert len(result.stderr.splitlines()) == 1


def test_an_exercise_without_a_correct_or_wrong_catalogue_entry_gets_a_note(tmp_path):
    catalogue = tmp_path / "tests" / "catalogue"
    for fn in validate_exercises.EXERCISES:
        _entry(catalogue / "correct", f"{fn}_right", fn)
        if fn != "softmax":
            _entry(catalogue / "wrong", f"{fn}_wrong", fn)
    assert validate_exercises.catalogue_gaps(tmp_path) == [
        "note: exercise softmax: no catalogue entry in tests/catalogue/wrong/ (a file whose header says "
        "`# replace: softmax`; docs/contributing.md, Adding an exercise)"]
    assert validate_exercises.catalogue_gaps(tmp_path / "elsewhere") == [], "no catalogue: nothing to say"


def test_the_course_catalogue_covers_every_exercise():
    assert validate_exercises.catalogue_gaps() == []


def test_the_guide_s_whole_catalogue_entry_is_the_file_it_names():
    """docs/contributing.md shows one catalogue entry in full: it is that file, as it is now."""
    import re

    guide = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    m = re.search(r"One whole entry,\s*`(tests/catalogue/[\w/]+\.py)`:\s*```python\n(.*?)```", guide, re.S)
    assert m, "docs/contributing.md shows no whole catalogue entry"
    assert (ROOT / m.group(1)).read_text(encoding="utf-8").strip() == m.group(2).strip(), m.group(1)


def test_one_exercise_s_run_grades_only_its_own_entries():
    """``make test-exercise FN=...`` selects the catalogue entries replacing FN's cell: the graded class of
    tests/test_grading.py then holds those entries alone (not the whole catalogue); any selected test of the
    whole class (not one entry's) brings every entry back."""
    from types import SimpleNamespace

    import test_grading

    mine = [e for e in test_grading.ALL if e.replace == "causal_mask"]
    assert len(mine) >= 2

    def test_of(**params):
        return SimpleNamespace(module=test_grading, callspec=SimpleNamespace(params=params))

    items = [test_of(entry=e) for e in mine] + [SimpleNamespace(module=sys)]   # another module's test: ignored
    request = SimpleNamespace(module=test_grading, session=SimpleNamespace(items=items))
    assert test_grading.entries_in_play(request) == mine
    items.append(SimpleNamespace(module=test_grading))   # e.g. test_solutions_score_full_marks
    assert test_grading.entries_in_play(request) == test_grading.ALL

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
#: every folder of entries whose header states an expectation (side channels: ``# channel:``)
STATED = (*FOLDERS, "side_channels")
STATING = sorted(p for folder in STATED for p in (TESTS / folder).glob("*.py"))


def _grade_ids(notebook: str) -> set[str]:
    cells = json.loads((SOLUTIONS / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    return {c["metadata"].get("nbgrader", {}).get("grade_id") for c in cells} - {None}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_header_names_real_cells(path):
    entry = read_entry(path)
    ids = _grade_ids(entry.notebook)
    named = ([entry.replace] if entry.kind == "cell" else []) + entry.fails + entry.full
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


def _header_and_body(path) -> tuple[dict[str, str], str]:
    """The ``# key: value`` lines opening an entry, and the rest of its file (what the submission
    holds, or the mutation that makes it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head: dict[str, str] = {}
    for at, line in enumerate(lines):
        key, colon, value = line[2:].partition(":")
        if not (line.startswith("# ") and colon and key.strip().isidentifier()):
            return head, "\n".join(lines[at:])
        head[key.strip()] = value.strip()
    return head, ""


def _echoed(path) -> str | None:
    """The entry's expected message if its own body holds it (case and spacing aside): a test
    reading the feedback would then pass on the submission's echo of its own line."""
    head, body = _header_and_body(path)
    message = " ".join(head.get("message", "").split()).lower()
    return head["message"] if message and message in " ".join(body.split()).lower() else None


def test_no_entry_carries_its_expected_message_in_its_own_code():
    echoed = {f"{p.parent.name}/{p.name}": m for p in STATING if (m := _echoed(p))}
    assert not echoed, f"entries whose body holds their expected message (pick the grader's words): {echoed}"
    assert len(STATING) > 100 and sum("message" in _header_and_body(p)[0] for p in STATING) >= 15


def test_the_echo_check_above_finds_an_echo(tmp_path):
    echo = tmp_path / "echo.py"
    echo.write_text("# notebook: 03-softmax-attention\n# message: Nothing  to steal\nassert 0, 'nothing to steal'\n")
    assert _echoed(echo) == "Nothing  to steal"
    echo.write_text("# notebook: 03-softmax-attention\n# message: not defined\nx = 1\n")
    assert _echoed(echo) is None

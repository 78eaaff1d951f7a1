"""Side channels out of hidden checks: nothing a submission chooses while it sees a hidden input
comes back to anyone.

Each file of ``tests/side_channels/`` is a ``leak(S, k, axis)`` that tries to carry a number ``k``
spelled from the input out through one channel (an exception's class name or message, the exit
status, the time before the run is killed, the signal, the returned shape, the number of NaNs, the
size of the error, the number of results, warnings and prints, recursion depth, the size of the
output, memory, CPU time). Every student's ``softmax`` is right on the public checks' inputs and
calls ``leak`` on its hidden float32 and masked inputs, and ``attention`` (the course's solution)
calls that ``softmax`` on masked scores, so the dependency's fault and the fair-blame re-grade, whose
note names ``softmax``, are exercised too.

The same class is graded twice with two grading secrets, that is with two different sets of hidden
inputs: every verdict line, note, feedback page, grades.csv row and the class report must read the
same, and every hidden check must speak the fixed vocabulary of :mod:`selfattn.checks.findings`.
"""

from __future__ import annotations

import csv
import html.parser
import json
import re
from pathlib import Path

import pytest
from grading_support import SOLUTIONS, TESTS, grade, place, with_answers

import autograder.hidden_checks  # noqa: F401 - attaches the hidden checks to the records
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.findings import BUILTIN_EXCEPTIONS, Kind

NOTEBOOK = "03-softmax-attention"
CHANNELS = sorted((TESTS / "side_channels").glob("*.py"))

PRELUDE = '''
def _right(S, axis=-1):
    S = np.asarray(S, dtype=float)
    m = np.max(S, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(S - m)
    return e / e.sum(axis=axis, keepdims=True)


def _secret_input(S):
    """True for softmax's hidden float32 scores (4 by 6: every float32 input a public check gives softmax,
    its own or through attention and multi_head_attention, has at most 4 columns) and its randomly masked
    float64 scores (never for its public checks, whose masked float64 scores are causal), and for
    attention's hidden masked scores (its failure is blamed on this softmax)."""
    S = np.asarray(S)
    causal = S.ndim == 2 and S.shape[0] == S.shape[1] and bool(
        (np.isneginf(S) == np.triu(np.ones(S.shape, dtype=bool), 1)).all())
    if S.dtype == np.float32:
        return S.shape[-1] >= 6
    return bool(np.isneginf(S).any()) and not causal


def _signal(S):
    """A number from 2 to 90 spelled from the input."""
    S = np.asarray(S, dtype=float)
    return int(np.abs(S[np.isfinite(S)]).sum() * 1000) % 89 + 2

'''
SOFTMAX = '''

def softmax(S, axis=-1):
    if _secret_input(S):
        return leak(S, _signal(S), axis)
    return _right(S, axis)
'''


def student(path: Path) -> str:
    return "leak-" + path.stem.replace("_", "-")


def answer(path: Path) -> str:
    return PRELUDE + path.read_text() + SOFTMAX


@pytest.fixture(scope="module")
def gradings(tmp_path_factory) -> list[Path]:
    """Two work folders holding the same class, each graded with its own secret."""
    raw = (SOLUTIONS / f"{NOTEBOOK}.ipynb").read_text()
    works = []
    for name in ("first", "second"):
        work = tmp_path_factory.mktemp(f"side-channels-{name}")
        for path in CHANNELS:
            place(work, student(path), NOTEBOOK, with_answers(raw, {"softmax": answer(path)}))
        result = grade(work, "--cpu-seconds", "3", "--workers", "2")
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
        works.append(work)
    return works


def verdict(work: Path, who: str) -> dict:
    return json.loads((work / ".grading" / "verdicts" / who / "attention" / f"{NOTEBOOK}.json").read_text())


class _Text(html.parser.HTMLParser):
    """The text of a page as displayed (scripts and styles left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def shown(path: Path) -> list[str]:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.parts


#: A date and time as pages and files stamp them (the two gradings ran at different times).
_WHEN = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?( UTC)?|\d+(\.\d+)? s\b")


def when_removed(lines: list[str]) -> list[str]:
    return [_WHEN.sub("<when>", ln) for ln in lines]


def test_the_two_gradings_met_different_hidden_inputs(gradings):
    first, second = ((w / ".grading" / "secret").read_bytes() for w in gradings)
    assert first and second and first != second  # the seeds of hidden inputs derive from the secret


@pytest.mark.parametrize("path", CHANNELS, ids=lambda p: p.stem)
def test_the_channel_was_tried_on_hidden_inputs_only(gradings, path):
    for work in gradings:
        checks = verdict(work, student(path))["checks"]
        assert all(checks[c.id] is None for c in EXERCISES["softmax"].public_checks), checks
        assert checks["softmax/hidden/float32"] is not None, checks  # leak() ran on a hidden input
        assert all(checks[c.id] is None for c in EXERCISES["attention"].checks), checks  # blamed on softmax


@pytest.mark.parametrize("path", CHANNELS, ids=lambda p: p.stem)
def test_no_text_differs_between_two_sets_of_hidden_inputs(gradings, path):
    who = student(path)
    first, second = (verdict(w, who) for w in gradings)
    assert first["cells"] == second["cells"]
    assert first["notes"] == second["notes"]
    assert first["checks"] == second["checks"]
    pages = [w / "feedback" / who / "attention" / f"{NOTEBOOK}.html" for w in gradings]
    assert when_removed(shown(pages[0])) == when_removed(shown(pages[1]))
    rows = []
    for work in gradings:
        with open(work / "grades.csv", newline="", encoding="utf-8") as fh:
            rows.append([{k: v for k, v in r.items() if "timestamp" not in k} for r in csv.DictReader(fh)
                         if r.get("student_id") == who])
    assert rows[0] and rows[0] == rows[1]


def test_the_class_report_reads_the_same(gradings):
    first, second = (when_removed(shown(w / "report" / "index.html")) for w in gradings)
    assert first == second


def test_hidden_checks_speak_a_fixed_vocabulary(gradings):
    """Every failed hidden check ends in the record's named mistake or declared diagnosis, a fixed
    kind's wording, or a built-in exception's name: nothing else."""
    mistakes = {m.message for e in EXERCISES.values() for m in e.mistakes} | {
        d for e in EXERCISES.values() for d in e.diagnoses.values()}
    allowed = ({k.value for k in Kind} | mistakes | {f"raised {n}" for n in BUILTIN_EXCEPTIONS})
    seen = 0
    for work in gradings:
        for path in CHANNELS:
            for cell in verdict(work, student(path))["cells"].values():
                for line in cell["lines"]:
                    if ": hidden check: " in line and line.startswith("✗"):
                        function = line[2:].split(":", 1)[0]
                        described = {f"✗ {function}: hidden check: {c.description}: "
                                     for c in EXERCISES[function].checks if c.hidden}
                        prefix = next((p for p in described if line.startswith(p)), None)
                        assert prefix is not None, line
                        assert line[len(prefix):] in allowed, line
                        seen += 1
    assert seen >= 2 * len(CHANNELS)

"""A student who floods the blame oracle costs the class nothing (issue 51, item 4).

A small class graded through the real pipeline (``python -m autograder.grade``): ``ada`` hands in the
solutions, ``ben`` a softmax without the row maximum, and ``flo`` a wrong softmax and scaled_scores and
an attention that asks scaled_scores for large integer products in a loop. Her dependencies fail, so
fair blame grades her attention again with the course's functions, which then answer her loop through
the oracle: before the oracle had limits each call ran in the grader's process (a fifth of a second of
its CPU each, 20,000 allowed a run, until the run's wall clock). Now her run is stopped at the
oracle's limit; her feedback says which, in one line; her other functions keep their points; and
``ada``'s and ``ben``'s grades are those of the same class graded without her. How long each class
takes is a benchmark figure (``python -m benchmarks --only oracle``), not an assertion here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grading_support import (
    RELEASE,
    SOLUTIONS,
    feedback_text,
    function_feedback,
    function_score,
    grade,
    place,
    scores,
    with_answers,
)

NOTEBOOK = "03-softmax-attention"
#: the class's limits (as tests/test_grading.py's): the oracle's time per run is held to the CPU limit
LIMITS = ("--workers", "1", "--cpu-seconds", "2", "--memory-mb", "1024")

#: her softmax and scaled_scores are wrong (so fair blame lends her the course's), and her attention asks
#: the course's scaled_scores for integer matrix products (no BLAS: a fifth of a second each) in a loop,
#: every request the same few kilobytes of deflated zeros, made once (her requests cost her nothing)
FLOOD = {
    "softmax": "def softmax(S, axis=-1):\n    e = np.exp(S)\n    return e / e.sum(axis=axis, keepdims=True)\n",
    "scaled_scores": "def scaled_scores(Q, K):\n    return Q @ K.T\n",
    "attention": ("import io\n"
                  "_Q = np.zeros((640, 640), dtype=np.int32)\n"
                  "_buf = io.BytesIO()\n"
                  "np.savez_compressed(_buf, a0=_Q, a1=_Q)\n"
                  "_REQUEST = _buf.getvalue()\n"
                  "np.savez = lambda file, **arrays: file.write(_REQUEST)\n\n\n"
                  "def attention(Q, K, V, mask=None):\n"
                  "    for _ in range(20_000):\n"
                  "        scaled_scores(_Q, _Q)\n"
                  "    return V\n"),
}
NO_MAX = {"softmax": "def softmax(S, axis=-1):\n    e = np.exp(S)\n    return e / e.sum(axis=axis, keepdims=True)\n"}
#: the line her attention's feedback must hold: the oracle's time limit per run (the class's CPU limit)
LIMIT_LINE = "the course's functions ran over 2 s in all (the grader's time limit for them per run)"


def handed_in(answers: dict[str, str]) -> str:
    """Notebook 03 as released, with the instructor's answers typed in but ``answers`` (grade id -> source)."""
    solutions = json.loads((SOLUTIONS / f"{NOTEBOOK}.ipynb").read_text())
    given = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in solutions["cells"]
             if c["metadata"].get("nbgrader", {}).get("solution")}
    return with_answers((RELEASE / f"{NOTEBOOK}.ipynb").read_text(), {**given, **answers})


def _class(work: Path, students: dict[str, dict[str, str]]) -> Path:
    for student, answers in students.items():
        place(work, student, NOTEBOOK, handed_in(answers))
    result = grade(work, *LIMITS)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return work


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> tuple[Path, Path]:
    """(the class with flo, the same class without her), each graded."""
    others = {"ada": {}, "ben": NO_MAX}
    return (_class(tmp_path_factory.mktemp("with-flo"), {**others, "flo": FLOOD}),
            _class(tmp_path_factory.mktemp("without-flo"), others))


def test_the_flood_ends_at_the_oracle_s_limit_with_one_line_naming_it(classes):
    work, _ = classes
    feedback = function_feedback(work, "flo", NOTEBOOK, "attention")
    assert function_score(work, "flo", NOTEBOOK, "attention")[0] == 0, feedback
    assert LIMIT_LINE in feedback, feedback
    assert feedback.count("the grader's time limit") == feedback.count(LIMIT_LINE), feedback
    for own in ("softmax", "scaled_scores"):  # her own mistakes, told as without the flood
        assert function_score(work, "flo", NOTEBOOK, own)[0] == 0, feedback_text(work, "flo", NOTEBOOK)
        assert "the grader's" not in function_feedback(work, "flo", NOTEBOOK, own)


def test_the_others_grades_are_those_of_the_class_without_her(classes):
    with_her, without = classes
    for student in ("ada", "ben"):
        assert scores(with_her, student, NOTEBOOK) == scores(without, student, NOTEBOOK), student
        assert feedback_text(with_her, student, NOTEBOOK) == feedback_text(without, student, NOTEBOOK), student
    assert all(s == most for s, most in scores(without, "ada", NOTEBOOK).values())
    assert json.dumps(scores(without, "ben", NOTEBOOK)) != json.dumps(scores(without, "ada", NOTEBOOK))

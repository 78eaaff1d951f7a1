"""hand_in.py names an answer cell that does not parse as grading reads it (plain Python), in the
grader's words and with its line, instead of the NameError of the check cell after it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from student_support import hand_in_module

from selfattn.checks.calling import exec_cells

ROOT = Path(__file__).resolve().parent.parent


HAND_IN = hand_in_module("student_hand_in_syntax")


def _nb(*cells: tuple[str, str, bool]) -> dict:
    return {"cells": [{"cell_type": "code", "source": src,
                       "metadata": {"nbgrader": {"grade_id": gid, "solution": solution}}}
                      for gid, src, solution in cells]}


@pytest.mark.parametrize("source", [
    "def softmax(S, axis=-1)\n    return S\n",
    "def softmax(S, axis=-1):\n    e = np.exp(S\n    return e\n",
    "%timeit 1\ndef softmax(S, axis=-1):\n    return S\n",
    "def softmax(S, axis=-1):\n\treturn S\n        return S\n",
    "x = 'a\0b'\n",
])
def test_an_answer_that_does_not_parse_is_named_in_the_graders_words(source):
    """The line hand_in.py gives is the one the grader's cell error gives (selfattn.checks.calling's
    exec_cells, which the sandbox runs), up to what follows the message."""
    (line,) = HAND_IN.syntax_problems(_nb(("softmax", source, True)))
    (graded,) = exec_cells([("softmax", source)], {})
    assert line.startswith("the cell of softmax raised ") and str(graded).startswith(line.split(":")[0]), \
        (line, graded)
    assert graded.exception in line, (line, graded)


@given(st.text(alphabet="abc():=\n %+0'\"", max_size=40))
def test_a_cell_is_named_exactly_when_grading_cannot_compile_it(source):
    lines = HAND_IN.syntax_problems(_nb(("softmax", source, True), ("softmax-public", "((", False)))
    errors = exec_cells([("softmax", source)], {})
    compiles = not errors or errors[0].exception not in ("SyntaxError", "IndentationError", "TabError", "ValueError")
    assert (lines == []) == compiles, (source, lines, errors)


def test_a_test_cell_and_a_text_cell_are_not_answers():
    nb = _nb(("softmax-public", "def (", False))
    nb["cells"].append({"cell_type": "markdown", "source": "def (",
                        "metadata": {"nbgrader": {"grade_id": "why", "solution": True}}})
    assert HAND_IN.syntax_problems(nb) == []

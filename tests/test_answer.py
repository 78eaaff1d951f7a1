"""selfattn.answer: the Python the grader runs for an answer cell (the notebook's checks judge the same)."""

from __future__ import annotations

import pytest

from selfattn.answer import defined_names, graded_source

BODY = "def f(x):\n    return x\n"


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 2", "%%capture out"])
def test_a_timing_or_capture_cell_magic_is_removed_keeping_line_numbers(magic):
    answer = graded_source(f"{magic}\n{BODY}")
    assert answer.python == "\n" + BODY and not answer.refused
    assert magic.split()[0] in answer.note


def test_time_and_timeit_lines_become_their_code():
    answer = graded_source(BODY + "%timeit -n 3 -r 1 f(1)\ndef g(y):\n    %time z = y\n    return z\n")
    assert answer.python == BODY + "f(1)\ndef g(y):\n    z = y\n    return z\n"
    assert answer.note.startswith("%timeit, %time removed")


@pytest.mark.parametrize(("line", "why"), [("!pip install torch", "shell command"),
                                          ("%matplotlib inline", "%matplotlib"), ("%%bash", "%%bash")])
def test_other_magics_are_refused_with_the_line_and_the_reason(line, why):
    answer = graded_source(f"{line}\n{BODY}")
    assert answer.refused and answer.python == f"{line}\n{BODY}"
    assert answer.note.startswith("line 1:") and why in answer.note and "\n" not in answer.note


def test_plain_python_is_never_changed():
    source = 'x = """\n%time not a magic\n!nor this\n"""\n' + BODY
    assert graded_source(source).python == source and graded_source(source).note == ""
    assert graded_source("def f(:\n").note == ""  # an ordinary SyntaxError is reported as it is


def test_defined_names_sees_through_magics():
    assert defined_names("%%time\nimport numpy as np\nfrom a import b as c\ndef f(): pass\nX = 1\n") == {
        "np", "c", "f", "X"}
    assert defined_names("!ls\ndef f(): pass\n") == set()

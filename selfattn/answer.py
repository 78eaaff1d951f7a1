"""What "the answer" to an exercise is: one definition shared by the notebook's checks and the grader.

The grader reads the answer cell (the cell with the exercise's grade id) of the handed-in notebook
and runs its text as plain Python, in a namespace holding only NumPy. A notebook check must judge
exactly that text, or a ✓ in the notebook would not predict the grade. IPython is more lenient
than plain Python: ``%%time`` over a cell, ``%timeit f(x)`` or ``!pip install ...`` run in a
notebook but are a ``SyntaxError`` as Python. :func:`graded_source` turns a cell's text into the
Python the grader runs, and both sides call it:

- a leading ``%%time``, ``%%timeit`` or ``%%capture`` line (a timing or output-hiding cell magic)
  is removed; the code below it is the answer;
- a line magic ``%time x`` or ``%timeit x`` becomes ``x`` (its options are dropped);
- any other magic or shell line (``%matplotlib``, ``!ls``, ``%%bash``, ...) is left as it is, so
  the cell is a ``SyntaxError`` on both sides, and the note says which line and why.

Text that is already valid Python is never changed (a ``%`` inside a string stays).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["ANSWER_CELL", "Answer", "defined_names", "graded_source"]

#: how the notebooks name the cell that is graded (the stub of every answer cell says it)
ANSWER_CELL = "the cell marked YOUR CODE HERE"

#: cell magics whose body is the answer (they only time it or hide its output)
STRIPPED_CELL_MAGICS = frozenset({"time", "timeit", "capture"})
#: line magics whose argument is the code to run
UNWRAPPED_LINE_MAGICS = frozenset({"time", "timeit"})

_LINE_MAGIC = re.compile(r"^(?P<indent>\s*)%(?P<name>\w+)(?P<rest>.*)$")
_TIMEIT_OPTION = re.compile(r"^\s*(?:-[nr]\s*\d+|-[oqp]\s*\d*|-c)\s*")


@dataclass(frozen=True)
class Answer:
    """An answer cell as the grader runs it.

    Attributes
    ----------
    python : str
        The Python text that is run (the cell's own text when it needed no change).
    note : str
        One line for the student: what was stripped, or which line cannot be graded and why;
        empty when the text was already plain Python.
    refused : bool
        True when a line cannot be turned into Python (the text then fails to compile).
    """

    python: str
    note: str = ""
    refused: bool = False


def _compiles(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _strip_timeit_options(code: str) -> str:
    while (m := _TIMEIT_OPTION.match(code)) and m.end() > 0:
        code = code[m.end():]
    return code.strip()


def graded_source(source: str) -> Answer:
    """The Python the grader runs for an answer cell's text ``source``, and a note on any change.

    Parameters
    ----------
    source : str
        The cell's text as written in the notebook (raw, before IPython's own transforms).

    Returns
    -------
    Answer
        ``python`` keeps the line numbers of ``source`` (a removed line becomes an empty one).
    """
    if _compiles(source):
        return Answer(source)
    lines = source.split("\n")
    stripped: list[str] = []
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].strip()[2:].split(maxsplit=1)[0] if lines[first].strip()[2:] else ""
        if name not in STRIPPED_CELL_MAGICS:
            return Answer(source, f"line {first + 1}: the cell magic `%%{name}` is IPython, not Python, and "
                                  f"answers are graded as plain Python: remove it", refused=True)
        lines[first] = ""
        stripped.append(f"%%{name}")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("!"):
            return Answer(source, f"line {i + 1}: `{line.strip()[:40]}` is a shell command, and answers are graded "
                                  f"as plain Python: remove it (run it in a cell of its own)", refused=True)
        m = _LINE_MAGIC.match(line)
        if m is None:
            continue
        if m["name"] not in UNWRAPPED_LINE_MAGICS:
            return Answer(source, f"line {i + 1}: the magic `%{m['name']}` is IPython, not Python, and answers "
                                  f"are graded as plain Python: remove it (run it in a cell of its own)", refused=True)
        lines[i] = m["indent"] + _strip_timeit_options(m["rest"])
        stripped.append(f"%{m['name']}")
    python = "\n".join(lines)
    if not stripped:
        return Answer(source)  # an ordinary SyntaxError: both sides report it as it is
    what = ", ".join(dict.fromkeys(stripped))
    return Answer(python, f"{what} removed: answers are graded as plain Python, without IPython magics")


def defined_names(source: str) -> set[str]:
    """The names a cell binds at its top level (functions, classes, assignments, imports) once
    turned into the Python the grader runs; empty if it does not compile."""
    try:
        tree = ast.parse(graded_source(source).python)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names

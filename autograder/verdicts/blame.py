"""Fair blame when grading: the grader's side of :mod:`selfattn.checks.fair_blame`.

When a function's checks fail and a graded function it may call fails its own checks (all of them,
hidden ones included), the function is graded again with the course's reference of each failing
dependency (the instructor's solution cell), in the sandbox like any run, and those results count:
it keeps its points if it then passes (the feedback names the function to fix), and otherwise its
feedback and the class report name its own mistakes, not its dependencies'.

The course's functions never enter the sandbox: they run in the grader's process as an oracle
(:mod:`autograder.sandbox.oracle`), and the student's function calls them through stand-ins that
send arrays and receive arrays. No text, bytecode or object of a solution is reachable from a
process that runs student code.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from autograder.course.spec import answer_cells
from autograder.notes import Note, NoteKind
from autograder.sandbox.oracle import Oracle, reference_functions
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.fair_blame import fair_results
from selfattn.checks.findings import Finding
from selfattn.checks.record import REGISTRY


@cache
def reference_cell(assignment: str, notebook: str, function: str, course: Path) -> str:
    """The instructor's answer cell of ``function``, solution markers removed (trusted code)."""
    source = answer_cells(course / "solutions" / assignment / f"{notebook}.ipynb")[function]
    return "\n".join(ln for ln in source.splitlines() if "### BEGIN SOLUTION" not in ln
                     and "### END SOLUTION" not in ln) + "\n"


def failing_dependencies(function: str, checks: dict[str, str | None]) -> list[str]:
    """The graded functions ``function`` may call whose own checks (already decided) failed."""
    return [dep for dep in EXERCISES[function].dependency_names
            if any(msg is not None for cid, msg in checks.items() if REGISTRY[cid].function == dep)]


Results = dict[str, Finding | None]

#: the top-level statements of a dependency's cell kept beside the course's function: what defines names
_DEFINING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign,
             ast.AnnAssign)


def definitions_besides(source: str, name: str) -> str:
    """The definitions of a student's cell other than the function ``name``, as source.

    Its top-level functions, classes, imports and assignments (helpers another function may use), in
    the cell's order as ``ast.unparse`` writes them; every other statement (a call, a loop, a
    ``raise``, an exit) and ``name``'s own definition are left out. ``""`` when the cell does not
    parse (nothing of it is kept) or keeps nothing."""
    try:
        tree = ast.parse(source)
        kept = [node for node in tree.body if isinstance(node, _DEFINING) and not (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name)]
        return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n" if kept else ""
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""


def with_its_own_dependencies(function: str) -> list[str]:
    """``function`` after the graded functions its reference cell may call, theirs first (recursively):
    ``multi_head_attention``'s cell calls ``attention``, whose cell calls ``softmax`` and ``scaled_scores``."""
    order: list[str] = []

    def visit(name: str) -> None:
        for dep in EXERCISES[name].dependency_names:
            visit(dep)
        if name not in order:
            order.append(name)

    visit(function)
    return order


@cache
def _reference_sources(assignment: str, notebook: str, deps: tuple[str, ...], course: Path) -> tuple:
    """(dep, the course's cell of dep preceded by the course's cells of the functions it calls): the
    oracle runs each reference alone, so a reference that calls a graded function (the course's
    ``attention`` calls ``softmax``) finds the course's own beside it, never the student's."""
    return tuple((dep, "\n".join(reference_cell(assignment, notebook, name, course)
                                  for name in with_its_own_dependencies(dep))) for dep in deps)


def oracle(assignment: str, notebook: str, deps: Sequence[str], course: Path) -> Oracle:
    """A fresh oracle (its caps count one run) answering for the course's ``deps``."""
    return Oracle(reference_functions(dict(_reference_sources(assignment, notebook, tuple(deps), course))))


def regrade(assignment: str, notebook: str, function: str, answers: dict[str, str], checks: dict[str, str | None],
            results: Results, decide: Callable[[list[tuple[str, str | None]], Callable[[], Oracle]], Results],
            course: Path) -> tuple[Results, Note | None]:
    """(the results that count for ``function``, the note for its feedback or ``None``).

    The note's kind is :attr:`NoteKind.DEPENDENCY_BLAMED` when ``function`` passes with the course's
    functions (it keeps its points), else :attr:`NoteKind.JUDGED_WITH_COURSE` (what is said of it is
    its own mistake): decided from the results, never from the note's words.

    ``results`` are its results with the student's own functions; ``decide(code, oracle)`` runs its
    checks on ``code`` (cells as (label, source); the course's functions have no source: each run
    calls them through ``oracle()``, a fresh :class:`autograder.sandbox.oracle.Oracle`) exactly as its
    first grading did, and returns check id -> finding (see
    :func:`selfattn.checks.fair_blame.fair_results`).
    """
    def with_references(deps: Sequence[str]) -> Results:
        # the student's cell of each dependency; for each of ``deps``, only the other definitions of its
        # cell (its helpers stay), then the course's function in place of the student's function alone
        code: list[tuple[str, str | None]] = []
        for dep in EXERCISES[function].dependency_names:
            if dep not in deps:
                code += [(dep, answers[dep])] if dep in answers else []
                continue
            helpers = definitions_besides(answers.get(dep, ""), dep)
            code += [(dep, helpers)] if helpers else []
            code.append((dep, None))
        ours = [dep for dep, source in code if source is None]
        return decide([*code, (function, answers[function])], lambda: oracle(assignment, notebook, ours, course))

    fair, note = fair_results(function, results, failing_dependencies(function, checks), with_references,
                              quote="`", graded=True)
    if not note:
        return fair, None
    kind = NoteKind.DEPENDENCY_BLAMED if all(f is None for f in fair.values()) else NoteKind.JUDGED_WITH_COURSE
    return fair, Note(note if note.endswith(".") else note + ".", kind)

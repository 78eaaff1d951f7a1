"""The course package imports in one direction: no circle between its modules, no import inside
a function that is there only to dodge a circle, a sandbox module that needs nothing of the
course, and a ``summary()`` that works in a kernel whose setup cell has not run."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from autograder.import_graph import Import, imports_of
from autograder.workspace import ROOT

PACKAGE = ROOT / "selfattn"


def module_name(path: Path) -> str:
    """The dotted name of the module in ``path`` (a package by its own name)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    """Every module of the course package by dotted name (a package by its own name)."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _graph() -> tuple[dict[str, set[str]], list[Import]]:
    """(module -> the course modules it imports when imported, every import inside a function)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    lazy: list[Import] = []
    for module, path in modules.items():
        for imp in imports_of(module, path, known):
            if imp.in_function:
                lazy.append(imp)
            else:
                graph[module].add(imp.imported)
    return graph, lazy


def _path(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A chain of imports from ``start`` to ``goal``, or ``None``."""
    seen, stack = {start}, [[start]]
    while stack:
        chain = stack.pop()
        for nxt in sorted(graph[chain[-1]]):
            if nxt == goal:
                return [*chain, nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append([*chain, nxt])
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each module that is on one (each circle reported once)."""
    found: list[list[str]] = []
    reported: set[frozenset[str]] = set()
    for module in sorted(graph):
        for nxt in sorted(graph[module]):
            chain = _path(graph, nxt, module)
            if chain is not None and frozenset(chain) not in reported:
                reported.add(frozenset(chain))
                found.append([module, *chain])
    return found


def test_the_graph_sees_the_course_modules_and_theirimports_of():
    """The parser finds what it must: else an empty graph would pass the tests below."""
    graph, _ = _graph()
    assert {"selfattn.checking", "selfattn.checks.notebook", "selfattn.checks.calling"} <= set(graph)
    assert "selfattn.checks.exercises" in graph["selfattn.checks.notebook"]  # `from . import exercises`
    assert "selfattn.numerics" in graph["selfattn.checks.exercises"]  # `from .. import numerics`
    assert "selfattn.lecture" in graph["selfattn.checks.exercises"]  # `from ..lecture import lecture_shapes`
    assert "selfattn.checks.notebook" in graph["selfattn.checking"]


def test_the_cycle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_course_package_imports_itself_in_a_circle():
    circles = _cycles(_graph()[0])
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_the_checks_package_imports_in_the_order_its_docstring_lists():
    """``selfattn/checks/__init__.py`` lists its modules bottom up; each imports only those above it."""
    import re

    import selfattn.checks

    order = re.findall(r":mod:`~selfattn\.checks\.(\w+)`", selfattn.checks.__doc__ or "")
    present = sorted(p.stem for p in (PACKAGE / "checks").glob("*.py") if p.stem != "__init__")
    assert sorted(order) == present, f"list every module of selfattn/checks in its docstring: {order} vs {present}"
    graph, _ = _graph()
    upward = [f"{m} imports {i}" for n, m in enumerate(order) for i in sorted(graph[f"selfattn.checks.{m}"])
              if i.startswith("selfattn.checks.") and i.rpartition(".")[2] not in order[:n]]
    assert not upward, "; ".join(upward)


def test_no_import_inside_a_function_dodges_a_circle():
    """A course module imported inside a function would close a circle if imported at the top:
    that is a circle held by a lazy import (move what both need into a module below them)."""
    graph, lazy = _graph()
    dodges = [f"{imp.importer} line {imp.line} imports {imp.imported} inside a function, and "
              f"{' -> '.join(chain)} at the top" for imp in lazy
              if (chain := _path(graph, imp.imported, imp.importer)) is not None]
    assert not dodges, "; ".join(dodges)


def test_the_lazy_import_finder_sees_an_import_inside_a_function(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("from . import top\n\ndef f():\n    from .other import g\n    return g\n")
    found = imports_of("selfattn.mod", path, {"selfattn.mod", "selfattn.top", "selfattn.other"})
    assert [(i.imported, i.in_function) for i in found] == [("selfattn.top", False), ("selfattn.other", True)]


#: One import in every kind of statement body (the finder reads statements only): each imports the module
#: named after where it stands, and whether that runs only when a function runs.
EVERY_BODY = """\
import selfattn.top_level
if x:
    import selfattn.if_body
elif y:
    import selfattn.elif_body
else:
    import selfattn.else_body
for i in x:
    import selfattn.for_body
else:
    import selfattn.for_else
while x:
    import selfattn.while_body
try:
    import selfattn.try_body
except ImportError:
    import selfattn.except_body
else:
    import selfattn.try_else
finally:
    import selfattn.try_finally
try:
    pass
except* ValueError:
    import selfattn.except_star
with x:
    import selfattn.with_body
match x:
    case 1:
        import selfattn.case_body
class C:
    import selfattn.class_body
    def m(self):
        import selfattn.method_body
async def f():
    async with x:
        import selfattn.async_with
    async for i in x:
        import selfattn.async_for
    g = lambda: __import__("selfattn.never")
"""


def test_the_finder_sees_an_import_in_every_kind_of_statement_body(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(EVERY_BODY)
    names = re.findall(r"import (selfattn\.\w+)", EVERY_BODY)
    found = imports_of("selfattn.mod", path, set(names) | {"selfattn.never"})
    lazy = {"selfattn.method_body", "selfattn.async_with", "selfattn.async_for"}
    assert [(i.imported, i.in_function) for i in found] == [(n, n in lazy) for n in names]


def test_the_sandbox_module_needs_only_the_standard_library_and_numpy():
    """``checks/calling.py`` runs in the sandbox as a top-level module: no relative import, and
    nothing but the standard library and NumPy, at any depth."""
    tree = ast.parse((PACKAGE / "checks" / "calling.py").read_text(encoding="utf-8"))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            bad.append(f"line {node.lineno}: relative import")
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        bad += [f"line {node.lineno}: {n}" for n in names
                if n.partition(".")[0] not in (*sys.stdlib_module_names, "numpy")]
    assert not bad, "selfattn/checks/calling.py imports " + ", ".join(bad)


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_summary_prints_in_a_fresh_interpreter_whose_setup_cell_has_not_run():
    """The last cell of a notebook run alone (``from selfattn.checking import summary`` and nothing
    else imported): one line per exercise, never a ``KeyError`` for checks not yet registered."""
    # the ids as the notebook's summary cell holds them (read here, so the child imports nothing more)
    from selfattn.checks.exercises import EXERCISES

    ids = {f: [c.id for c in EXERCISES[f].public_checks] for f in ("softmax", "scaled_scores", "attention")}
    run = _fresh(f"""
        import numpy as np
        from selfattn.checking import summary

        def softmax(S, axis=-1):
            e = np.exp(S - S.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)

        def scaled_scores(Q, K):
            raise NotImplementedError

        summary(globals(), {{"softmax": (2, {ids["softmax"]!r}), "scaled_scores": (1, {ids["scaled_scores"]!r}),
                            "attention": (3, {ids["attention"]!r})}})
    """)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "✓  softmax (2 points): public checks pass",
        "·  scaled_scores (1 points): not attempted",
        "·  attention (3 points): not attempted (run its cell)",
        "Public checks pass for exercises worth 2 of 6 points; hidden checks decide the rest.",
    ], run.stdout


def test_summary_names_a_check_it_does_not_know_instead_of_raising():
    run = _fresh("""
        from selfattn.checking import summary

        def softmax(S, axis=-1):
            return S

        summary(globals(), {"softmax": (2, ["softmax/no-such-check"])})
    """)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == ("✗  softmax (2 points): no check named 'softmax/no-such-check' "
                                          "(is selfattn up to date?)"), run.stdout


def test_check_finds_its_check_in_a_fresh_interpreter():
    """``check()`` imported alone knows every public check (the records are imported with it)."""
    run = _fresh("""
        import numpy as np
        from selfattn.checking import check

        def softmax(S, axis=-1):
            e = np.exp(S - S.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)

        check(softmax, "softmax/rows-sum-to-one")
    """)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "✓ softmax: each row is a distribution", run.stdout


def _grader_graph() -> dict[str, set[str]]:
    """The grader's import graph, imports inside functions included (no circle either way)."""
    grader = ROOT / "autograder"
    modules = {module_name(p): p for p in sorted(grader.rglob("*.py")) if "jupyter_data" not in p.parts}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        graph[module] |= {imp.imported for imp in imports_of(module, path, set(modules))}
    return graph


def test_the_grader_imports_run_one_way():
    """No circle in the grader's imports (the command line imports the pipeline, never back)."""
    graph = _grader_graph()
    assert "autograder.grading_commands.grade_class" in graph["autograder.grade"]  # the parser sees its commands
    assert "autograder.pipeline.grading_run" in graph["autograder.grading_commands.grade_class"]  # and the grader
    assert "autograder.sandbox" in graph["autograder.sandbox.warm"]
    assert _cycles(graph) == [], _cycles(graph)

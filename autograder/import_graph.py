"""The repository's own imports, read from its source: one resolver for the verdict key (the files
of :func:`autograder.verdicts.decide.verdict_code`) and for the tests of the import graph, so what
the key counts as "imported" is what the tests check.

Every import statement counts (module level, class bodies, ``if TYPE_CHECKING``, and inside
functions, marked as such), relative ones resolved from the importing module's package, and
``from pkg import name`` names the module ``pkg.name`` when the repository has one, else ``pkg``.
Nothing is imported to read it, so the answer is the same in every process.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from autograder.workspace import ROOT


@dataclass(frozen=True)
class Import:
    """One import of a repository module: who imports what, where (line), and whether it runs when
    the importer is imported (``False``) or only when a function runs (``True``)."""

    importer: str
    imported: str
    line: int
    in_function: bool


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The file of the module ``name`` ("selfattn.numerics") below ``root``, if it is one."""
    base = root.joinpath(*name.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


class _InRepository:
    """The repository's modules as a container: ``name in it`` when ``name`` has a file."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(name) and module_file(name) is not None


#: The fields of a node that hold statements (a module's, a function's, a class's, a branch's, a loop's,
#: a ``with``'s, a ``try``'s and its handlers', a ``match``'s cases'): where an import statement can be.
_BODIES = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def imports_of(module: str, path: Path, known: Container[str]) -> list[Import]:
    """The modules of ``known`` that ``module`` (its source in ``path``) imports, each with its place,
    in the order of the source; ``module`` itself is left out."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        # an import is a statement: only the statements of bodies are read, in the node's own order of
        # fields (never an expression's nodes, most of a module's tree)
        for field in node._fields:
            if field not in _BODIES:
                continue
            for child in getattr(node, field):
                inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                targets: list[str] = []
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        parts = package.split(".")
                        base = parts[: len(parts) - (child.level - 1)]
                        source = ".".join(base + ([child.module] if child.module else []))
                    else:
                        source = child.module or ""
                    targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in child.names]
                found.extend(Import(module, t, child.lineno, in_function)
                             for t in targets if t != module and t in known)
                visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


@functools.cache
def imported_modules(start: str, packages: tuple[str, ...] = ("selfattn", "autograder")) -> tuple[str, ...]:
    """Every module of ``packages`` that importing ``start`` loads (imports inside functions too, and
    each package whose ``__init__`` runs on the way), sorted. Read once per process and arguments:
    the repository's code does not change under a running grader."""
    known = _InRepository()
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        path = module_file(name)
        if name in seen or path is None:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # a package's __init__ runs first
        todo += [imp.imported for imp in imports_of(name, path, known)]
    return tuple(sorted(m for m in seen if m.split(".")[0] in packages))

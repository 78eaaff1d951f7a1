"""Calling student code and turning what it returns into plain arrays.

This is the one piece of course code that also runs inside the grading sandbox (copied next to
``autograder/sandbox/inside/harness.py`` as the top-level module ``calling``), so it depends on nothing but the
standard library and NumPy and imports nothing relative: the sandbox holds neither the course
package nor the checks. The notebook's ``check()`` (:mod:`selfattn.checks.notebook`) calls answers
through the same functions, so a ✓ and a grade see the same values.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "ALLOWED_MODULES",
    "BAD_RETURN",
    "NOT_ANSWERED",
    "PERSON_NAMES",
    "RAISED",
    "TIME_LIMIT",
    "VALUE",
    "BadReturn",
    "Case",
    "CellError",
    "Outcome",
    "TimeLimit",
    "allowed_imports_only",
    "call_cases",
    "exec_cells",
    "fresh_namespace",
    "missing_name",
    "no_person",
    "os_errno",
    "person_names",
    "person_refusal",
    "to_arrays",
]


@dataclass(frozen=True)
class Case:
    """Positional and keyword arguments of one call; values are arrays, numbers, lists or None.

    ``meta`` is for the verifier only (never passed to the function).
    """

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array of shape {v.shape}" + ("" if v.dtype == np.float64 else f" ({v.dtype})")
            return repr(v)

        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


#: What one call did (:attr:`Outcome.kind`): returned numbers, raised, raised ``NotImplementedError``
#: (the stub: not answered yet), returned something that is not numbers, or gave no result in time.
VALUE, RAISED, NOT_ANSWERED, BAD_RETURN, TIME_LIMIT = "value", "raised", "not answered", "bad return", "time limit"
FAILED_KINDS = frozenset({RAISED, NOT_ANSWERED, BAD_RETURN, TIME_LIMIT})


#: Grading's limits on one run of a function's checks, the defaults of ``autograder.sandbox.Limits``: the
#: CPU seconds of its process, and (:func:`graded_wall_seconds`) the seconds it may take in all. The
#: notebook's limits are of the same kinds (:func:`selfattn.checks.notebook.time_limit`).
GRADED_CPU_SECONDS = 60


def graded_wall_seconds(cpu_seconds: float = GRADED_CPU_SECONDS) -> float:
    """The seconds in all (waiting included) that grading gives a run allowed ``cpu_seconds`` of CPU."""
    return 2 * cpu_seconds + 10


class TimeLimit(Exception):
    """A call gave no result in time (raised into it by :func:`selfattn.checks.notebook.time_limit`)."""


@dataclass(frozen=True)
class Outcome:
    """What one call produced, as data: ``values`` (a tuple of float arrays), or ``kind`` (one of
    :data:`FAILED_KINDS`) with ``error``, the text for people, ``exception``, the class name of
    what was raised, ``missing``, the name a ``NameError`` or ``ModuleNotFoundError`` says is
    missing (:func:`missing_name`), and ``errno``, an ``OSError``'s number (:func:`os_errno`).
    Readers decide by ``kind``, ``exception``, ``missing`` and ``errno``, never by reading ``error``."""

    values: tuple[np.ndarray, ...] | None = None
    error: str | None = None
    kind: str = VALUE
    exception: str | None = None
    missing: str | None = None
    errno: int | None = None

    def __post_init__(self) -> None:
        if self.error is not None and self.kind == VALUE:  # an error given alone was raised
            object.__setattr__(self, "kind", RAISED)

    @property
    def value(self) -> np.ndarray:
        """The single returned array (a tuple result has several)."""
        assert self.values is not None
        return self.values[0]


class BadReturn(TypeError):
    """The returned value is not numbers: its message says what came back instead."""


def _describe_bad(part: Any) -> str | None:
    """Why ``part`` cannot be a numeric result, or ``None`` when it can."""
    if part is None:
        return "None (is a `return` statement missing?)"
    if isinstance(part, (bool, np.bool_)):
        return "True/False"
    if isinstance(part, (str, bytes)):
        return "a string"
    if isinstance(part, dict):
        return "a dict"
    if hasattr(part, "__next__") and hasattr(part, "__iter__"):  # a generator: NumPy makes it one object
        return "a generator (an iterator): make it an array first, e.g. np.array(list(...))"
    if isinstance(part, (list, tuple)) and any(isinstance(p, (list, tuple, np.ndarray)) for p in part):
        try:
            np.asarray(part, dtype=float)
        except (ValueError, TypeError):
            return ("a list of arrays of different shapes: return several results as a tuple "
                    "(`return a, b, c`), not a list")
    try:
        arr = np.asarray(part)
    except ValueError:
        return "a ragged sequence"
    if arr.dtype == np.bool_:
        return "a boolean array (True/False)"
    if np.issubdtype(arr.dtype, np.complexfloating):
        return "complex numbers"
    if arr.dtype == object:
        kinds = sorted({type(x).__name__ for x in arr.ravel()[:1000]})
        if arr.ndim == 0:
            return f"a {kinds[0]}, not a number NumPy computes with: convert it, e.g. float(...)"
        return f"an array of {', '.join(kinds)} objects (dtype object): convert them to floats"
    if not np.issubdtype(arr.dtype, np.number):
        return f"a {type(part).__name__}"
    return None


def to_arrays(result: Any) -> tuple[np.ndarray, ...]:
    """A returned value as a tuple of float64 arrays (a tuple result gives several).

    Raises :class:`BadReturn` for anything that is not real numbers, so an object that merely
    claims to be equal to the answer never reaches a comparison.
    """
    parts = result if isinstance(result, tuple) else (result,)
    out = []
    for part in parts:
        if (why := _describe_bad(part)) is not None:
            raise BadReturn(f"returned {why}" if ":" in why else f"returned {why}, expected real numbers")
        out.append(np.array(np.asarray(part), dtype=np.float64, copy=True))
    return tuple(out)


#: Names a notebook kernel has and grading does not, or that wait for a person: an answer using
#: one is refused at once, the same way in the notebook's check, at hand-in and when graded
#: (:func:`person_names`), instead of working in one place and failing, or waiting, in another.
PERSON_NAMES = ("help", "input", "breakpoint", "exit", "quit", "display", "get_ipython",
                "copyright", "credits", "license")


def _bound_names(tree: Any) -> set[str]:
    """Every name ``tree`` binds anywhere (assigned, imported, defined, a parameter)."""
    import ast

    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def person_names(source: str) -> list[str]:
    """The names of :data:`PERSON_NAMES` that ``source`` (an answer cell's Python) uses without
    binding them itself, in the order of :data:`PERSON_NAMES` (``[]`` when it does not parse)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    used -= _bound_names(tree)
    return [name for name in PERSON_NAMES if name in used]


def person_refusal(label: str, names: Sequence[str]) -> str:
    """The one line saying that the cell of ``label`` is refused for using ``names``."""
    listed = ", ".join(f"{n}()" for n in names)
    return (f"the cell of {label} uses {listed}, which a graded answer cannot (grading has no person to "
            f"answer and no Jupyter): remove {'it' if len(names) == 1 else 'them'} from the cell")


class _NoStdin:
    """``sys.stdin`` while answers run: nobody is there to type (reading raises ``EOFError``)."""

    closed = False
    encoding = "utf-8"

    def _refuse(self, *args: Any, **kwargs: Any) -> str:
        raise EOFError("an answer cannot read input: nobody types when it is graded")

    read = readline = readlines = __next__ = _refuse

    def __iter__(self) -> _NoStdin:
        return self

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError("an answer cannot read input: nobody types when it is graded")


def _refused_input(*args: Any, **kwargs: Any) -> Any:
    raise EOFError("input() in an answer: nobody types when it is graded")


def _refused_breakpoint(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("breakpoint() in an answer: nobody debugs when it is graded")


@contextlib.contextmanager
def no_person() -> Iterator[None]:
    """While answers run: ``input()``, ``breakpoint()`` and ``sys.stdin`` raise at once instead of
    waiting for someone to type (in a kernel, the front end would ask; when graded, the run would
    wait until it is stopped), however the answer reaches them."""
    import builtins

    saved = sys.stdin, builtins.input, builtins.breakpoint
    sys.stdin, builtins.input, builtins.breakpoint = _NoStdin(), _refused_input, _refused_breakpoint  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdin, builtins.input, builtins.breakpoint = saved


def call_cases(fn: Callable[..., Any], cases: Sequence[Case]) -> list[Outcome]:
    """Call ``fn`` on every case, turning results into arrays and exceptions into outcomes of their kind."""
    with no_person():
        return _call_cases(fn, cases)


def _call_cases(fn: Callable[..., Any], cases: Sequence[Case]) -> list[Outcome]:
    outcomes = []
    for case in cases:
        try:
            args = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in case.args)
            result = fn(*args, **case.kwargs)
        except TimeLimit as exc:
            outcomes.append(Outcome(error=str(exc), kind=TIME_LIMIT))
            continue
        except (Exception, SystemExit) as exc:
            # the stub's own exception; a subclass (the student package's Withheld) says something else
            kind = NOT_ANSWERED if type(exc) is NotImplementedError else RAISED
            outcomes.append(Outcome(error=f"{type(exc).__name__}: {exc}"[:500], kind=kind,
                                    exception=type(exc).__name__, missing=missing_name(exc), errno=os_errno(exc)))
            continue
        try:
            outcomes.append(Outcome(values=to_arrays(result)))
        except BadReturn as exc:
            outcomes.append(Outcome(error=str(exc), kind=BAD_RETURN))
        except Exception as exc:  # an object whose conversion itself misbehaves
            outcomes.append(Outcome(error=f"returned a {type(result).__name__} that is not numbers"
                                          f" ({type(exc).__name__})", kind=BAD_RETURN))
    return outcomes


def os_errno(exc: BaseException) -> int | None:
    """The number of an ``OSError`` (``errno.ENOSPC``: a full disk), else ``None``."""
    number = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
    return number if isinstance(number, int) else None


def missing_name(exc: BaseException) -> str | None:
    """The name a ``NameError`` says is not defined, or the top-level package a
    ``ModuleNotFoundError`` says is not there (the exception's own ``name``), else ``None``."""
    name = getattr(exc, "name", None) if type(exc) is NameError or isinstance(exc, ModuleNotFoundError) else None
    return name.partition(".")[0] if isinstance(name, str) and name else None


@dataclass(frozen=True)
class CellError:
    """One answer cell that raised, as data (readers decide by its fields, never by reading the
    text); ``str(error)`` is the line for people.

    Parameters
    ----------
    text
        Which answer cell raised what, in one line.
    exception
        The class name of what was raised.
    missing
        :func:`missing_name` of it.
    label
        The cell's label (the function it answers).
    errno
        :func:`os_errno` of it.
    """

    text: str
    exception: str
    missing: str | None = None
    label: str | None = None
    errno: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a cell error's text is a str, not {type(self.text).__name__}")

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, str | int | None]:
        """As JSON data: how the sandbox's harness sends it to the grader (``missing`` stays inside)."""
        return {"text": self.text, "exception": self.exception, "label": self.label, "errno": self.errno}


def exec_cells(cells: Sequence[tuple[str, str]], namespace: dict[str, Any]) -> list[CellError]:
    """Run answer cells (label, source) one after another in ``namespace``, as grading does.

    A cell that raises does not stop the next one; the returned list says which cell raised what.
    A cell using a name of :data:`PERSON_NAMES` is not run: its error says so (:func:`person_refusal`).
    """
    import traceback

    errors: list[CellError] = []
    for label, source in cells:
        if names := person_names(source):
            errors.append(CellError(person_refusal(label, names), "RuntimeError", None, label))
            continue
        try:
            with no_person():
                exec(compile(source, f"<{label}>", "exec"), namespace)
        except BaseException as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            line = next((f.lineno for f in reversed(tb) if f.filename == f"<{label}>"), None)
            where = f" (line {line})" if line else ""
            text = f"the cell of {label} raised {type(exc).__name__}: {exc}{where}"[:500]
            errors.append(CellError(text, type(exc).__name__, missing_name(exc), label, os_errno(exc)))
    return errors


def fresh_namespace() -> dict[str, Any]:
    """What an answer cell starts from when graded: NumPy as ``np`` and nothing else."""
    return {"__name__": "__student__", "np": np, "numpy": np}


#: Modules an answer may import when graded: the standard library and NumPy.
ALLOWED_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"numpy"}


@contextlib.contextmanager
def allowed_imports_only() -> Iterator[None]:
    """Answer code (code whose globals are named ``__student__``) may import only the standard
    library and NumPy, as when graded; every other import raises ``ModuleNotFoundError``."""
    import builtins

    real_import = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        if (level == 0 and isinstance(globals, dict) and globals.get("__name__") == "__student__"
                and name.partition(".")[0] not in ALLOWED_MODULES):
            raise ModuleNotFoundError(f"No module named '{name.partition('.')[0]}'", name=name.partition(".")[0])
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    try:
        yield
    finally:
        builtins.__import__ = real_import

"""The machinery of the exercise checks, shared by the notebooks and the autograder.

A :class:`Check` is split in three so that grading never has to trust student code:

1. ``cases(rng)`` makes the inputs (trusted side);
2. the student's function is called on each case, and each result becomes plain float
   arrays, or the name and message of the exception it raised (:func:`call_cases`);
3. ``verify(cases, outcomes)`` decides, looking only at those arrays (trusted side), and
   returns ``None`` or a message naming the likely misconception.

In a notebook all three steps run in the student's kernel (:func:`check`), for instant
feedback. The autograder runs step 2 in a sandboxed process and steps 1 and 3 in a process
that never runs student code, so the student sees the same verdict and message either way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "REFERENCE_FUNCTIONS",
    "REGISTRY",
    "BadReturn",
    "Case",
    "Check",
    "CheckFailed",
    "Outcome",
    "allowed_imports_only",
    "call_cases",
    "check",
    "exec_cells",
    "fresh_namespace",
    "judge",
    "register",
    "run_as_graded",
    "summary",
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


@dataclass(frozen=True)
class Outcome:
    """What one call produced: ``values`` (a tuple of float arrays) or an ``error`` string."""

    values: tuple[np.ndarray, ...] | None = None
    error: str | None = None

    @property
    def value(self) -> np.ndarray:
        """The single returned array (a tuple result has several)."""
        assert self.values is not None
        return self.values[0]


@dataclass(frozen=True)
class Check:
    """One named check of one graded function."""

    id: str
    function: str
    description: str
    cases: Callable[[np.random.Generator], list[Case]]
    verify: Callable[[list[Case], list[Outcome]], str | None]


REGISTRY: dict[str, Check] = {}

#: Ids of the checks a student sees (the notebook's public checks), in registration order.
PUBLIC: list[str] = []

#: Graded functions whose solution may call other graded functions of the same notebook.
DEPENDS: dict[str, tuple[str, ...]] = {}


def register(check_: Check) -> Check:
    if check_.id in REGISTRY:
        raise ValueError(f"duplicate check id {check_.id!r}")
    REGISTRY[check_.id] = check_
    return check_


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
        return "an array of Python objects (dtype object)"
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


def call_cases(fn: Callable[..., Any], cases: Sequence[Case]) -> list[Outcome]:
    """Call ``fn`` on every case, turning results into arrays and exceptions into messages."""
    outcomes = []
    for case in cases:
        try:
            args = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in case.args)
            result = fn(*args, **case.kwargs)
        except (Exception, SystemExit) as exc:
            outcomes.append(Outcome(error=f"{type(exc).__name__}: {exc}"[:500]))
            continue
        try:
            outcomes.append(Outcome(values=to_arrays(result)))
        except BadReturn as exc:
            outcomes.append(Outcome(error=f"BadReturn: {exc}"))
        except Exception as exc:  # an object whose conversion itself misbehaves
            outcomes.append(Outcome(error=f"BadReturn: returned a {type(result).__name__} that is not numbers"
                                          f" ({type(exc).__name__})"))
    return outcomes


def exec_cells(cells: Sequence[tuple[str, str]], namespace: dict[str, Any]) -> list[str]:
    """Run answer cells (label, source) one after another in ``namespace``, as grading does.

    A cell that raises does not stop the next one; the returned list says which cell raised what.
    """
    import traceback

    errors: list[str] = []
    for label, source in cells:
        try:
            exec(compile(source, f"<{label}>", "exec"), namespace)
        except BaseException as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            line = next((f.lineno for f in reversed(tb) if f.filename == f"<{label}>"), None)
            where = f" (line {line})" if line else ""
            errors.append(f"the cell of {label} raised {type(exc).__name__}: {exc}{where}"[:500])
    return errors


def fresh_namespace() -> dict[str, Any]:
    """What an answer cell starts from when graded: NumPy as ``np`` and nothing else."""
    return {"__name__": "__student__", "np": np, "numpy": np}


class CheckFailed(AssertionError):
    """Raised in a notebook when a check fails; its message names the likely mistake."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback through the course's checking code; short
        # lines, so that `nbgrader validate` (which cuts lines at 90 characters) shows it whole
        import textwrap

        lines = [ln for par in str(self).splitlines() for ln in (textwrap.wrap(par, 76) or [""])]
        return [f"\x1b[0;31mCheckFailed\x1b[0m: {lines[0]}", *("    " + ln for ln in lines[1:])]


def first_error(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> str | None:
    """Message for the first call that raised or returned something that is not numbers, if any."""
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.error is not None:
            if outcome.error.startswith("NotImplementedError"):
                return f"{check_.function} is not written yet: replace `raise NotImplementedError` with your code"
            if outcome.error.startswith("BadReturn"):
                what = outcome.error.partition(": ")[2] or "returned something that is not numbers"
                return f"{check_.function}{case.describe()} {what}"
            return f"calling {check_.function}{case.describe()} raised {outcome.error}"
    return None


def run_check(check_: Check, fn: Callable[..., Any], seed: int = 0) -> str | None:
    """Run one check in this process; ``None`` when it passes, else the message."""
    cases = check_.cases(np.random.default_rng(seed))
    outcomes = call_cases(fn, cases)
    return first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)


def safe_verify(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> str | None:
    """``check_.verify``, with a failure of the verifier itself reported as a message."""
    try:
        return check_.verify(list(cases), list(outcomes))
    except Exception as exc:
        return f"the returned values could not be checked ({type(exc).__name__})"


# --------------------------------------------------------------------- the notebook side
#: Modules an answer may import when graded: the standard library and NumPy.
ALLOWED_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"numpy"}


def _cell_of(fn: Any) -> str | None:
    """The source of the notebook cell that defined ``fn``, or ``None`` outside a notebook."""
    import linecache
    import os

    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    name = code.co_filename
    in_cell = name.startswith("<ipython-input") or ("ipykernel_" in name and not os.path.exists(name))
    if not in_cell:
        return None
    lines = linecache.getlines(name)
    return "".join(lines) if lines else None


@contextlib.contextmanager
def allowed_imports_only() -> Iterator[None]:
    """Answer code (code whose globals are named ``__student__``) may import only the standard
    library and NumPy, as when graded; every other import raises ``ModuleNotFoundError``."""
    import builtins

    real_import = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        if (level == 0 and isinstance(globals, dict) and globals.get("__name__") == "__student__"
                and name.partition(".")[0] not in ALLOWED_MODULES):
            raise ModuleNotFoundError(f"No module named '{name.partition('.')[0]}'")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    try:
        yield
    finally:
        builtins.__import__ = real_import


@contextlib.contextmanager
def _as_graded() -> Iterator[None]:
    """Student code runs as in grading: output discarded, warnings silent, and no imports but
    the standard library and NumPy (the course package is not there when grading)."""
    import io
    import warnings

    sink = io.StringIO()
    with (allowed_imports_only(), warnings.catch_warnings(), contextlib.redirect_stdout(sink),
          contextlib.redirect_stderr(sink)):
        warnings.simplefilter("ignore")
        yield


#: The course's own implementation of each graded function that others may call (filled by
#: :mod:`selfattn.exercise_checks`): a function failing only because of a dependency is checked
#: again with these, as grading does with the instructor's answer (see autograder/blame.py).
REFERENCE_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def _graded_copy(fn: Any, function: str, replaced: dict[str, Any] | None = None) -> tuple[Any, list[str]]:
    """Re-run the cells of ``fn`` (and of the graded functions it may call) in a fresh namespace.

    ``replaced`` maps dependencies to implementations used instead of their cells. Returns the
    function as grading will see it (or ``None``) and the errors of the cells.
    """
    replaced = replaced or {}
    own = _cell_of(fn)
    cells = []
    kernel = getattr(fn, "__globals__", {})
    namespace = fresh_namespace()
    for dep in DEPENDS.get(function, ()):
        if dep in replaced:
            namespace[dep] = replaced[dep]
            continue
        source = _cell_of(kernel.get(dep))
        if source is not None and source != own:
            cells.append((dep, source))
    cells.append((function, own or ""))
    with _as_graded():
        errors = exec_cells(cells, namespace)
    graded = namespace.get(function)
    return (graded if callable(graded) else None), errors


def _advice(message: str, fn: Any, function: str) -> str:
    """A sentence on how grading differs from the notebook, when that explains ``message``."""
    import re

    kernel = getattr(fn, "__globals__", {})
    if (m := re.search(r"NameError: name '(\w+)' is not defined", message)) and m.group(1) in kernel:
        return (f"`{m.group(1)}` exists in your notebook but not in the cell of {function}: each answer is "
                f"graded on its own, with NumPy only, so define or import it inside that cell")
    if (m := re.search(r"No module named '(\w+)'", message)) and m.group(1) not in ALLOWED_MODULES:
        return (f"answers are graded with the standard library and NumPy only: do not import "
                f"`{m.group(1)}` in the cell of {function}")
    return ""


def _run_graded(check_: Check, fn: Any, seed: int, replaced: dict[str, Any] | None = None) -> str | None:
    graded, errors = _graded_copy(fn, check_.function, replaced)
    if graded is None:
        message = f"no function named {check_.function} was defined"
        return message + (" (" + "; ".join(errors) + ")" if errors else "")
    cases = check_.cases(np.random.default_rng(seed))
    with _as_graded():
        outcomes = call_cases(graded, cases)
    return first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)


def _failing_dependencies(fn: Any, function: str, seed: int) -> list[str]:
    """The graded functions ``function`` may call, defined in cells, that fail their public checks."""
    kernel = getattr(fn, "__globals__", {})
    failing = []
    for dep in DEPENDS.get(function, ()):
        dep_fn = kernel.get(dep)
        if dep not in REFERENCE_FUNCTIONS or _cell_of(dep_fn) is None or _cell_of(dep_fn) == _cell_of(fn):
            continue
        public = [REGISTRY[cid] for cid in PUBLIC if REGISTRY[cid].function == dep]
        if any(_run_graded(c, dep_fn, seed) is not None for c in public):
            failing.append(dep)
    return failing


def judge(check_: Check, fn: Callable[..., Any], seed: int = 0) -> tuple[str | None, str]:
    """(message or ``None``, blame note) of one check run the way grading runs it.

    When ``fn`` was defined in a notebook cell, that cell (and the cells of the graded functions
    it may call) run again in a fresh namespace holding only NumPy, where the course package
    cannot be imported, and the check calls that copy; elsewhere ``fn`` is called directly. A
    function that fails only because a function it calls fails passes, with a note naming the
    function to fix.
    """
    if _cell_of(fn) is None:
        return run_check(check_, fn, seed), ""
    message = _run_graded(check_, fn, seed)
    if message is not None and (deps := _failing_dependencies(fn, check_.function, seed)):
        if _run_graded(check_, fn, seed, {d: REFERENCE_FUNCTIONS[d] for d in deps}) is None:
            names = ", ".join(deps)
            return None, f"{check_.function} is right, but it calls your {names}, which fails: fix {names}"
    if message is not None and (advice := _advice(message, fn, check_.function)):
        message = f"{advice}. {message}"
    return message, ""


def run_as_graded(check_: Check, fn: Callable[..., Any], seed: int = 0) -> str | None:
    """Run one check the way grading does (:func:`judge`); ``None`` when it passes, else the message."""
    return judge(check_, fn, seed)[0]


def check(fn: Callable[..., Any], check_id: str, seed: int = 0) -> None:
    """Notebook entry point: run check ``check_id`` on ``fn`` as grading will; print a tick or
    raise :class:`CheckFailed` with the diagnosis first."""
    if check_id not in REGISTRY:
        raise KeyError(f"unknown check {check_id!r}")
    check_ = REGISTRY[check_id]
    message, blame = judge(check_, fn, seed)
    if message is not None:
        raise CheckFailed(f"{message}\n(check of {check_.function}: {check_.description})")
    print(f"✓ {check_.function}: {check_.description}" + (f" ({blame})" if blame else ""))


def summary(namespace: dict[str, Any], exercises: dict[str, tuple[float, Sequence[str]]]) -> None:
    """Print one line per exercise: its points, and whether its public checks pass, fail or are
    not attempted yet (like Otter's ``check_all``). Never raises, whatever is unwritten.

    ``exercises`` maps each graded function to (its points, its public check ids).
    """
    total = earned = 0.0
    for function, (points, check_ids) in exercises.items():
        total += points
        fn = namespace.get(function)
        if not callable(fn):
            print(f"·  {function} ({points:g} points): not attempted (run its cell)")
            continue
        failed, blame = None, ""
        for check_id in check_ids:
            failed, why = judge(REGISTRY[check_id], fn)
            blame = blame or why
            if failed is not None:
                break
        if failed is None:
            earned += points
            print(f"✓  {function} ({points:g} points): public checks pass" + (f"; {blame}" if blame else ""))
        elif "is not written yet" in failed:
            print(f"·  {function} ({points:g} points): not attempted")
        else:
            print(f"✗  {function} ({points:g} points): {failed.splitlines()[0]}")
    print(f"Public checks pass for exercises worth {earned:g} of {total:g} points; hidden checks decide the rest.")


# ---------------------------------------------------------------------------------------------
# helpers for verify functions


def tolerance(cases: Sequence[Case]) -> tuple[float, float]:
    """(rtol, atol): what a correct float32 implementation reaches (looser for float32 inputs).

    Every classic mistake is off by far more than this.
    """
    f32 = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for c in cases for a in c.args)
    return (2e-4, 1e-5) if f32 else (1e-5, 1e-6)


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    """Same shape and equal within tolerance; ``-inf`` must meet ``-inf`` (or a large negative)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return False
    inf = np.isneginf(want)
    if (np.isnan(got) & ~np.isnan(want)).any():
        return False
    if inf.any() and not (got[inf] <= -1e9).all():
        return False
    return bool(np.allclose(got[~inf], want[~inf], rtol=rtol, atol=atol))

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
import io
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .answer import ANSWER_CELL, graded_source
from .calling import (
    ALLOWED_MODULES,
    BAD_RETURN,
    NOT_ANSWERED,
    RAISED,
    TIME_LIMIT,
    BadReturn,
    Case,
    Outcome,
    TimeLimit,
    allowed_imports_only,
    call_cases,
    exec_cells,
    fresh_namespace,
    to_arrays,
)
from .fair_blame import fair_results
from .findings import Finding, Kind

if TYPE_CHECKING:
    from .exercise import Exercise

__all__ = [
    "REGISTRY",
    "BadReturn",
    "Case",
    "Check",
    "CheckFailed",
    "Finding",
    "Kind",
    "Outcome",
    "TimeLimit",
    "allowed_imports_only",
    "call_cases",
    "check",
    "exec_cells",
    "fresh_namespace",
    "judge",
    "register",
    "summary",
    "time_limit",
    "to_arrays",
]


@dataclass(frozen=True)
class Check:
    """One named check of one graded function."""

    id: str
    function: str
    description: str
    cases: Callable[[np.random.Generator], list[Case]]
    verify: Callable[[list[Case], list[Outcome]], Finding | None]
    exercise: Exercise  # the record this check belongs to (see selfattn.exercise)
    hidden: bool = False  # run only when grading


#: Every check by id (public ones registered by selfattn.exercise_checks, hidden ones by the grader).
REGISTRY: dict[str, Check] = {}


def register(check_: Check) -> Check:
    if check_.id in REGISTRY:
        raise ValueError(f"duplicate check id {check_.id!r}")
    REGISTRY[check_.id] = check_
    return check_


class CheckFailed(AssertionError):
    """Raised in a notebook when a check fails; its message names the likely mistake."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback through the course's checking code; short
        # lines, so that `nbgrader validate` (which cuts lines at 90 characters) shows it whole
        import textwrap

        lines = [ln for par in str(self).splitlines() for ln in (textwrap.wrap(par, 76) or [""])]
        return [f"\x1b[0;31mCheckFailed\x1b[0m: {lines[0]}", *("    " + ln for ln in lines[1:])]


def first_error(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> Finding | None:
    """The finding for the first call that raised or returned something that is not numbers, if any."""
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.kind == NOT_ANSWERED:
            return Finding(f"{check_.function} is not written yet: replace `raise NotImplementedError` with your "
                           f"code", Kind.NOT_ANSWERED, "NotImplementedError")
        if outcome.kind == TIME_LIMIT:
            return Finding(f"{check_.function}{case.describe()} {outcome.error}; "
                           f"when graded it is stopped and its checks score 0", Kind.TIME_OUT)
        if outcome.kind == BAD_RETURN:
            what = outcome.error or "returned something that is not numbers"
            return Finding(f"{check_.function}{case.describe()} {what}", Kind.NOT_NUMBERS)
        if outcome.kind == RAISED:
            return Finding(f"calling {check_.function}{case.describe()} raised {outcome.error}", Kind.RAISED,
                           outcome.exception)
    return None


def run_check(check_: Check, fn: Callable[..., Any], seed: int = 0) -> Finding | None:
    """Run one check in this process; ``None`` when it passes, else the message."""
    cases = check_.cases(np.random.default_rng(seed))
    outcomes = call_cases(fn, cases)
    return first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)


def safe_verify(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> Finding | None:
    """``check_.verify`` as a :class:`Finding` (a verifier's plain message counts as wrong values),
    with a failure of the verifier itself reported as one."""
    try:
        found = check_.verify(list(cases), list(outcomes))
    except Exception as exc:
        return Finding(f"the returned values could not be checked ({type(exc).__name__})", Kind.UNCHECKABLE)
    if found is None or isinstance(found, Finding):
        return found
    return Finding(str(found), Kind.WRONG_VALUES)


def _shell() -> Any:
    """The running IPython shell, or ``None`` outside IPython."""
    import sys

    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    return get_ipython()


def _unwrapped(fn: Any) -> Any:
    """``fn`` without its decorators (``functools.lru_cache``, ``functools.wraps`` wrappers)."""
    import inspect

    try:
        return inspect.unwrap(fn) if callable(fn) else fn
    except ValueError:  # a cycle of __wrapped__
        return fn


def _globals_of(fn: Any) -> dict[str, Any]:
    """The namespace ``fn`` was defined in (the kernel's, for a notebook cell)."""
    found = getattr(_unwrapped(fn), "__globals__", None)
    if isinstance(found, dict):
        return found
    shell = _shell()
    return getattr(shell, "user_ns", {}) if shell is not None else {}


def _in_a_cell(filename: str) -> bool:
    import os

    return filename.startswith("<ipython-input") or ("ipykernel_" in filename and not os.path.exists(filename))


def _history(shell: Any) -> list[str]:
    """The raw text of every cell run in this kernel, by execution count (index 0 is empty)."""
    hist = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return [h if isinstance(h, str) else "" for h in hist] if isinstance(hist, list) else []


def _raw_cell_named(shell: Any, filename: str) -> str | None:
    """The raw text of the cell IPython compiled under ``filename`` (its magics not yet transformed).

    The cells run since this module was imported are known by name (:func:`_remember_run`);
    older ones are looked for in the history, whose texts lost their final newlines."""
    if filename in _NAMED:
        return _NAMED[filename]
    hist = _history(shell)
    for n, raw in ((n, hist[n] + end) for n in range(len(hist) - 1, 0, -1) for end in ("", "\n")):
        try:
            if shell.compile.get_code_name(raw, shell.transform_cell(raw), n) == filename:
                return raw
        except Exception:
            return None
    return None


def _latest_cell_defining(shell: Any, name: str) -> str | None:
    """The raw text of the last cell run that binds ``name`` at its top level."""
    from .answer import defined_names

    hist = _history(shell)
    return next((hist[n] for n in range(len(hist) - 1, 0, -1) if name in defined_names(hist[n])), None)


#: cell id -> (order, raw text) of the last run of each cell in this kernel (when the front end
#: says which cell runs, as JupyterLab, Notebook 7 and VS Code do)
_RUNS: dict[str, tuple[int, str]] = {}


def _remember_run(info: Any) -> None:
    cell_id = getattr(info, "cell_id", None)
    raw = getattr(info, "raw_cell", None)
    if not isinstance(raw, str) or getattr(info, "silent", False):
        return
    shell = _shell()
    try:  # the name IPython compiles this cell under, so that a function's code leads back to it
        transformed = getattr(info, "transformed_cell", None) or shell.transform_cell(raw)
        _NAMED[shell.compile.get_code_name(raw, transformed, shell.execution_count)] = raw
    except Exception:
        pass
    if isinstance(cell_id, str) and cell_id:
        _RUNS[cell_id] = (next(_ORDER), raw)


_ORDER = itertools.count()
#: compiled name -> exact raw text of every cell run since this module was imported
_NAMED: dict[str, str] = {}


def _watch_cells() -> None:
    """Remember which cell ran which text, from now on (called when this module is imported)."""
    shell = _shell()
    events = getattr(shell, "events", None)
    if events is not None and _remember_run not in events.callbacks.get("pre_run_cell", []):
        events.register("pre_run_cell", _remember_run)


_SAVED: dict[tuple[str, float], dict[str, dict[str, str]]] = {}


def _saved_answer_cells(function: str) -> dict[str, str]:
    """id -> saved text of the answer cells of ``function`` (grade id = its name) in the notebooks
    of the kernel's working folder (the notebook's own folder): what the grader reads if the
    notebook is handed in as saved."""
    import json
    from pathlib import Path

    cells: dict[str, str] = {}
    for path in Path.cwd().glob("*.ipynb"):
        try:
            key = (str(path), path.stat().st_mtime)
            if key not in _SAVED:
                found: dict[str, dict[str, str]] = {}
                for c in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
                    nbg = c.get("metadata", {}).get("nbgrader", {})
                    if nbg.get("solution") and isinstance(c.get("id"), str):
                        text = c.get("source", "")
                        text = "".join(text) if isinstance(text, list) else str(text)
                        found.setdefault(str(nbg.get("grade_id")), {})[c["id"]] = text
                _SAVED[key] = found
            cells |= _SAVED[key].get(function, {})
        except (OSError, ValueError, AttributeError, TypeError):
            continue
    return cells


def _saved_answer_of_this_run(name: str) -> str | None:
    """The saved text of answer ``name`` when every cell run since the course package was imported
    is a cell of one saved notebook (a run of the file, as ``nbgrader validate`` and Restart & Run
    All of a saved notebook do), else ``None``: a front end that does not name its cells may be
    running unsaved edits."""
    import json
    from pathlib import Path

    ran = {raw.rstrip() for raw in _NAMED.values()}
    for path in Path.cwd().glob("*.ipynb"):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            texts = {("".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))).rstrip()
                     for c in cells if c.get("cell_type") == "code"}
            answer = next((c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == name
                           and c.get("metadata", {}).get("nbgrader", {}).get("solution")), None)
        except (OSError, ValueError, AttributeError, TypeError, KeyError):
            continue
        if answer is not None and ran and ran <= texts:
            source = answer.get("source", "")
            return "".join(source) if isinstance(source, list) else str(source)
    return None


def _graded_text(own: str, name: str) -> str | None:
    """The text the grader will read for answer ``name`` when it differs from ``own`` (the text of
    the cell that defined the function), else ``None``; needs a front end that names the cells
    it runs.

    That is the last text run in the answer cell; if the answer cell has not run since the course
    package was imported while the cell of ``own`` is known to be another one, its saved text."""
    saved = _saved_answer_cells(name)
    ran = [_RUNS[i] for i in saved if i in _RUNS]
    if not _RUNS:  # no cell ids: only a run of the saved notebook itself (nbgrader validate) is known
        answer = _saved_answer_of_this_run(name)
        return answer if answer is not None and answer.rstrip() != own.rstrip() else None
    if ran:
        answer = max(ran)[1]
    else:
        own_ids = {i for i, (_, raw) in _RUNS.items() if raw.rstrip() == own.rstrip()}
        if not saved or not own_ids or own_ids & saved.keys():
            return None
        answer = next(iter(saved.values()))
    return answer if answer.rstrip() != own.rstrip() else None


def _raw_answer(fn: Any, name: str) -> tuple[str | None, str]:
    """(raw text of the cell graded as the answer ``name``, a note), or ``(None, "")`` when ``fn``
    does not come from a notebook cell.

    The cell is the answer cell (found by its id) when the front end says which cell ran what;
    else the cell that defined ``fn`` (through its code, or, for a decorated function or one made
    by a magic, the last cell that defined ``name``).
    """
    import linecache

    shell = _shell()
    code = getattr(_unwrapped(fn), "__code__", None)
    filename = getattr(code, "co_filename", "")
    own: str | None = None
    if filename and _in_a_cell(filename):
        own = _raw_cell_named(shell, filename) if shell is not None else None
        if own is None:
            lines = linecache.getlines(filename)
            own = "".join(lines) if lines else None
    elif shell is not None:
        own = _latest_cell_defining(shell, name)
    if own is not None and (answer := _graded_text(own, name)) is not None:
        return answer, (f"your answer must be in {ANSWER_CELL} ({name} was defined in another cell, and "
                        f"only that cell is graded)")
    return own, ""


def _answer_of(fn: Any, name: str) -> tuple[str | None, str]:
    """(the Python the grader runs for answer ``name``, a note for the student), or ``(None, "")``
    outside a notebook. See :mod:`selfattn.answer`."""
    raw, note = _raw_answer(fn, name)
    if raw is None:
        return None, ""
    answer = graded_source(raw)
    return answer.python, "; ".join(n for n in (note, answer.note) if n)


def _cell_of(fn: Any, name: str | None = None) -> str | None:
    """The Python the grader runs for the notebook cell of ``fn`` (answer ``name``, by default the
    function's own name), or ``None`` outside a notebook."""
    name = name or getattr(_unwrapped(fn), "__name__", "")
    return _answer_of(fn, name)[0]


class _Discard(io.TextIOBase):
    """A text stream that keeps nothing (a flood of prints costs no memory)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


@contextlib.contextmanager
def _as_graded() -> Iterator[None]:
    """Student code runs as in grading: output discarded, warnings silent, and no imports but
    the standard library and NumPy (the course package is not there when grading)."""
    import warnings

    sink = _Discard()
    with (allowed_imports_only(), warnings.catch_warnings(), contextlib.redirect_stdout(sink),
          contextlib.redirect_stderr(sink)):
        warnings.simplefilter("ignore")
        yield


#: Seconds a notebook check waits for one call before calling it stuck (grading stops it by CPU time).
NOTEBOOK_SECONDS = 10.0


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeLimit` in the code run inside after ``seconds``, and again every
    ``seconds`` until it ends: a call that loops forever fails its check instead of hanging the
    kernel, and so does the next stuck call of the same check.

    Needs ``SIGALRM`` and the main thread (a notebook kernel runs cells there); elsewhere it
    does nothing.
    """
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise TimeLimit(f"gave no result within {seconds:g} s (an infinite loop?)")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _graded_copy(fn: Any, exercise: Exercise, replaced: dict[str, Any] | None = None) -> tuple[Any, list[str]]:
    """Re-run the cells of ``fn`` (and of the graded functions it may call) in a fresh namespace.

    ``replaced`` maps dependencies to implementations used instead of their cells. Returns the
    function as grading will see it (or ``None``) and the errors of the cells.
    """
    replaced = replaced or {}
    function = exercise.function
    own = _cell_of(fn, function)
    cells = []
    kernel = _globals_of(fn)
    namespace = fresh_namespace()
    for dep in exercise.dependency_names:
        if dep in replaced:
            namespace[dep] = replaced[dep]
            continue
        source = _cell_of(kernel.get(dep), dep)
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

    kernel = _globals_of(fn)
    if (m := re.search(r"NameError: name '(\w+)' is not defined", message)) and m.group(1) in kernel:
        return (f"`{m.group(1)}` exists in your notebook but not in the cell of {function}: each answer is "
                f"graded on its own, with NumPy only, so define or import it inside that cell")
    if (m := re.search(r"No module named '(\w+)'", message)) and m.group(1) not in ALLOWED_MODULES:
        return (f"answers are graded with the standard library and NumPy only: do not import "
                f"`{m.group(1)}` in the cell of {function}")
    return ""


def _run_graded(check_: Check, fn: Any, seed: int, replaced: dict[str, Any] | None = None) -> Finding | None:
    graded, errors = _graded_copy(fn, check_.exercise, replaced)
    if graded is None:
        message = f"no function named {check_.function} was defined"
        return Finding(message + (" (" + "; ".join(errors) + ")" if errors else ""), Kind.NOT_ANSWERED)
    cases = check_.cases(np.random.default_rng(seed))
    with _as_graded(), time_limit(NOTEBOOK_SECONDS):
        outcomes = call_cases(graded, cases)
    return first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)


def _failing_dependencies(fn: Any, exercise: Exercise, seed: int) -> list[Exercise]:
    """The graded functions ``exercise`` may call, defined in cells, that fail their public checks
    (the notebook knows no hidden check, so it blames on public checks only; grading uses all)."""
    kernel = _globals_of(fn)
    own = _cell_of(fn, exercise.function)
    failing = []
    for dep in exercise.depends:
        dep_fn = kernel.get(dep.function)
        dep_cell = _cell_of(dep_fn, dep.function) if dep_fn is not None else None
        if dep.reference is None or dep_cell is None or dep_cell == own:
            continue
        if any(_run_graded(c, dep_fn, seed) is not None for c in dep.public_checks):
            failing.append(dep)
    return failing


def judge(check_: Check, fn: Callable[..., Any], seed: int = 0) -> tuple[Finding | None, str]:
    """(message or ``None``, blame note) of one check run the way grading runs it.

    When ``fn`` comes from a notebook, the text the grader reads runs again in a fresh namespace
    holding only NumPy, where the course package cannot be imported, and the check calls that
    copy: the answer cell (when the front end names the cells it runs, else the cell that defined
    ``fn``, or for a decorated function the last cell defining its name), turned into plain Python
    by :func:`selfattn.answer.graded_source`, with the cells of the graded functions it may call.
    Elsewhere ``fn`` is called directly. When a function it calls fails its public checks, it is
    judged with the course's reference of that function (:mod:`selfattn.fair_blame`): if it then
    passes, it passes with a note naming the function to fix, else the message names its own mistake.
    The note also says when the text judged is not the cell that defined ``fn``, or when magics were
    stripped or refused.
    """
    source, note = _answer_of(fn, check_.function)
    if source is None:  # defined in a module or by exec: called as it is, with the same time limit
        with time_limit(NOTEBOOK_SECONDS):
            return run_check(check_, fn, seed), ""
    message = _run_graded(check_, fn, seed)
    if message is not None and (deps := _failing_dependencies(fn, check_.exercise, seed)):
        references = {d.function: d.reference for d in deps}
        fair, blame = fair_results(check_.function, {check_.id: message}, list(references),
                                   lambda _deps: {check_.id: _run_graded(check_, fn, seed, references)})
        message = fair[check_.id]
        if message is None:
            return None, "; ".join(n for n in (note, blame) if n)
        message = Finding(f"{message} ({blame})", message.kind, message.name)
    if message is not None and (advice := _advice(message, fn, check_.function)):
        message = Finding(f"{advice}. {message}", message.kind, message.name)
    if message is not None and note:
        message = Finding(f"{note}. {message}", message.kind, message.name)
    return message, note


def check(fn: Callable[..., Any], check_id: str, seed: int = 0) -> None:
    """Notebook entry point: run check ``check_id`` on ``fn`` as grading will; print a tick or
    raise :class:`CheckFailed` with the diagnosis first."""
    if check_id not in REGISTRY:
        from . import exercise_checks  # noqa: F401 - the records register the public checks
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
        elif getattr(failed, "name", None) == "NotImplementedError":  # still the stub
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


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, *, equal_nan: bool = False) -> bool:
    """Same shape and equal within tolerance; ``-inf`` must meet ``-inf`` (or a large negative).

    With ``equal_nan`` (comparing with a named mistake, which may itself give NaN), NaN must meet
    NaN in the same places, and some entry besides must be a number to compare. A sealed result
    (:class:`selfattn.withheld.Sealed`) must be met exactly.
    """
    from .withheld import Sealed

    if isinstance(want, Sealed) or isinstance(got, Sealed):
        return want.holds(got) if isinstance(want, Sealed) else got.holds(want)
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return False
    inf = np.isneginf(want)
    nan = np.isnan(want) if equal_nan else np.zeros(want.shape, dtype=bool)
    if (np.isnan(got) != nan).any() if equal_nan else (np.isnan(got) & ~np.isnan(want)).any():
        return False
    if equal_nan and nan.size and nan.all():
        return False
    if inf.any() and not (got[inf] <= -1e9).all():
        return False
    keep = ~inf & ~nan
    return bool(np.allclose(got[keep], want[keep], rtol=rtol, atol=atol))


_watch_cells()

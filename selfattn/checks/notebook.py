"""The notebook's side of the checks: ``check()``, ``summary()`` and the judging they share.

In a notebook a check runs in the student's kernel, for instant feedback, but the way grading
runs it: the text the grader reads (:mod:`selfattn.checks.kernel_cells`) runs again in a fresh
namespace holding only NumPy, its calls are given up after :data:`NOTEBOOK_SECONDS`, and the
result is decided by the same functions as the grader's (:mod:`selfattn.checks.judging`), so the
student sees the same verdict and message either way.

Importing this module registers the public checks (:mod:`selfattn.checks.exercises`), so
``check()`` and ``summary()`` work in a kernel that has run no other cell.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import io
import re
import signal
import sys
import textwrap
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import exercises as _exercises  # noqa: F401 - importing the records registers the public checks
from . import module_state
from .calling import (
    ALLOWED_MODULES,
    RAISED,
    VALUE,
    CellError,
    Outcome,
    TimeLimit,
    allowed_imports_only,
    call_cases,
    exec_cells,
    fresh_namespace,
    graded_wall_seconds,
)
from .fair_blame import blame_note, cannot_judge_note, own_mistake_note
from .findings import Finding, Kind
from .judging import first_error, run_check, safe_verify
from .kernel_cells import answer_of, cell_of, globals_of, in_a_kernel, stale_note
from .record import REGISTRY, Check, Exercise

__all__ = ["NOTEBOOK_SECONDS", "CheckFailed", "check", "judge", "summary", "time_limit", "using"]

#: (exception type name, the name it says is missing) of what raised while a check ran
Raised = tuple[str | None, str | None]


class CheckFailed(AssertionError):
    """Raised in a notebook when a check fails; its message names the likely mistake."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback through the course's checking code
        first, *rest = _wrapped(str(self))
        return [f"\x1b[0;31mCheckFailed\x1b[0m: {first}", *rest]


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
    sink = _Discard()
    with (allowed_imports_only(), warnings.catch_warnings(), contextlib.redirect_stdout(sink),
          contextlib.redirect_stderr(sink)):
        warnings.simplefilter("ignore")
        yield


#: CPU seconds a notebook check gives one call before calling it stuck (grading's limit is of the same
#: kind: :data:`~selfattn.checks.calling.GRADED_CPU_SECONDS` of CPU for a run of a function's checks).
NOTEBOOK_SECONDS = 10.0


@contextlib.contextmanager
def time_limit(seconds: float, wait: float | None = None) -> Iterator[None]:
    """Raise :class:`TimeLimit` in the code run inside after ``seconds`` of this process's CPU time, or
    after ``wait`` seconds in all (default: grading's, :func:`~selfattn.checks.calling.graded_wall_seconds`),
    and again every ``seconds`` (``wait``) until it ends: a call that loops forever fails its check
    instead of hanging the kernel, and so does the next stuck call of the same check. The two limits
    are of grading's kinds (CPU time, and time in all for a call that waits); each message says which.

    Needs ``SIGPROF``, ``SIGALRM`` and the main thread (a notebook kernel runs cells there);
    elsewhere it does nothing.
    """
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    wait = graded_wall_seconds() if wait is None else wait

    def busy(signum, frame):
        raise TimeLimit(f"used {seconds:g} s of CPU time without a result (an infinite loop?)")

    def waiting(signum, frame):
        raise TimeLimit(f"waited {wait:g} s without a result (is it sleeping, or waiting for something?)")

    previous = signal.signal(signal.SIGPROF, busy), signal.signal(signal.SIGALRM, waiting)
    signal.setitimer(signal.ITIMER_PROF, seconds, seconds)
    signal.setitimer(signal.ITIMER_REAL, wait, wait)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def _graded_copy(fn: Any, exercise: Exercise) -> tuple[Any, list[CellError], dict[str, Any]]:
    """Re-run the cells of ``fn`` (and of the graded functions it may call) in a fresh namespace.

    Returns the function as grading will see it (or ``None``), the errors of the cells and the namespace.
    """
    function = exercise.function
    own = cell_of(fn, function)
    cells = []
    kernel = globals_of(fn)
    namespace = fresh_namespace()
    for dep in exercise.dependency_names:
        source = cell_of(kernel.get(dep), dep)
        if source is not None and source != own:
            cells.append((dep, source))
    cells.append((function, own or ""))
    with _as_graded():
        errors = exec_cells(cells, namespace)
    graded = namespace.get(function)
    return (graded if callable(graded) else None), errors, namespace


def _advice(raised: Sequence[Raised], fn: Any, function: str) -> str:
    """A sentence on how grading differs from the notebook, when what ``raised`` explains it: the
    first ``NameError`` names something the kernel has, or the first ``ModuleNotFoundError`` a
    module grading does not have."""
    kernel = globals_of(fn)
    name = next((missing for exception, missing in raised if exception == "NameError"), None)
    if name is not None and name in kernel:
        return (f"`{name}` exists in your notebook but not in the cell of {function}: each answer is "
                f"graded on its own, with NumPy only, so define or import it inside that cell")
    module = next((missing for exception, missing in raised if exception == "ModuleNotFoundError"), None)
    if module is not None and module not in ALLOWED_MODULES:
        return (f"answers are graded with the standard library and NumPy only: do not import "
                f"`{module}` in the cell of {function}")
    return ""


def _first_raised(outcomes: Sequence[Outcome]) -> list[Raised]:
    """What the call that decides the check raised (the first call that gave no numbers), if it raised."""
    failed = next((o for o in outcomes if o.kind != VALUE), None)
    return [(failed.exception, failed.missing)] if failed is not None and failed.kind == RAISED else []


#: (the arguments in the order of the function's parameters, what it returned) of one call a function
#: made to a graded function it may call
Call = tuple[tuple[Any, ...], Any]


def _run_graded(check_: Check, fn: Any, seed: int, standing_in: Mapping[str, Callable[..., Any]] | None = None,
                watched: dict[str, list[Call]] | None = None) -> tuple[Finding | None, list[Raised]]:
    """(what the check finds, what raised on the way) for the copy of ``fn`` grading would see.

    ``standing_in`` replaces graded functions it may call (defined in cells of their own) by name, the
    other definitions of their cells kept, as grading's re-run with the course's functions does;
    ``watched`` collects, by name, the calls it makes to the others (:func:`_watch`)."""
    graded, errors, namespace = _graded_copy(fn, check_.exercise)
    if graded is None:
        message = f"no function named {check_.function} was defined"
        return (Finding(message + (" (" + "; ".join(map(str, errors)) + ")" if errors else ""), Kind.NOT_ANSWERED),
                [(e.exception, e.missing) for e in errors])
    own = cell_of(fn, check_.function)
    separate = [d for d in check_.exercise.dependency_names if cell_of(globals_of(fn).get(d), d) not in (None, own)]
    for dep in separate:  # a cell that raised or was refused defines nothing: the course's function stands in
        if standing_in and dep in standing_in:
            namespace[dep] = standing_in[dep]
        elif watched is not None and callable(namespace.get(dep)):
            namespace[dep] = _watch(namespace[dep], watched.setdefault(dep, []))
    cases = check_.cases(np.random.default_rng(seed))
    with module_state.as_at_start() as put_back:  # the calls and their verdict, with grading's state
        with _as_graded(), time_limit(NOTEBOOK_SECONDS):
            outcomes = call_cases(graded, cases)
        found = first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)
    if found is not None and (named := _kernel_changes(put_back, fn, check_.exercise)):
        found = dataclasses.replace(found, text=f"{named}. {found.text}")
    return found, _first_raised(outcomes)


def _snapshot(value: Any) -> Any:
    """``value`` as it is now (arrays copied, in lists, tuples and dicts too), so a later change in place
    does not show; anything else as it is."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (list, tuple):
        return type(value)(_snapshot(v) for v in value)
    if type(value) is dict:
        return {k: _snapshot(v) for k, v in value.items()}
    return value


def _watch(own: Callable[..., Any], calls: list[Call], keep: int = 64) -> Callable[..., Any]:
    """``own`` (a student's graded function) keeping in ``calls`` the arguments and result of each call
    from outside it (its own recursive calls are not kept), the arguments bound to its parameters."""
    depth = [0]

    def watched(*args: Any, **kwargs: Any) -> Any:
        before = (_snapshot(args), _snapshot(kwargs))
        depth[0] += 1
        try:
            result = own(*args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] == 0 and len(calls) < keep:
            try:
                bound = inspect.signature(own).bind(*before[0], **before[1])
                bound.apply_defaults()
                calls.append((tuple(bound.arguments.values()), _snapshot(result)))
            except (TypeError, ValueError):
                pass  # called in a way its signature does not take: no evidence
        return result

    try:  # its name and signature, for an answer that reads them
        return functools.wraps(own)(watched)
    except Exception:  # a callable whose attributes misbehave: watched as it is
        return watched


def _broken_contract(dep: Exercise, calls: Sequence[Call]) -> str:
    """What was wrong in what ``dep`` returned on one of ``calls`` (:attr:`Exercise.contract`), or ``""``."""
    if dep.contract is None:
        return ""
    for arguments, result in calls:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                why = dep.contract(arguments, result)
        except Exception:  # an input the contract cannot read: no evidence
            why = None
        if why:
            return why
    return ""


def _kernel_changes(put_back: Sequence[tuple[str, str]], fn: Any, exercise: Exercise) -> str:
    """The sentence naming what the kernel changed in a module (put back for the graded run) that the
    answer's cells name, or ``""``."""
    kernel = globals_of(fn)
    text = " ".join(filter(None, [cell_of(fn, exercise.function)]
                           + [cell_of(kernel.get(d), d) for d in exercise.dependency_names]))
    named = [f"`{module}.{attr}`" for module, attr in put_back if re.search(rf"\b{re.escape(attr)}\b", text)]
    if not named:
        return ""
    return (f"your notebook changed {', '.join(named)} outside the answer; grading starts without that change "
            f"(each answer runs in a fresh process), so define what you need inside the cell of {exercise.function}")


def _failing_dependencies(fn: Any, exercise: Exercise, seed: int) -> list[Exercise]:
    """The graded functions ``exercise`` may call, defined in cells, that fail their public checks
    (the notebook knows no hidden check: what it knows besides is :func:`_broken_contract`)."""
    kernel = globals_of(fn)
    own = cell_of(fn, exercise.function)
    failing = []
    for dep in exercise.depends:
        dep_fn = kernel.get(dep.function)
        dep_cell = cell_of(dep_fn, dep.function) if dep_fn is not None else None
        if dep_cell is None or dep_cell == own:
            continue
        if any(_run_graded(c, dep_fn, seed)[0] is not None for c in dep.public_checks):
            failing.append(dep)
    return failing


def _fairly(check_: Check, fn: Any, seed: int, found: Finding,
            calls: Mapping[str, Sequence[Call]]) -> tuple[Finding | None, str] | None:
    """The verdict on ``fn`` failing ``check_`` (``found``) when a graded function it calls fails, else
    ``None`` (its mistake is its own). ``calls`` are the calls it made to them on the check's inputs.

    A function it calls fails when it fails its public checks, or when what it returned on those calls
    breaks its contract. ``fn`` is then judged again with the course's version of each failing one
    (as grading does): in the student package that version answers only the inputs a right function
    gives it on the public checks (recorded), so where it raises ``Withheld`` nothing is decided
    (:data:`Kind.UNJUDGED`, no ✗: grading may well give the points). It passes: ✓ with the note
    naming the functions to fix, when each of them fails its public checks (grading, which blames
    on all checks, then judges it the same way), else no verdict either. It fails: ✗, its own mistake.
    """
    exercise = check_.exercise
    failing = _failing_dependencies(fn, exercise, seed)
    why = {d.function: w for d in exercise.depends if (w := _broken_contract(d, calls.get(d.function, ())))}
    blamed = [d for d in exercise.depends if d in failing or d.function in why]
    if not blamed:
        return None
    names = [d.function for d in blamed]
    unjudged = Finding(cannot_judge_note(check_.function, names, why), Kind.UNJUDGED)
    if any(d.reference is None for d in blamed):
        return unjudged, ""
    again, raised = _run_graded(check_, fn, seed, standing_in={d.function: d.reference for d in blamed})
    if any(exception == "Withheld" for exception, _ in raised):
        return unjudged, ""
    if again is None:
        return (None, blame_note(check_.function, names)) if set(blamed) <= set(failing) else (unjudged, "")
    return dataclasses.replace(again, text=f"{own_mistake_note(check_.function, names)}. {again.text}"), ""


def judge(check_: Check, fn: Callable[..., Any], seed: int = 0) -> tuple[Finding | None, str]:
    """(message or ``None``, note) of one check run the way grading runs it.

    When ``fn`` comes from a notebook, the text the grader reads runs again in a fresh namespace
    holding only NumPy, where the course package cannot be imported, and the check calls that
    copy: the answer cell (when the front end names the cells it runs, else the cell that defined
    ``fn``, or for a decorated function the last cell defining its name), turned into plain Python
    by :func:`selfattn.answer.graded_source`, with the cells of the graded functions it may call.
    Elsewhere ``fn`` is called directly. When the check fails and a function it may call fails
    (:func:`_fairly`), ``fn`` is judged with the course's version of that function where the
    package can: ✓ with a note naming the function to fix, ✗ naming its own mistake, or a message of
    kind :data:`Kind.UNJUDGED` (no verdict: "fix softmax first"). The note says when the text judged
    is not the cell that defined ``fn``, or when magics were stripped or refused.
    """
    source, note = answer_of(fn, check_.function)
    if source is None:  # defined in a module or by exec: called as it is, with the same time limit
        with time_limit(NOTEBOOK_SECONDS):
            return run_check(check_, fn, seed), ""
    calls: dict[str, list[Call]] = {}
    message, raised = _run_graded(check_, fn, seed, watched=calls)
    blame = ""
    if message is not None and (fair := _fairly(check_, fn, seed, message, calls)) is not None:
        message, blame = fair
    elif message is not None and (advice := _advice(raised, fn, check_.function)):
        message = dataclasses.replace(message, text=f"{advice}. {message}")
    if message is not None and note:
        message = dataclasses.replace(message, text=f"{note}. {message}")
    note = "; ".join(filter(None, (note, blame)))
    if stale := stale_note(check_.function):
        message = None if message is None else dataclasses.replace(message, text=f"{stale}. {message}")
        note = "; ".join(filter(None, (note, stale)))
    return message, note


def _wrapped(text: str) -> list[str]:
    """``text`` in lines of at most 76 characters, the later ones indented (``nbgrader validate``
    cuts lines at 90 characters)."""
    lines = [ln for par in text.splitlines() for ln in (textwrap.wrap(par, 76) or [""])]
    return [lines[0], *("    " + ln for ln in lines[1:])]


def check(fn: Callable[..., Any], check_id: str, seed: int = 0) -> None:
    """Notebook entry point: run check ``check_id`` on ``fn`` as grading will and print a tick, or
    the diagnosis first.

    In a notebook a failed check prints ``✗`` and its message on stderr instead of raising, so
    Restart & Run All goes on to the later exercises and the summary, while ``nbgrader validate``
    (and JupyterLab's Validate, and ``hand_in.py``) still count the cell as failed: nbgrader fails
    a test cell with an error *or* text on stderr. Outside IPython it raises :class:`CheckFailed`.
    """
    if check_id not in REGISTRY:
        raise KeyError(f"unknown check {check_id!r}")
    check_ = REGISTRY[check_id]
    message, blame = judge(check_, fn, seed)
    if message is not None and message.kind is Kind.UNJUDGED:  # no verdict: neither ✓ nor ✗
        print("\n".join(_wrapped(f"? {message}\n(check of {check_.function}: {check_.description})")))
        return
    if message is not None:
        text = f"{message}\n(check of {check_.function}: {check_.description})"
        if not in_a_kernel():
            raise CheckFailed(text)
        _say_on_stderr("\n".join(_wrapped(f"✗ {text}")))
        return
    print(f"✓ {check_.function}: {check_.description}" + (f" ({blame})" if blame else ""))


def _say_on_stderr(text: str) -> None:
    """Write ``text`` and its newline to stderr in one call: ``print`` writes them separately, and a
    busy kernel may send the lone newline as an output of its own."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


@contextlib.contextmanager
def using(function: str) -> Iterator[None]:
    """Around a cell of the notebook that calls the student's ``function``: if it raises (not
    written yet, or wrong), one line on stderr says so instead of a traceback, and Restart & Run
    All goes on to the later exercises and the summary."""
    try:
        yield
    except Exception as exc:
        _say_on_stderr(f"✗ this cell needs a working {function} (write or fix it above, then run this cell "
                       f"again): {type(exc).__name__}: {str(exc)[:200]}")


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
        unknown = [c for c in check_ids if c not in REGISTRY]
        if unknown:
            print(f"✗  {function} ({points:g} points): no check named {unknown[0]!r} (is selfattn up to date?)")
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
        elif failed.kind is Kind.UNJUDGED:
            print(f"?  {function} ({points:g} points): {failed.text.splitlines()[0]}")
        else:
            print(f"✗  {function} ({points:g} points): {failed.text.splitlines()[0]}")
    print(f"Public checks pass for exercises worth {earned:g} of {total:g} points; hidden checks decide the rest.")

"""Decide one staged notebook: each graded function runs in the sandbox (:mod:`autograder.sandbox`)
on inputs made here; only plain arrays come back, and the checks decide in this process, which
never runs student code. One notebook is one independent job.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple

import nbformat
import numpy as np

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from autograder import sandbox
from autograder.course.spec import NotebookSpec, TestCell, answer_cells, load_spec, release_path
from autograder.import_graph import imported_modules, module_file
from autograder.intake.staging import stage, staged_notebook
from autograder.notes import Note, NoteKind, notes_of, records
from autograder.outputs import atomic
from autograder.sandbox import warm
from autograder.verdicts import blame, history, record
from autograder.verdicts.hidden_inputs import opaque
from autograder.verdicts.record import CellResult, FunctionRecord, Verdict
from autograder.workspace import AUTOGRADER, Workspace
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.findings import Finding, Kind
from selfattn.checks.judging import first_error, safe_verify
from selfattn.checks.record import REGISTRY

#: the course modules (below selfattn) the checks import, derived from the grader's imports
CHECK_MODULES = tuple(m.split(".", 1)[1] for m in imported_modules("autograder.verdicts.decide")
                      if m.startswith("selfattn."))
#: modules the grader imports that decide no verdict, each with the reason it is left out of the key
KEY_EXCLUDED: dict[str, str] = {
    "autograder.import_graph": "reads the import statements that list these files; it decides no verdict",
    "autograder.workspace": "the paths of a course and a work folder",
    "autograder.environment": "reads environment variables into settings; a verdict's settings are in it as data",
    "autograder.outputs": "a package of writers",
    "autograder.outputs.atomic": "how a file is written, not what it says",
    "autograder.verdicts.record": "how a verdict is stored and read back, not what it decides",
    "autograder.verdicts.history": "keeps the mistakes of a replaced verdict for the report, after deciding",
    "autograder.intake": "a package of staging",
    "autograder.intake.staging": "what staging makes (the answers and the notes) is itself in the key",
    "autograder.intake.stored_outputs": "staging's reader of outputs: what it makes is in the key",
    "autograder.intake.untrusted": "staging's reader of untrusted files: what it makes is in the key",
}
#: code that runs inside the sandbox (never imported by the grader)
_INSIDE = (AUTOGRADER / "sandbox" / "inside" / "harness.py", AUTOGRADER / "sandbox" / "inside" / "zygote.py")


def verdict_code() -> tuple[Path, ...]:
    """The files of the code that decides a verdict: every module the grader's decision imports
    (:func:`imported_modules` of this module), less :data:`KEY_EXCLUDED`, and the code run inside the
    sandbox. When any of them changes, every verdict is stale."""
    modules = [m for m in imported_modules("autograder.verdicts.decide") if m not in KEY_EXCLUDED]
    return tuple(sorted({*(p for m in modules if (p := module_file(m)) is not None), *_INSIDE}))


_CHECK_CODE = verdict_code()


#: the secret handed to this thread in memory (a task on a Dask worker): never written to disk
_GIVEN_SECRET: ContextVar[bytes | None] = ContextVar("grading_secret", default=None)


@contextmanager
def secret_given(secret: bytes) -> Iterator[None]:
    """Within the block, hidden inputs are seeded from ``secret`` instead of the work folder's file."""
    token = _GIVEN_SECRET.set(secret)
    try:
        yield
    finally:
        _GIVEN_SECRET.reset(token)


def grading_secret(ws: Workspace) -> bytes:
    given = _GIVEN_SECRET.get()
    if given is not None:
        return given
    # parallel jobs may start at once: the first secret written is everyone's
    return atomic.create_once(ws.grading / "secret", secrets.token_hex(16).encode())


def _seed(*parts: str, ws: Workspace) -> int:
    h = hashlib.sha256(grading_secret(ws) + "\0".join(parts).encode()).digest()
    return int.from_bytes(h[:8], "big")


def spec_digest(assignment: str, notebook: str, course: Path) -> str:
    """A digest of the instructor's test cells of one notebook: its functions, and per test cell its
    checks, points and which are hidden."""
    spec = load_spec(assignment, notebook, course)
    # no repr of the spec: its frozensets print in an order that changes from process to process
    tests = [[t.grade_id, t.points, [list(c) for c in t.checks], sorted(t.hidden)] for t in spec.tests]
    return hashlib.sha256(json.dumps([list(spec.functions), tests]).encode()).hexdigest()


def checks_version(assignment: str, notebook: str, course: Path) -> str:
    """A digest of everything that decides this notebook's verdicts besides the answers: the test
    cells of the instructor's notebook (checks, points) and the code of the checks and the grader."""
    h = hashlib.sha256(spec_digest(assignment, notebook, course).encode())
    for path in _CHECK_CODE:
        if path.exists():
            h.update(code_digest(path).encode())
    return h.hexdigest()


#: digest of a file's bytes -> :func:`code_digest` of them (a file is parsed again only when it changed)
_DIGESTS: dict[bytes, str] = {}


def code_digest(path: Path) -> str:
    """A digest of what the Python in ``path`` does: its syntax tree without docstrings, comments or
    layout, so that editing a comment or a docstring decides no verdict again; of its bytes where it
    does not parse."""
    data = path.read_bytes()
    raw = hashlib.sha256(data).digest()
    if raw not in _DIGESTS:
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            _DIGESTS[raw] = raw.hex()
        else:
            for node in ast.walk(tree):
                body = getattr(node, "body", None)
                if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                        and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
                    node.body = body[1:] or [ast.Pass()]
            dump = ast.dump(tree, annotate_fields=False, include_attributes=False)
            _DIGESTS[raw] = hashlib.sha256(dump.encode()).hexdigest()
    return _DIGESTS[raw]


def verdict_key(nb: nbformat.NotebookNode, assignment: str, notebook: str, course: Path) -> str:
    """What a verdict judged: the staged answers and notes, and the version of the checks.

    A verdict applies to a notebook only if the notebook's key equals the verdict's."""
    notes = records(notes_of(nb.metadata.get("selfattn", {})))
    content = json.dumps({"answers": answer_cells(nb), "notes": notes}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256((content + checks_version(assignment, notebook, course)).encode()).hexdigest()


def answers_digest(nb: nbformat.NotebookNode) -> str:
    """A digest of the staged answers alone: what tells a resubmission (other answers) from a verdict
    decided again for the same answers (changed checks or points, ``--force``)."""
    return hashlib.sha256(json.dumps(answer_cells(nb), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def settings(limits: sandbox.Limits) -> dict:
    """The grading settings a verdict was decided with, besides the checks: the run's limits and the
    sandbox's mode. A verdict decided with other settings is stale (a time-out under a lower CPU
    limit says nothing about a higher one)."""
    return {"limits": dataclasses.asdict(limits), "sandbox": sandbox.mode()}


def stored_verdict(student: str, assignment: str, notebook: str, ws: Workspace) -> Verdict | None:
    """The verdict on file for one notebook, or None (absent, or unreadable: it is decided again)."""
    try:
        return record.read(ws.verdict(student, assignment, notebook))
    except (OSError, ValueError, record.UnreadableVerdict):
        return None


#: the pre-warmed sandbox sessions of one notebook: for its public (False) and hidden (True) runs
_Sessions = dict[bool, warm.Session | None]


class _Graded(NamedTuple):
    """One graded function of a notebook, with everything its runs need."""

    function: str
    tests: list[TestCell]  # the test cells (spec tests) that check it, in notebook order
    ids: list[str]  # its check ids, in the order of those cells
    hidden: set[str]  # which of them are hidden checks
    code: list[tuple[str, str]]  # (name, source) of its dependencies' answers, then its own
    cases: dict[str, list]  # check id -> its inputs (hidden ones opaque)


def verdict(student: str, assignment: str, notebook: str, notes: list[Note],
            limits: sandbox.Limits = sandbox.DEFAULT, *, ws: Workspace) -> Verdict:
    """Decide every test cell of one staged notebook of ``ws``; write and return the verdict.

    Each decision draws fresh inputs (a new nonce in every seed): what a submission learned of its
    hidden inputs in one grading is worthless in the next. A function whose code (its own answer and
    those of the functions it calls), checks and settings are those of the stored verdict is not run
    again: it keeps its stored results (:func:`function_key`), so changing a sibling cell gives an
    unchanged function neither a new run nor new inputs to meet.

    The decision has two phases, :func:`decide_public` (every public run) and :func:`finish_decision`
    (the hidden runs and fair blame's re-runs); a class is decided phase by phase
    (:func:`public_job`, :func:`hidden_job`), so that no run whose feedback is detailed comes after a
    hidden run on the same machine."""
    return finish_decision(decide_public(student, assignment, notebook, notes, limits, ws=ws), ws)


@dataclasses.dataclass
class Pending:
    """One notebook between its public runs and its hidden ones (it crosses the process pool).

    ``graded`` are the functions with their inputs, ``keys`` their :func:`function_key`, ``kept``
    the stored records of those not run again; ``found``, ``timings``, ``raised`` and ``last_run``
    are what the public runs gave (see :func:`_run_phase`)."""

    student: str
    assignment: str
    notebook: str
    limits: sandbox.Limits
    notes: list[Note]
    graded: list[_Graded]
    keys: dict[str, str]
    kept: dict[str, FunctionRecord]
    found: dict[str, blame.Results]
    timings: dict[str, float]
    raised: dict[str, list[Note]]
    last_run: dict[str, sandbox.RunResult]


def decide_public(student: str, assignment: str, notebook: str, notes: list[Note],
                  limits: sandbox.Limits = sandbox.DEFAULT, *, ws: Workspace) -> Pending:
    """The first phase of :func:`verdict`: draw the inputs and make every public run."""
    spec, _staged, answers, stubs = _load(student, assignment, notebook, ws)
    version = checks_version(assignment, notebook, ws.course)
    nonce = secrets.token_hex(16)
    graded = [_draw_cases(function, tests, answers, student, notebook, ws, nonce)
              for function in spec.functions if (tests := spec.tests_of(function))]
    keys = {g.function: function_key(g.code, version, limits) for g in graded}
    kept = _kept_functions(stored_verdict(student, assignment, notebook, ws), keys)
    pending = Pending(student, assignment, notebook, limits, [Note.from_json(n) for n in notes], graded, keys, kept,
                      {g.function: {} for g in graded}, {g.function: 0.0 for g in graded}, {}, {})
    sessions = _sessions(pending)
    try:
        _run_phase(False, pending, answers, stubs, sessions)
    finally:
        warm.release(sessions)
    return pending


def _sessions(p: Pending) -> _Sessions:
    """The pre-warmed sandbox for a phase's runs, a fresh child per run (:mod:`autograder.sandbox.warm`);
    none when every function of ``p`` keeps its stored results."""
    return warm.sessions() if any(g.function not in p.kept for g in p.graded) else {False: None, True: None}


def finish_decision(p: Pending, ws: Workspace) -> Verdict:
    """The second phase of :func:`verdict`: the hidden runs, fair blame; write the verdict."""
    _spec, staged, answers, stubs = _load(p.student, p.assignment, p.notebook, ws)
    sessions = _sessions(p)
    try:
        _run_phase(True, p, answers, stubs, sessions)
        return _conclude(p, ws, staged, answers, stubs, sessions)
    finally:
        warm.release(sessions)


def _conclude(p: Pending, ws: Workspace, staged: nbformat.NotebookNode, answers: dict[str, str],
              stubs: dict[str, str], sessions: _Sessions) -> Verdict:
    """Fair blame (its re-runs in ``sessions``), the cells' lines and the verdict, written."""
    notes = list(p.notes)
    cells: dict[str, CellResult] = {}
    checks: blame.Results = {}  # check id -> None (passed) or what it found, for the class report
    functions: dict[str, FunctionRecord] = {}
    timings = dict(p.timings)
    for g in p.graded:
        if g.function in p.kept:
            kept = p.kept[g.function]
            results, own = dict(kept.checks), list(kept.notes)
            timings[g.function] = kept.seconds
        else:
            results, why = _blame(p.assignment, p.notebook, g, answers, stubs, checks, p.found[g.function], p.limits,
                                  sessions, ws.course)
            own = p.raised.get(g.function, []) + ([why] if why is not None else [])
        notes += own
        functions[g.function] = FunctionRecord(p.keys[g.function], timings[g.function], tuple(own), results)
        checks.update(results)
        _add_cell_lines(cells, g, results)
    if sandbox.mode() == "fallback":
        notes.append(Note("Graded without the bubblewrap sandbox (weaker isolation).", NoteKind.WEAKER_SANDBOX))
    out = Verdict(p.student, p.assignment, p.notebook, cells, tuple(notes), checks, functions, timings,
                  sandbox.mode(), verdict_key(staged, p.assignment, p.notebook, ws.course), answers_digest(staged),
                  settings(p.limits))
    _write(ws.verdict(p.student, p.assignment, p.notebook), out, ws)
    return out


def function_key(code: list[tuple[str, str]], version: str, limits: sandbox.Limits) -> str:
    """What decides one function's results: its code and its dependencies' (``code``, as run), the
    checks' ``version`` (:func:`checks_version`) and the settings (:func:`settings`)."""
    content = json.dumps({"code": code, "checks": version, "settings": settings(limits)}, sort_keys=True)
    return hashlib.sha256(content.encode()).hexdigest()


def forget_kept(student: str, assignment: str, notebook: str, ws: Workspace) -> None:
    """Make the next decision of this notebook run every function again (``make grade --force``):
    the stored verdict loses its functions' records, nothing else."""
    stored = stored_verdict(student, assignment, notebook, ws)
    if stored is not None and stored.functions:
        record.write(ws.verdict(student, assignment, notebook), dataclasses.replace(stored, functions={}))


def _kept_functions(stored: Verdict | None, keys: dict[str, str]) -> dict[str, FunctionRecord]:
    """function -> its stored record, for each function whose key is the stored one (a record of
    another shape was dropped when the verdict was read: the function is decided again)."""
    if stored is None or stored.failed:
        return {}
    return {name: kept for name, kept in stored.functions.items() if name in keys and kept.key == keys[name]}


def _load(student: str, assignment: str, notebook: str,
          ws: Workspace) -> tuple[NotebookSpec, nbformat.NotebookNode, dict[str, str], dict[str, str]]:
    """What one verdict starts from: the notebook's spec, its staged copy in ``ws``, the staged
    answers and the release's stubs (both grade id -> source of the answer cell)."""
    spec = load_spec(assignment, notebook, ws.course)
    staged = nbformat.read(ws.staged(student, assignment, notebook), as_version=4)
    return spec, staged, answer_cells(staged), answer_cells(release_path(assignment, notebook, ws.course))


def _draw_cases(function: str, tests: list[TestCell], answers: dict[str, str], student: str, notebook: str,
                ws: Workspace, nonce: str) -> _Graded:
    """The checks of ``function`` (from its test cells ``tests``) and their inputs, drawn for this
    student, notebook, code and decision (``nonce``, new for every decision): no two gradings meet
    the same hidden inputs. The inputs of hidden checks are made opaque
    (:func:`autograder.verdicts.hidden_inputs.opaque`)."""
    ids = [cid for t in tests for f, cid in t.checks if f == function]
    hidden = set().union(*(t.hidden for t in tests))
    code = [(dep, answers[dep]) for dep in EXERCISES[function].dependency_names if dep in answers]
    code.append((function, answers[function]))
    content = hashlib.sha256(json.dumps(code).encode()).hexdigest()
    cases = {cid: REGISTRY[cid].cases(np.random.default_rng(_seed(student, notebook, cid, content, nonce, ws=ws)))
             for cid in ids}
    cases = {cid: [opaque(c) for c in cs] if cid in hidden else cs for cid, cs in cases.items()}
    return _Graded(function, tests, ids, hidden, code, cases)


def _run_phase(secret: bool, p: Pending, answers: dict[str, str], stubs: dict[str, str],
               sessions: _Sessions) -> None:
    """Run every public (``secret`` false) or every hidden group of checks (:func:`_groups`) of the
    functions of ``p`` not kept, in ``sessions``, and judge them into ``p.found`` (function -> check
    id -> finding, ``None``: passed), ``p.timings`` (seconds, rounded to ms) and ``p.raised`` (what
    other cells raised while a function's runs set up, noted once per function).

    Every public run of the notebook comes before any hidden run, and a class is decided phase by
    phase (:func:`public_job`, :func:`hidden_job`)."""
    for g in (g for g in p.graded if g.function not in p.kept):
        for group in _groups(g.ids, g.hidden):
            if (group[0] in g.hidden) != secret:
                continue
            run = _run_group(g, group, secret, p.last_run.get(g.function), answers, stubs, p.limits, sessions)
            if g.function not in p.last_run:  # its cells run the same code before any input: once is enough
                p.raised[g.function] = [Note(f"While grading {g.function}: {err}.", NoteKind.CELL_RAISED)
                                        for err in run.cell_errors if err.label != g.function]
            p.last_run[g.function] = run
            p.timings[g.function] = round(p.timings[g.function] + run.seconds, 3)
            p.found[g.function].update(_judged(run, group, g.cases, g.hidden))


def _run_group(g: _Graded, group: list[str], secret: bool, previous: sandbox.RunResult | None,
               answers: dict[str, str], stubs: dict[str, str], limits: sandbox.Limits,
               sessions: _Sessions) -> sandbox.RunResult:
    """One run of ``g``'s code over the cases of the checks ``group`` (hidden when ``secret``).

    An answer cell still holding the stub is not run (its checks fail as not answered); a hidden
    group after a ``previous`` run that never got as far as a call (loop, crash, syntax) is not run
    again: that run's result stands."""
    if answers[g.function] == stubs.get(g.function):
        stub = Finding(f"not answered: the cell of {g.function} still holds the stub", Kind.NOT_ANSWERED)
        return sandbox.RunResult(None, stub, [], 0.0)
    if secret and previous is not None and previous.outcomes is None:
        return previous
    return sandbox.run(g.code, g.function, [c for cid in group for c in g.cases[cid]], limits,
                       hidden=secret, session=sessions[secret])


def _blame(assignment: str, notebook: str, g: _Graded, answers: dict[str, str], stubs: dict[str, str],
           checks: blame.Results, results: blame.Results, limits: sandbox.Limits,
           sessions: _Sessions, course: Path) -> tuple[blame.Results, Note | None]:
    """One mistake, one deduction: a failing answer (not the stub) is judged again with the course's
    functions where its own dependencies fail (:func:`autograder.verdicts.blame.regrade`).

    Returns ``g``'s results (check id -> finding, ``None``: passed) and the note saying why they
    changed, or ``results`` unchanged and ``None``. ``checks`` holds the results of the functions
    decided before ``g``."""
    if not (any(msg is not None for msg in results.values()) and answers[g.function] != stubs.get(g.function)):
        return results, None

    def decide(code: list[tuple[str, str | None]], oracle) -> blame.Results:
        """The same checks on the same inputs, for other code (see autograder.verdicts.blame). These
        runs come after the notebook's hidden runs, so what they find, public checks too, is
        told in the fixed vocabulary of hidden checks: nothing a hidden run could leave in the
        machine's shared counters reaches the feedback through them. The course's functions answer
        through ``oracle()`` (one per run), never as code in the sandbox."""
        out: blame.Results = {}
        for group in _groups(g.ids, g.hidden):
            secret = group[0] in g.hidden
            rerun = sandbox.run(code, g.function, [c for cid in group for c in g.cases[cid]], limits,
                                hidden=secret, session=sessions[secret], oracle=oracle())
            out.update({cid: None if f is None else f.hidden()
                        for cid, f in _judged(rerun, group, g.cases, g.hidden).items()})
        return out

    return blame.regrade(assignment, notebook, g.function, answers, checks, results, decide, course)


def _add_cell_lines(cells: dict[str, CellResult], g: _Graded, results: blame.Results) -> None:
    """Add ``g``'s lines (one per check, ✓ or ✗) to the test cells of ``cells`` that check it.

    ``cells`` maps grade id -> its result; a test cell checking several functions gathers their
    lines in the order they are decided."""
    for t in g.tests:
        mine = [cid for f, cid in t.checks if f == g.function]
        lines = [_line(g.function, ("hidden check: " if cid in t.hidden else "") + REGISTRY[cid].description,
                       results[cid]) for cid in mine]
        failed = sum(results[cid] is not None for cid in mine)
        prev = cells.get(t.grade_id, CellResult(True, 0, ()))
        cells[t.grade_id] = CellResult(prev.passed and not failed, prev.failed + failed, (*prev.lines, *lines),
                                       t.points)


def _line(function: str, label: str, found: Finding | None) -> str:
    """The line a test cell's output shows for one check: ✓ passed, ✗ with what it found."""
    return f"✓ {function}: {label}" if found is None else f"✗ {function}: {label}: {found}"


def _groups(ids: list[str], hidden: set[str]) -> list[list[str]]:
    """The check ids run together: public ones, then hidden ones (each non-empty group one run).

    Public and hidden inputs never meet in one process: nothing the student's code saw of a hidden
    input can come back in the (public) text of its exceptions."""
    return [g for g in ([c for c in ids if c not in hidden], [c for c in ids if c in hidden]) if g]


def _judged(run: sandbox.RunResult, group: list[str], cases: dict[str, list],
            hidden: set[str]) -> dict[str, Finding | None]:
    """Check id -> finding (``None``: passed) for each check of ``group``, from one run over their
    cases in order; a run that produced no outcomes fails them all with its reason.

    A hidden check's finding is put in the fixed vocabulary of hidden checks
    (:meth:`Finding.hidden`): its text holds nothing the student's code could choose."""
    out: dict[str, Finding | None] = {}
    pos = 0
    for cid in group:
        check_, n = REGISTRY[cid], len(cases[cid])
        if run.outcomes is None:
            found = run.failure
        else:
            outs = run.outcomes[pos : pos + n]  # hidden runs bring back exception types only
            found = first_error(check_, cases[cid], outs) or safe_verify(check_, cases[cid], outs)
        out[cid] = found.hidden() if found is not None and cid in hidden else found
        pos += n
    return out


def _write(path: Path, verdict_: Verdict, ws: Workspace) -> None:
    """Write a verdict atomically: a killed run leaves the old verdict or the new one, never half.
    The mistakes of a verdict replaced for other answers are kept (:mod:`autograder.verdicts.history`)."""
    history.remember_replaced(path, verdict_, ws)
    record.write(path, verdict_)


def grade_one(student: str, assignment: str, notebook: str, limits: sandbox.Limits = sandbox.DEFAULT,
              *, ws: Workspace) -> Verdict:
    """One independent job: stage and decide one notebook of ``ws`` (its public runs, then its hidden ones)."""
    try:
        notes = stage(student, assignment, notebook, ws)
        return verdict(student, assignment, notebook, notes, limits, ws=ws)
    except Exception as exc:
        return _failed(student, assignment, notebook, limits, exc, ws)


def _failed(student: str, assignment: str, notebook: str, limits: sandbox.Limits, exc: Exception,
            ws: Workspace) -> Verdict:
    """Write and return the verdict of a notebook the grader could not process (it scores zero)."""
    note = Note(f"The grader could not process this notebook ({type(exc).__name__}: {exc}); it scores zero.",
                NoteKind.GRADER_ERROR)
    target = ws.staged(student, assignment, notebook)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(release_path(assignment, notebook, ws.course), target)
    key = None
    try:  # the key of the notebook nbgrader will see, so it applies this verdict instead of refusing
        key = verdict_key(nbformat.read(target, as_version=4), assignment, notebook, ws.course)
    except Exception:
        pass
    out = Verdict(notes=(note,), key=key, settings=settings(limits), failed=True)
    _write(ws.verdict(student, assignment, notebook), out, ws)
    return out


#: a job: (student, assignment, notebook, limits)
Job = tuple[str, str, str, sandbox.Limits]


def public_job(job: Job, ws: Workspace, notes: list[Note] | None = None) -> tuple[Job, Pending | None, float]:
    """The first phase of one job (stage, draw, every public run): (the job, what its second phase
    needs, ``None`` if the notebook failed and its verdict says so, seconds). ``notes``: what staging
    said, when the caller staged the notebook moments before in the same work folder (``make
    grade``'s pool): it is not staged again."""
    student, assignment, notebook, limits = job
    t0 = time.perf_counter()
    try:
        said = stage(student, assignment, notebook, ws) if notes is None else notes
        pending: Pending | None = decide_public(student, assignment, notebook, said, limits, ws=ws)
    except Exception as exc:
        _failed(student, assignment, notebook, limits, exc, ws)
        pending = None
    return job, pending, time.perf_counter() - t0


def hidden_job(first: tuple[Job, Pending | None, float], ws: Workspace) -> tuple[str, str, str, float]:
    """The second phase of one job (its hidden runs, fair blame, the verdict written), from what
    :func:`public_job` returned: (student, assignment, notebook, seconds of both phases)."""
    (student, assignment, notebook, limits), pending, seconds = first
    t0 = time.perf_counter()
    if pending is not None:
        try:
            finish_decision(pending, ws)
        except Exception as exc:
            _failed(student, assignment, notebook, limits, exc, ws)
    return student, assignment, notebook, seconds + time.perf_counter() - t0


def decide_in_phases(jobs: list[Job], ws: Workspace, map_=map) -> list[tuple[str, str, str, float]]:
    """Decide ``jobs`` every public run first, then every hidden one (``map_`` is ``map`` or a pool's):
    on this machine no run whose feedback is detailed comes after a hidden run of this batch."""
    from functools import partial

    firsts = list(map_(partial(public_job, ws=ws), jobs))
    return list(map_(partial(hidden_job, ws=ws), firsts))


def freshness(student: str, assignment: str, notebook: str, nb: nbformat.NotebookNode | None = None,
              limits: sandbox.Limits = sandbox.DEFAULT, any_sandbox: bool = False, *, ws: Workspace) -> str:
    """``"fresh"``; ``"settings"`` when only a grading setting changed since the verdict was decided;
    else ``"stale"`` (no verdict, other answers, or other checks). With ``any_sandbox``, a verdict
    decided in another sandbox mode (a Dask worker's) counts as fresh when its limits are these."""
    stored = stored_verdict(student, assignment, notebook, ws)
    if stored is None or stored.key is None:
        return "stale"
    nb = nb if nb is not None else staged_notebook(student, assignment, notebook, ws)
    if stored.key != verdict_key(nb, assignment, notebook, ws.course):
        return "stale"
    now, then = settings(limits), dict(stored.settings)
    if any_sandbox:
        now, then = now["limits"], then.get("limits")
    return "fresh" if then == now else "settings"

"""The decisions of autograder/verdicts/decide.py that run the sandbox, with the sandbox's boundary
(:func:`autograder.sandbox.run`, and the warm sessions it runs in) replaced by a runner that executes
the cells in this process, as the sandbox's harness does, and hands what they returned to the grader's
own reader of a run's result (:func:`autograder.sandbox._results`), or returns a recorded result.

What is tested is decide.py's own logic, on real notebooks of the course in a real work folder: every
public run of a notebook (and of a batch) comes before any hidden run, each run in the session of its
phase; a run that crashed fails its checks with its reason (in the fixed words of hidden checks for
hidden ones) and is not run again for the hidden checks; a stub is never run; fair blame re-runs come
last, with the course's functions as the oracle; a function whose code did not change keeps its
record; the inputs are drawn per student, notebook and decision; a notebook the grader could not
process scores zero with a note naming the error, and costs no other notebook anything. How the
sandbox isolates a run is its own tests' (tests/test_decisions.py grades through it)."""

from __future__ import annotations

import dataclasses
import io
import json
import struct
import types
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder import sandbox
from autograder.course.spec import TestCell as SpecTestCell
from autograder.course.spec import answer_cells, load_spec
from autograder.notes import Note, NoteKind
from autograder.sandbox import warm
from autograder.sandbox.oracle import Oracle
from autograder.verdicts import blame, decide, history, record
from autograder.verdicts.hidden_inputs import OpaqueCase
from autograder.verdicts.record import CellResult
from autograder.workspace import ROOT, Workspace
from selfattn.checks.calling import Case, CellError, allowed_imports_only, call_cases, exec_cells, fresh_namespace
from selfattn.checks.findings import Finding, Kind
from selfattn.checks.record import REGISTRY

NB1, NB2, NB3, NB4 = "01-embeddings", "02-queries-keys-values", "03-softmax-attention", "04-scaling"
FUNCTIONS3 = ["softmax", "scaled_scores", "attention", "multi_head_attention"]
#: the seconds every run of the runner takes (more decimals than a verdict keeps)
RUN_SECONDS = 0.12341
STUB = object()  # an answer left as the release's stub
WRONG_SOFTMAX = "def softmax(S, axis=-1):\n    return np.exp(S) / np.exp(S).sum(axis=0, keepdims=True)\n"
NAIVE_SOFTMAX = "def softmax(S, axis=-1):\n    return np.exp(S) / np.exp(S).sum(axis=axis, keepdims=True)\n"
NO_MASK_ATTENTION = "def attention(Q, K, V, mask=None):\n    return softmax(scaled_scores(Q, K), axis=-1) @ V\n"


@dataclass
class Run:
    """One call of the sandbox's run, as the runner saw it."""

    function: str
    hidden: bool
    session: object
    oracle: list[str]
    cases: list[Case]
    cells: list[tuple[str, str | None]]


@dataclass
class Here:
    """The sandbox's boundary, in this process: every run and every session, in order."""

    runs: list[Run] = field(default_factory=list)
    opened: list[dict[bool, str]] = field(default_factory=list)
    released: list[dict[bool, str]] = field(default_factory=list)
    #: function -> the result its runs return instead of running (a recorded RunResult)
    results: dict[str, sandbox.RunResult] = field(default_factory=dict)
    #: (function, hidden) -> what its run raises (the sandbox failing)
    raises: dict[tuple[str, bool], Exception] = field(default_factory=dict)

    def run(self, cells: list[tuple[str, str | None]], function: str, cases: list[Case],
            limits: sandbox.Limits = sandbox.DEFAULT, hidden: bool = False, session: object = None,
            oracle: Oracle | None = None) -> sandbox.RunResult:
        """:func:`autograder.sandbox.run`'s place: recorded, then raised, returned as recorded or run here."""
        self.runs.append(Run(function, hidden, session, list(oracle.names) if oracle else [], list(cases),
                             list(cells)))
        if (function, hidden) in self.raises:
            raise self.raises[function, hidden]
        if function in self.results:
            return self.results[function]
        return _in_process(cells, function, cases, limits, hidden, oracle)

    def sessions(self) -> dict[bool, str]:
        """:func:`autograder.sandbox.warm.sessions`'s place: a new pair of named sessions."""
        n = len(self.opened)
        opened = {False: f"public session {n}", True: f"hidden session {n}"}
        self.opened.append(opened)
        return opened

    def release(self, sessions: dict[bool, str]) -> None:
        """:func:`autograder.sandbox.warm.release`'s place: recorded."""
        self.released.append(dict(sessions.items()))


def _in_process(cells: list[tuple[str, str | None]], function: str, cases: list[Case], limits: sandbox.Limits,
                hidden: bool, oracle: Oracle | None) -> sandbox.RunResult:
    """What the sandbox's harness does with ``cells`` (the course's functions for the oracle's names),
    as the bytes it sends, read by the grader's own reader of a run's result."""
    namespace = fresh_namespace()
    names = set(oracle.names) if oracle is not None else set()
    errors: list[CellError] = []
    with allowed_imports_only():
        for label, source in cells:
            if source is None and label in names:
                namespace[label] = oracle.functions[label]
            else:
                errors += exec_cells([(label, source)], namespace)
        fn = namespace.get(function)
        outcomes = call_cases(fn, cases) if callable(fn) else None
    result: dict = {"cell_errors": [e.to_json() for e in errors]}
    store: dict[str, np.ndarray] = {}
    if outcomes is None:
        result["missing"] = f"no function named {function} was defined"
    else:
        result["outcomes"] = []
        for i, o in enumerate(outcomes):
            if o.error is not None:
                result["outcomes"].append({"error": o.error, "kind": o.kind, "exception": o.exception,
                                           "errno": o.errno})
                continue
            for j, v in enumerate(o.values):
                store[f"r{i}_{j}"] = np.asarray(v, dtype=np.float64)
            result["outcomes"].append({"values": [f"r{i}_{j}" for j in range(len(o.values))]})
    buf = io.BytesIO()
    np.savez(buf, **store)
    head = json.dumps(result).encode()
    data = (b"R" if outcomes is not None else b"M") + struct.pack(">Q", len(head)) + head
    data += struct.pack(">Q", buf.tell()) + buf.getvalue()
    return sandbox._results(data, 0, cells, function, len(cases), limits, hidden, RUN_SECONDS)


@pytest.fixture
def here(monkeypatch) -> Here:
    """Runs and sessions in this process; the sandbox's mode reads ``bubblewrap``."""
    boundary = Here()
    monkeypatch.setattr(sandbox, "run", boundary.run)
    monkeypatch.setattr(warm, "sessions", boundary.sessions)
    monkeypatch.setattr(warm, "release", boundary.release)
    monkeypatch.setattr(sandbox, "mode", lambda: "bubblewrap")
    return boundary


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """decide.py's clock: each reading is the next of these times (the test appends them)."""
    times: list[float] = []
    monkeypatch.setattr(decide, "time", types.SimpleNamespace(perf_counter=lambda: times.pop(0)))
    return times


def _submit(ws: Workspace, student: str, notebook: str, answers: dict | None = None) -> None:
    """Hand in ``notebook``: the course's answer in every cell but those of ``answers`` (STUB: the stub)."""
    answers = answers or {}
    nb = nbformat.read(decide.release_path("attention", notebook, ws.course), as_version=4)
    course = answer_cells(ROOT / "solutions" / "attention" / f"{notebook}.ipynb")
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in course and cell.cell_type == "code" and answers.get(gid) is not STUB:
            cell.source = answers.get(gid) or blame.reference_cell("attention", notebook, gid, ROOT)
    path = ws.submission(student, "attention") / f"{notebook}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def _checks(notebook: str) -> dict[str, bool]:
    """check id -> hidden, of every check of ``notebook``."""
    return {cid: cid in t.hidden for t in load_spec("attention", notebook, ROOT).tests for _f, cid in t.checks}


def _hidden_words(found: Finding) -> bool:
    """Whether ``found`` is in the fixed vocabulary of hidden checks (nothing in it chosen by the answer)."""
    return found == found.hidden()


# --- the inputs: drawn per student, notebook, code and decision, from a secret ---

PARTS = st.lists(st.text(max_size=8), min_size=1, max_size=4)


@given(PARTS, PARTS, st.binary(min_size=1, max_size=16))
def test_a_seed_follows_its_parts_and_the_secret(tmp_path_factory, parts, other, secret):
    ws = Workspace(tmp_path_factory.getbasetemp() / "never-written", ROOT)  # the secret is given: no file
    with decide.secret_given(secret):
        seed = decide._seed(*parts, ws=ws)
        assert seed == decide._seed(*parts, ws=ws)
        assert ("\0".join(parts) == "\0".join(other)) == (seed == decide._seed(*other, ws=ws))
    with decide.secret_given(secret + b"!"):
        assert decide._seed(*parts, ws=ws) != seed
    assert not ws.work.exists()


def test_the_secret_is_given_in_memory_or_made_once_in_the_work_folder(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    with decide.secret_given(b"given"):
        assert decide.grading_secret(ws) == b"given"
    assert not (ws.grading / "secret").exists()
    made = decide.grading_secret(ws)
    assert len(made) == 32 and int(made, 16) >= 0 and (ws.grading / "secret").read_bytes() == made
    assert decide.grading_secret(ws) == made != decide.grading_secret(Workspace(tmp_path / "other", ROOT))
    seeds = [decide._seed("ann", NB3, f"check {i}", ws=ws) for i in range(32)]
    assert all(0 <= seed < 1 << 64 for seed in seeds) and len(set(seeds)) == 32  # a seed is 64 bits of a digest


def test_the_inputs_differ_per_student_and_decision_and_follow_the_secret(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    spec = load_spec("attention", NB3, ROOT)
    answers = {f: blame.reference_cell("attention", NB3, f, ROOT) for f in FUNCTIONS3}

    def drawn(student: str, nonce: str, secret: bytes = b"s") -> bytes:
        with decide.secret_given(secret):
            g = decide._draw_cases("softmax", spec.tests_of("softmax"), answers, student, NB3, ws, nonce)
        assert g.ids == [cid for cid, _h in _checks(NB3).items() if cid.startswith("softmax/")]
        assert g.hidden == {cid for cid, hidden in _checks(NB3).items() if hidden and cid.startswith("softmax/")}
        assert all(all(type(c) is (OpaqueCase if cid in g.hidden else Case) for c in cs) for cid, cs in g.cases.items())
        assert set(g.cases) == set(g.ids)
        return b"".join(np.asarray(a).tobytes() for cid in g.ids for c in g.cases[cid] for a in c.args)

    same = drawn("ann", "n1")
    assert same == drawn("ann", "n1") != drawn("ben", "n1")
    assert same != drawn("ann", "n2") and same != drawn("ann", "n1", b"another secret")


def test_what_decides_a_verdict_includes_the_code_run_in_the_sandbox():
    code = decide.verdict_code()
    assert all(isinstance(p, Path) and p.exists() for p in code) and list(code) == sorted(set(code))
    assert set(decide._INSIDE) <= set(code)
    assert ROOT / "autograder" / "verdicts" / "decide.py" in code
    assert not {ROOT / "autograder" / "workspace.py", ROOT / "autograder" / "verdicts" / "record.py"} & set(code)


def test_a_test_cell_checking_two_functions_gathers_their_lines_in_the_order_they_are_decided(tmp_path):
    """No cell of the course's notebooks checks two functions; the grader allows it (an instructor may)."""
    ws = Workspace(tmp_path, ROOT)
    both = SpecTestCell("both", 3.0, (("softmax", "softmax/axis"), ("scaled_scores", "scaled_scores/hidden/random"),
                                      ("softmax", "softmax/hidden/extreme")),
                        frozenset({"scaled_scores/hidden/random", "softmax/hidden/extreme"}))
    answers = {f: blame.reference_cell("attention", NB3, f, ROOT) for f in ("softmax", "scaled_scores", "attention")}
    with decide.secret_given(b"s"):
        softmax = decide._draw_cases("softmax", [both], answers, "ann", NB3, ws, "n")
        scaled = decide._draw_cases("scaled_scores", [both], answers, "ann", NB3, ws, "n")
        # a function runs after the cells of the functions it calls, of those the notebook holds
        attention = decide._draw_cases("attention", [], {"attention": "a", "softmax": "s"}, "ann", NB3, ws, "n")
    assert softmax.ids == ["softmax/axis", "softmax/hidden/extreme"] and scaled.ids == ["scaled_scores/hidden/random"]
    assert attention.code == [("softmax", "s"), ("attention", "a")] and attention.ids == []
    wrong = Finding("wrong values", Kind.WRONG_VALUES)
    cells: dict[str, CellResult] = {}
    decide._add_cell_lines(cells, scaled, {"scaled_scores/hidden/random": None})
    assert cells == {"both": CellResult(True, 0, (
        f"✓ scaled_scores: hidden check: {REGISTRY['scaled_scores/hidden/random'].description}",), 3.0)}
    decide._add_cell_lines(cells, softmax, {"softmax/axis": None, "softmax/hidden/extreme": wrong})
    assert cells == {"both": CellResult(False, 1, (
        f"✓ scaled_scores: hidden check: {REGISTRY['scaled_scores/hidden/random'].description}",
        f"✓ softmax: {REGISTRY['softmax/axis'].description}",
        f"✗ softmax: hidden check: {REGISTRY['softmax/hidden/extreme'].description}: wrong values"), 3.0)}
    decide._add_cell_lines(cells, scaled, {"scaled_scores/hidden/random": wrong})
    assert cells["both"].failed == 2 and not cells["both"].passed and len(cells["both"].lines) == 4


# --- grading a notebook, the sandbox's run in this process ---


def test_a_right_notebook_passes_every_cell_public_runs_first_each_phase_in_its_sessions(tmp_path, here):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB3)
    out = decide.grade_one("ann", "attention", NB3, ws=ws)
    spec = load_spec("attention", NB3, ROOT)
    assert not out.failed and out.notes == () and out.sandbox == "bubblewrap"
    assert out.cells == {t.grade_id: CellResult(
        True, 0, tuple(f"✓ {f}: {'hidden check: ' if cid in t.hidden else ''}{REGISTRY[cid].description}"
                       for f, cid in t.checks), t.points) for t in spec.tests}
    assert out.checks == dict.fromkeys(_checks(NB3))
    # one public run per function, then one hidden run per function: no public run after a hidden one
    assert [(r.function, r.hidden) for r in here.runs] == [(f, h) for h in (False, True) for f in FUNCTIONS3]
    public, hidden = here.opened  # the first phase's sessions, then the second's
    assert all(r.session == (hidden[True] if r.hidden else public[False]) and not r.oracle for r in here.runs)
    assert here.released == here.opened
    # a hidden run's inputs are described by type only; a public run's as they are
    assert all(all(type(c) is (OpaqueCase if r.hidden else Case) for c in r.cases) and r.cases for r in here.runs)
    # the run's code: the answers of the functions it calls, then its own
    assert [label for label, _ in here.runs[2].cells] == ["softmax", "scaled_scores", "attention"]
    # written, whole, with what it judged and how
    assert record.read(ws.verdict("ann", "attention", NB3)) == out
    staged = nbformat.read(ws.staged("ann", "attention", NB3), as_version=4)
    assert out.key == decide.verdict_key(staged, "attention", NB3, ROOT)
    assert out.answers == decide.answers_digest(staged) and out.settings == decide.settings(sandbox.DEFAULT)
    assert set(out.functions) == set(FUNCTIONS3) == set(out.seconds)
    for f in FUNCTIONS3:
        kept = out.functions[f]
        assert kept.notes == () and kept.checks == {cid: None for cid in kept.checks}
        assert set(kept.checks) == {cid for t in spec.tests for g, cid in t.checks if g == f}
        # two runs of RUN_SECONDS each, kept to the millisecond
        assert kept.seconds == out.seconds[f] == round(out.seconds[f], 3) and abs(kept.seconds - 2 * RUN_SECONDS) < 2e-3


def test_wrong_answers_fail_their_cells_and_fair_blame_reruns_come_last_with_the_course_functions(tmp_path, here):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB3, {"softmax": WRONG_SOFTMAX, "attention": NO_MASK_ATTENTION})
    out = decide.grade_one("ann", "attention", NB3, ws=ws)
    hidden_of = _checks(NB3)
    assert {cid for cid, found in out.checks.items() if found is not None} == {
        *(c for c in hidden_of if c.startswith("softmax/")), "attention/causal-mask", "attention/hidden/random-masks"}
    assert all(_hidden_words(found) for cid, found in out.checks.items() if found is not None and hidden_of[cid])
    # softmax's own public findings name the inputs they failed on; what the re-runs found is in hidden words
    assert not any(_hidden_words(out.checks[c]) for c in hidden_of if c.startswith("softmax/") and not hidden_of[c])
    assert _hidden_words(out.checks["attention/causal-mask"])
    for t in load_spec("attention", NB3, ROOT).tests:
        cell, found = out.cells[t.grade_id], [out.checks[cid] for _f, cid in t.checks]
        assert cell.failed == sum(f is not None for f in found) and cell.passed == (cell.failed == 0)
        assert [ln.startswith("✗") for ln in cell.lines] == [f is not None for f in found]
        assert all(ln.endswith(f": {f}") for ln, f in zip(cell.lines, found, strict=True) if f is not None)
    assert out.cells["softmax-public"].failed == 5 and not out.cells["softmax-public"].passed
    # attention still fails with the course's softmax (its own mistake); multi_head_attention passes with it
    assert [n.kind for n in out.notes] == [NoteKind.JUDGED_WITH_COURSE, NoteKind.DEPENDENCY_BLAMED]
    assert out.functions["attention"].notes == out.notes[:1]
    assert out.functions["multi_head_attention"].notes == out.notes[1:]
    # every re-run comes after the notebook's hidden runs, through the oracle, each group in its phase's session
    first_rerun = next(i for i, r in enumerate(here.runs) if r.oracle)
    assert all(r.oracle for r in here.runs[first_rerun:]) and here.runs[first_rerun - 1].hidden
    assert [(r.function, r.hidden, r.oracle) for r in here.runs[first_rerun:]] == [
        ("attention", False, ["softmax"]), ("attention", True, ["softmax"]),
        ("multi_head_attention", False, ["softmax", "attention"]),
        ("multi_head_attention", True, ["softmax", "attention"])]
    assert all(r.session == here.opened[1][r.hidden] for r in here.runs[first_rerun:])
    assert [c for c in here.runs[first_rerun].cells if c[0] == "softmax"] == [("softmax", None)]


def test_a_function_failing_some_checks_only_through_a_dependency_keeps_its_points(tmp_path, here):
    """A softmax that overflows on large scores fails a few checks of attention, not all: attention is
    judged again with the course's softmax, passes, and the note names softmax."""
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB3, {"softmax": NAIVE_SOFTMAX})
    out = decide.grade_one("ann", "attention", NB3, ws=ws)
    assert out.checks["softmax/large-scores"] is not None and out.checks["softmax/rows-sum-to-one"] is None
    assert all(found is None for cid, found in out.checks.items() if not cid.startswith("softmax/"))
    assert [(n.kind, n.text.split("`")[1]) for n in out.notes] == [
        (NoteKind.DEPENDENCY_BLAMED, "attention")]


def test_fair_blame_reruns_a_group_of_a_single_check(tmp_path, here, monkeypatch):
    """A test cell may hold one hidden check of a function that calls others (no cell of the course's does)."""
    course_spec = decide.load_spec

    def one_hidden_check(assignment: str, notebook: str, course: Path):
        spec = course_spec(assignment, notebook, course)
        return dataclasses.replace(spec, tests=tuple(
            dataclasses.replace(t, checks=t.checks[:1], hidden=frozenset({t.checks[0][1]}))
            if t.grade_id == "attention-hidden" else t for t in spec.tests))

    monkeypatch.setattr(decide, "load_spec", one_hidden_check)
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB3, {"softmax": WRONG_SOFTMAX})
    out = decide.grade_one("ann", "attention", NB3, ws=ws)
    assert not out.failed and out.cells["attention-hidden"] == CellResult(True, 0, (
        f"✓ attention: hidden check: {REGISTRY['attention/hidden/random'].description}",), 2.0)
    assert out.notes[0].kind is NoteKind.DEPENDENCY_BLAMED
    assert [(len(r.cases) > 0, r.hidden, r.session) for r in here.runs if r.function == "attention" and r.oracle] == [
        (True, False, here.opened[1][False]), (True, True, here.opened[1][True])]


def test_a_run_that_crashed_fails_every_check_with_its_reason_and_is_not_run_again(tmp_path, here):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB4)
    crashed = Finding("crashed (possibly out of memory)", Kind.CRASHED)
    here.results["score_stds"] = sandbox.RunResult(None, crashed, [], RUN_SECONDS)
    out = decide.grade_one("ann", "attention", NB4, ws=ws)
    # one run: for the hidden checks, the result of the public run stands
    assert [(r.function, r.hidden) for r in here.runs] == [("score_stds", False)]
    assert out.checks == {cid: crashed.hidden() if hidden else crashed for cid, hidden in _checks(NB4).items()}
    assert out.cells["score_stds-public"].lines[0].endswith(": crashed (possibly out of memory)")
    hidden_label = REGISTRY["score_stds/hidden/random"].description
    assert out.cells["score_stds-hidden"].lines == (f"✗ score_stds: hidden check: {hidden_label}: {crashed.hidden()}",)
    assert not any(c.passed for c in out.cells.values()) and [c.failed for c in out.cells.values()] == [2, 1]


def test_a_stub_is_never_run_nor_blamed_and_fails_as_not_answered(tmp_path, here):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB3, dict.fromkeys(FUNCTIONS3, STUB))
    out = decide.grade_one("ann", "attention", NB3, ws=ws)
    assert here.runs == [] and out.notes == ()
    for cid, hidden in _checks(NB3).items():
        f = cid.split("/")[0]
        stub = Finding(f"not answered: the cell of {f} still holds the stub", Kind.NOT_ANSWERED)
        assert out.checks[cid] == (stub.hidden() if hidden else stub)
    assert out.seconds == dict.fromkeys(FUNCTIONS3, 0.0)


def test_a_function_whose_code_did_not_change_keeps_its_record_notes_and_seconds(tmp_path, here):
    """The notes of what other cells raised are made once per function, and kept with it."""
    ws = Workspace(tmp_path, ROOT)
    raising = blame.reference_cell("attention", NB3, "softmax", ROOT) + "raise ValueError('after the definition')\n"
    _submit(ws, "ann", NB3, {"softmax": raising})
    first = decide.grade_one("ann", "attention", NB3, ws=ws)
    assert [n.text.split(":")[0] for n in first.notes] == [f"While grading {f}" for f in FUNCTIONS3[2:]]
    # in the words of the public run (a hidden run's name the exception only)
    assert all(n.kind is NoteKind.CELL_RAISED and "ValueError: after the definition" in n.text for n in first.notes)
    assert first.functions["attention"].notes == first.notes[:1] and first.functions["softmax"].notes == ()
    here.runs.clear()
    mha = blame.reference_cell("attention", NB3, "multi_head_attention", ROOT) + "# another answer\n"
    _submit(ws, "ann", NB3, {"softmax": raising, "multi_head_attention": mha})
    second = decide.grade_one("ann", "attention", NB3, ws=ws)
    assert {r.function for r in here.runs} == {"multi_head_attention"}
    assert all(r.session is not None for r in here.runs)  # sessions are opened when one function runs
    assert second.functions["attention"] == first.functions["attention"]
    assert second.seconds["attention"] == first.seconds["attention"]
    assert second.notes == first.notes and second.cells == first.cells and second.checks == first.checks
    here.runs.clear()
    opened = len(here.opened)
    third = decide.grade_one("ann", "attention", NB3, ws=ws)  # nothing changed: nothing runs, no session opens
    assert here.runs == [] and len(here.opened) == opened and third.functions == second.functions


def test_a_cell_checking_a_hidden_check_beside_a_public_one_marks_it_hidden(tmp_path, here):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB2)
    out = decide.grade_one("ann", "attention", NB2, ws=ws)
    assert out.cells["shape_answers-public"] == CellResult(True, 0, (
        f"✓ shape_answers: {REGISTRY['shape_answers/lecture'].description}",
        f"✓ shape_answers: hidden check: {REGISTRY['shape_answers/hidden/values'].description}"), 2.0)
    assert [(r.function, r.hidden) for r in here.runs if r.function == "shape_answers"] == [
        ("shape_answers", False), ("shape_answers", True)]


def test_without_bubblewrap_the_verdict_says_so(tmp_path, here, monkeypatch):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB1)
    monkeypatch.setattr(sandbox, "mode", lambda: "fallback")
    out = decide.grade_one("ann", "attention", NB1, ws=ws)
    assert out.notes == (Note("Graded without the bubblewrap sandbox (weaker isolation).", NoteKind.WEAKER_SANDBOX),)
    assert out.sandbox == "fallback" and all(c.passed for c in out.cells.values())


def test_a_resubmission_keeps_the_mistakes_of_the_verdict_it_replaces(tmp_path, here):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB3, {"softmax": WRONG_SOFTMAX})
    decide.grade_one("ann", "attention", NB3, ws=ws)
    assert history.read("ann", "attention", NB3, ws) == []
    _submit(ws, "ann", NB3)
    decide.grade_one("ann", "attention", NB3, ws=ws)
    [entry] = history.read("ann", "attention", NB3, ws)
    assert set(entry["mistakes"]) and all(cid.startswith("softmax/") for cid in entry["mistakes"])


# --- one notebook's failure costs no other: grade_one, _failed, public_job, hidden_job, decide_in_phases ---


def test_a_batch_makes_every_public_run_first_and_a_failed_notebook_costs_no_other(tmp_path, here, clock):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB1)
    _submit(ws, "ben", NB4)
    _submit(ws, "cy", NB1)
    here.raises["score_stds", True] = RuntimeError("the sandbox broke")
    jobs = [(s, "attention", nb, sandbox.DEFAULT) for s, nb in (("ann", NB1), ("ben", NB4), ("cy", NB1))]
    clock += [10.0, 11.5, 20.0, 20.25, 30.0, 31.0, 40.0, 42.0, 50.0, 50.5, 60.0, 60.125]
    done = decide.decide_in_phases(jobs, ws)
    assert done == [("ann", "attention", NB1, 3.5), ("ben", "attention", NB4, 0.75), ("cy", "attention", NB1, 1.125)]
    assert [(r.function, r.hidden) for r in here.runs] == [
        ("embed", False), ("score_stds", False), ("embed", False), ("embed", True), ("score_stds", True),
        ("embed", True)]
    for s, nb in (("ann", NB1), ("cy", NB1)):
        out = record.read(ws.verdict(s, "attention", nb))
        assert not out.failed and all(c.passed for c in out.cells.values()) and out.student == s
    failed = record.read(ws.verdict("ben", "attention", NB4))
    assert failed.failed and failed.cells == {} and failed.settings == decide.settings(sandbox.DEFAULT)
    assert failed.notes == (Note("The grader could not process this notebook (RuntimeError: the sandbox broke); "
                                 "it scores zero.", NoteKind.GRADER_ERROR),)
    staged = nbformat.read(ws.staged("ben", "attention", NB4), as_version=4)
    assert failed.key == decide.verdict_key(staged, "attention", NB4, ROOT)  # nbgrader applies it


def test_a_notebook_failing_in_its_public_runs_is_decided_failed_once(tmp_path, here, clock):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB1)
    here.raises["embed", False] = RuntimeError("no sandbox")
    clock += [1.0, 3.0]
    first = decide.public_job(("ann", "attention", NB1, sandbox.DEFAULT), ws)
    assert first == (("ann", "attention", NB1, sandbox.DEFAULT), None, 2.0)
    out = record.read(ws.verdict("ann", "attention", NB1))
    assert out.failed and "RuntimeError: no sandbox" in out.notes[0].text
    clock += [5.0, 5.5]
    assert decide.hidden_job(first, ws) == ("ann", "attention", NB1, 2.5)
    assert [r.hidden for r in here.runs] == [False] and record.read(ws.verdict("ann", "attention", NB1)) == out


def test_a_job_staged_by_its_caller_is_not_staged_again(tmp_path, here, clock, monkeypatch):
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "ann", NB1)
    said = decide.stage("ann", "attention", NB1, ws)
    staged: list[str] = []
    monkeypatch.setattr(decide, "stage", lambda student, *_a, **_k: staged.append(student) or [])
    clock += [0.0, 1.0, 2.0, 2.5]
    job = ("ann", "attention", NB1, sandbox.DEFAULT)
    first = decide.public_job(job, ws, [*said, Note("staged by the caller", NoteKind.OTHER)])
    assert staged == [] and first[1] is not None and first[2] == 1.0
    assert decide.hidden_job(first, ws) == ("ann", "attention", NB1, 1.5)
    assert record.read(ws.verdict("ann", "attention", NB1)).notes[-1].text == "staged by the caller"
    clock += [3.0, 4.0]
    decide.public_job(job, ws)
    assert staged == ["ann"]


@pytest.mark.parametrize("staged_before", [False, True], ids=["first-notebook", "beside-another"])
def test_a_notebook_whose_staging_raised_scores_zero_judged_as_the_release(tmp_path, here, monkeypatch, staged_before):
    ws = Workspace(tmp_path, ROOT)
    if staged_before:  # another notebook of the same student is staged already
        _submit(ws, "ann", NB4)
        decide.grade_one("ann", "attention", NB4, ws=ws)

    def stage(*_args, **_kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(decide, "stage", stage)
    out = decide.grade_one("ann", "attention", NB1, ws=ws)
    assert out.failed and out.notes[0].kind is NoteKind.GRADER_ERROR and "(OSError: disk on fire)" in out.notes[0].text
    assert record.read(ws.verdict("ann", "attention", NB1)) == out
    release = nbformat.read(decide.release_path("attention", NB1, ROOT), as_version=4)
    assert out.key == decide.verdict_key(release, "attention", NB1, ROOT)
    assert answer_cells(ws.staged("ann", "attention", NB1)) == answer_cells(release)

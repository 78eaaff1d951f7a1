"""Fair blame for faults: a ``softmax`` that loops forever, exhausts memory, kills its interpreter
or floods the output costs ``softmax``'s points only.

Each submission is notebook 03 answered with the course's own code except ``softmax``, graded
through :func:`autograder.verdicts.decide.grade_one` in the real sandbox with a 2 s CPU limit (the
default 60 s would make a looping answer take minutes). ``attention``, which calls that
``softmax``, must keep its points with a note naming ``softmax``; ``softmax`` must score nothing,
with a message that says what went wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.notes import NoteKind, notes_of
from autograder.workspace import from_environment

ROOT = Path(__file__).resolve().parent.parent

#: name -> (the cell of softmax, words its failure message must contain)
FAULTS = {
    "loops-forever": ("def softmax(S, axis=-1):\n    while True:\n        pass\n", "CPU time"),
    "exhausts-memory": ("def softmax(S, axis=-1):\n    hoard = []\n    while True:\n"
                        "        hoard.append(np.ones(1 << 22))\n",
                        # a memory cgroup (where the machine has one) may reclaim until the CPU limit first
                        ("MemoryError", "of CPU time")),
    "os-exit": ("import os\n\ndef softmax(S, axis=-1):\n    os._exit(0)\n", "ended before returning results"),
    "kills-itself": ("import os\nimport signal\n\ndef softmax(S, axis=-1):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
                     "killed (signal 9)"),
    "exits-on-definition": ("import os\nos._exit(3)\n", "ended before returning results (exit status 3"),
    "floods-stdout-and-stderr": ("import os\nimport sys\n\ndef softmax(S, axis=-1):\n    while True:\n"
                                 "        print('x' * 100_000)\n        print('y' * 100_000, file=sys.stderr)\n"
                                 "        os.write(1, b'z' * 100_000)\n", "CPU time"),
}

#: A student whose three functions of notebook 03 are all wrong, each in its own way (issue 18): the
#: feedback on ``attention`` must name its own mistake, never ``softmax``'s or ``scaled_scores``'.
ALL_WRONG = {
    "softmax": "def softmax(S, axis=-1):\n    e = np.exp(S)\n    return e / e.sum(axis=axis, keepdims=True)\n",
    "scaled_scores": "def scaled_scores(Q, K):\n    return Q @ K.T\n",
    "attention": ("def attention(Q, K, V, mask=None):\n    A = softmax(scaled_scores(Q, K))\n"
                  "    if mask is not None:\n        A = A + mask\n    return A @ V\n"),
}
MASK_AFTER = "mask applied after softmax (softmax(S) + mask)"
DEPENDENCY_WORDS = ("1/√d_k", "row maximum", "-inf · 0", "overflow")

#: Students whose own words are the grader's (issue 20): a cell that raises "could not be read as a
#: notebook" after defining a right softmax, and a softmax that raises "ran out of time ..." at once.
MIMICS = {
    "says-unreadable": {"softmax": "def softmax(S, axis=-1):\n    E = np.exp(S - S.max(axis=axis, keepdims=True))\n"
                                   "    return E / E.sum(axis=axis, keepdims=True)\n\n\n"
                                   "raise ValueError('could not be read as a notebook')\n"},
    "says-time-out": {"softmax": "def softmax(S, axis=-1):\n    raise ValueError('ran out of time (an infinite loop "
                                 "or a very slow computation?)')\n"},
}

#: A right attention that uses a helper defined in the cell of its failing softmax: judged with the
#: course's softmax, the helper must still be there (only the function softmax is replaced).
HELPER_IN_DEPENDENCY = {
    "softmax": ("def with_mask(S, mask):\n    return S if mask is None else S + mask\n\n\n"
                "def softmax(S, axis=-1):\n    e = np.exp(S)\n    return e / e.sum(axis=axis, keepdims=True)\n"),
    "attention": ("def attention(Q, K, V, mask=None):\n"
                  "    return softmax(with_mask(scaled_scores(Q, K), mask)) @ V\n"),
}

#: student -> the answers that replace the course's in their notebook 03
STUDENTS = ({k: {"softmax": v[0]} for k, v in FAULTS.items()} | {"all-wrong": ALL_WRONG} | MIMICS
            | {"helper-in-dependency": HELPER_IN_DEPENDENCY})

GRADE = """
import json, sys, time
import nbformat
from autograder.verdicts import blame
from autograder import sandbox
from autograder.verdicts import decide as verdicts
from autograder.paths import WORK
from autograder.workspace import from_environment

WS = from_environment()

NOTEBOOK = "03-softmax-attention"
limits = sandbox.Limits(cpu_seconds=2, memory_bytes=512 << 20)
out = {}
for student, answers in json.load(sys.stdin).items():
    nb = nbformat.read(verdicts.release_path("attention", NOTEBOOK, WS.course), as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution"):  # the course's answer, but the given ones
            cell.source = answers.get(grade_id) or blame.reference_cell("attention", NOTEBOOK, grade_id, WS.course)
    path = WORK / "submitted" / student / "attention" / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    t0 = time.perf_counter()
    v = verdicts.grade_one(student, "attention", NOTEBOOK, limits=limits, ws=WS)
    stored = v.to_json()
    out[student] = {"cells": stored["cells"], "notes": stored["notes"], "checks": stored["checks"],
                    "seconds": time.perf_counter() - t0}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(tmp_path_factory.mktemp("faults")))
    run = subprocess.run([sys.executable, "-c", GRADE], input=json.dumps(STUDENTS),
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_faulty_softmax_costs_softmax_its_points_only(graded, fault):
    verdict = graded[fault]
    cells, notes = verdict["cells"], notes_of(verdict)
    print(f"{fault}: graded in {verdict['seconds']:.1f} s")
    for gid in ("softmax-public", "softmax-hidden"):
        assert not cells[gid]["passed"], f"{gid}: {cells[gid]['lines']}"
    said = FAULTS[fault][1]
    assert any(w in cells["softmax-public"]["lines"][0] for w in ((said,) if isinstance(said, str) else said)), \
        cells["softmax-public"]["lines"]
    for gid in ("scaled_scores-public", "scaled_scores-hidden", "attention-public", "attention-hidden"):
        assert cells[gid]["passed"], f"{gid}: {cells[gid]['lines']} (notes: {notes})"
    assert any(n.text.startswith("`attention` is right, but it calls your `softmax`, which fails: fix `softmax`")
               and n.kind is NoteKind.DEPENDENCY_BLAMED for n in notes), notes
    assert not any("scaled_scores` is right" in n.text or "locked cell" in n.text for n in notes), notes


def test_a_student_whose_words_are_the_graders_is_counted_as_what_happened(graded):
    """The cell that raised "could not be read as a notebook" is a note of a cell that raised (attention
    was graded with it), and a softmax raising "ran out of time" raised: the class report built from
    these verdicts counts no unreadable notebook and no time-out."""
    from collections import Counter

    from autograder.reporting.class_data import ClassData
    from autograder.reporting.class_report import build
    from autograder.reporting.failures import classify
    from autograder.verdicts.record import Verdict

    loud = notes_of(graded["says-unreadable"])
    raised = [n for n in loud if "could not be read as a notebook" in n.text]
    assert raised and all(n.kind is NoteKind.CELL_RAISED for n in raised), loud
    assert all(n.text.startswith("While grading ") for n in raised), raised  # the text people read, as before
    timed = [classify(f) for cid, f in graded["says-time-out"]["checks"].items() if cid.startswith("softmax/") and f]
    assert timed and all(kind == "unnamed" for kind, _ in timed), timed
    data = ClassData(students=sorted(MIMICS), assignments=["attention"], ws=from_environment(),
                     verdicts={(s, "attention", "03-softmax-attention"): Verdict.from_json(graded[s])
                               for s in MIMICS})
    tables: dict = {}
    build(data, None, tables)
    kinds = Counter(row[3] for row in tables["faults"][1])
    assert kinds["cell raised"] >= 1 and not kinds["unreadable notebook"] and not kinds["time-out"], kinds


# ------------------------------------------------------------------------- the notebook side
def _notebook_side(answers: dict[str, str], then: tuple[str, ...] = ()) -> dict[str, str]:
    """Notebook 03 in a live kernel with the course's answers but ``answers`` (by grade id): the text each cell
    shows, by grade id (its error's message, what it printed or displayed), with a 1 s limit per
    stuck call; ``then`` are cells run after the notebook (shown as then-0, then-1, ...)."""
    import nbformat
    from nbclient import NotebookClient

    folder = ROOT / "solutions" / "attention"
    nb = nbformat.read(folder / "03-softmax-attention.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in answers:
            cell.source = answers[cell.metadata["nbgrader"]["grade_id"]]
    nb.cells.append(nbformat.v4.new_code_cell(
        "import signal\n"
        "print('timer', signal.getitimer(signal.ITIMER_REAL), signal.getitimer(signal.ITIMER_PROF),\n"
        "      signal.getsignal(signal.SIGALRM) == signal.getsignal(signal.SIGPROF) == signal.SIG_DFL)"))
    for k, source in enumerate(then):
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"grade_id": f"then-{k}"}}))
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    shown = {}
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or "demos." in cell.source or "BEGIN HIDDEN TESTS" in cell.source:
                continue
            client.execute_cell(cell, i)
            if i == 1:  # the imports: now make a stuck call give up after 1 s instead of 10
                client.execute_cell(nbformat.v4.new_code_cell(
                    "import selfattn.checks.notebook\nselfattn.checks.notebook.NOTEBOOK_SECONDS = 1.0"), i)
            shown[meta.get("grade_id", "last")] = " ".join(  # a failed check's lines, wrapped for nbgrader, unwrapped
                o.get("evalue", "") + o.get("text", "") + o.get("data", {}).get("text/plain", "")
                for o in cell.outputs).replace("\n    ", " ")
    return shown


def test_in_the_notebook_a_stuck_softmax_fails_its_own_check_and_attention_keeps_its_tick():
    """When attention fails while softmax fails its own checks, the notebook judges attention with the
    course's softmax, as grading does: a right attention gets ✓ with the note naming softmax to fix,
    in the check, the summary and compare(), never a ✗ on an answer that keeps its points."""
    axis_0 = "def softmax(S, axis=-1):\n    E = np.exp(S - S.max())\n    return E / E.sum(axis=0, keepdims=True)\n"
    shown = _notebook_side({"softmax": FAULTS["loops-forever"][0]}, then=(axis_0, "compare(attention)"))
    assert ("softmax(array of shape (3, 5)) used 1 s of CPU time without a result (an infinite loop?)"
            in shown["softmax-public"])
    blamed = "attention is right, but it calls your softmax, which fails: fix softmax"
    assert shown["attention-public"].startswith(f"✓ attention: softmax(Q Kᵀ/√d_k) V for T_q ≠ T_k ({blamed})"), (
        shown["attention-public"])
    assert "✗" not in shown["attention-public"] and "Withheld" not in shown["attention-public"]
    assert "✓ scaled_scores" in shown["scaled_scores-public"]
    assert "used 1 s of CPU time without a result" in shown["compare-attention"]
    assert "✗  softmax (3 points): softmax(array of shape (3, 5)) used 1 s of CPU time" in shown["summary"]
    assert f"✓  attention (3 points): public checks pass; {blamed}" in shown["summary"], shown["summary"]
    assert "timer (0.0, 0.0) (0.0, 0.0) True" in shown["last"]  # no timer left behind
    # a softmax that returns wrong weights: compare's verdict is check()'s, and names softmax
    assert shown["then-1"].startswith("✓ "), shown["then-1"]
    assert blamed in shown["then-1"], shown["then-1"]


def test_the_notebook_blames_softmax_for_what_it_returned_on_the_inputs_attention_gave_it():
    """A softmax that passes its public checks but returns no distribution on the scores attention
    gives it: attention's check says to fix softmax first and why, with no verdict of its own (no ✓,
    no ✗): grading may or may not find softmax at fault on its hidden checks."""
    odd = ("def softmax(S, axis=-1):\n    E = np.exp(S - S.max(axis=axis, keepdims=True))\n"
           "    if np.min(S) > 100:\n        return E\n    return E / E.sum(axis=axis, keepdims=True)\n")
    shown = _notebook_side({"softmax": odd})
    assert "✓ softmax: each row is a distribution" in shown["softmax-public"], shown["softmax-public"]
    said = ("? attention can't be judged until your softmax passes: fix softmax first: on the inputs attention gave "
            "it, a row of its output does not sum to 1")
    assert said in shown["attention-public"], shown["attention-public"]
    assert "✗" not in shown["attention-public"], shown["attention-public"]
    assert "?  attention (3 points): attention can't be judged until your softmax passes" in shown["summary"], (
        shown["summary"])


def test_the_grader_names_attentions_own_mistake_when_its_dependencies_are_wrong_too(graded):
    """Judged with the course's softmax and scaled_scores, attention's check without a mask passes and
    the mask checks name the mask added after the softmax: never 1/√d_k or the row maximum (the
    mistakes of the functions it calls), and the class report counts it under that name."""
    from autograder.reporting.failures import classify
    from selfattn.checks.exercises import ATTENTION

    verdict = graded["all-wrong"]
    cells, notes = verdict["cells"], notes_of(verdict)
    for gid in ("softmax-public", "scaled_scores-public", "attention-public", "attention-hidden"):
        assert not cells[gid]["passed"], f"{gid}: {cells[gid]['lines']}"
    assert "missing the 1/√d_k scaling" in " ".join(cells["scaled_scores-public"]["lines"])
    lines = cells["attention-public"]["lines"] + cells["attention-hidden"]["lines"]
    assert lines[0].startswith("✓ attention: softmax(Q Kᵀ/√d_k) V"), lines
    import autograder.hidden_checks  # noqa: F401 - registers the hidden checks with their records

    order = [*ATTENTION.public_checks, *(c for c in ATTENTION.checks if c.hidden)]   # the cells' line order
    assert [ln.startswith("✗") for ln in lines] == ["mask" in c.description for c in order], lines
    for line in (ln for ln in lines if ln.startswith("✗")):
        assert MASK_AFTER in line and not any(w in line for w in DEPENDENCY_WORDS), line
        assert "on input" not in line, line  # a re-run comes after the hidden runs: fixed wording only
    assert "`attention` was judged with the course's `softmax`, `scaled_scores` (yours fail their checks)" in " ".join(
        n.text for n in notes), notes
    assert not any("`attention` is right" in n.text for n in notes), notes
    named = {classify(found) for cid, found in verdict["checks"].items() if cid.startswith("attention/") and found}
    assert named == {("named", next(f"attention/{m.id}" for m in ATTENTION.mistakes
                                    if m.message.startswith(MASK_AFTER)))}, named
    assert "judged with the course's functions" in {n.kind.value for n in notes}


def test_judged_with_the_courses_softmax_the_helpers_of_the_students_softmax_cell_stay(graded):
    """The re-run with the course's softmax replaces the function softmax alone: a helper defined in
    softmax's cell and used by attention is still defined, so attention keeps its points (it raised
    NameError on every check, public ones included, when the whole cell was replaced)."""
    verdict = graded["helper-in-dependency"]
    cells, notes = verdict["cells"], notes_of(verdict)
    assert not cells["softmax-public"]["passed"] or not cells["softmax-hidden"]["passed"], cells["softmax-public"]
    for gid in ("attention-public", "attention-hidden"):
        assert cells[gid]["passed"], f"{gid}: {cells[gid]['lines']} (notes: {notes})"
    assert any(n.kind is NoteKind.DEPENDENCY_BLAMED and "`softmax`" in n.text for n in notes), notes


def test_the_notebook_names_attentions_own_mistake_when_its_dependencies_are_wrong_too():
    """Judged with the course's softmax and scaled_scores, as the grader does (above), attention's own
    mistake is named, never its dependencies'."""
    shown = _notebook_side(ALL_WRONG)
    attention = shown["attention-public"]
    own = ("✗ attention was judged with the course's softmax, scaled_scores (yours fail their checks): what is said "
           "of attention is its own mistake. mask applied after softmax")
    assert own in attention, attention
    said = [line.split(" (check of ")[0] for line in attention.splitlines() if line.strip().startswith("✗")]
    assert said and not any(w in m for m in said for w in DEPENDENCY_WORDS), attention
    assert "✗  attention (3 points): attention was judged with the course's" in shown["summary"], shown["summary"]


def test_a_softmax_printing_forever_is_stopped_and_its_output_costs_no_memory():
    """What the notebook's check does around each call (output thrown away, a time limit), here
    in the test's own main thread: 0.5 s of printing 200 kB a line kept nearly 900 MiB in the
    StringIO the check used before."""
    import signal
    import tracemalloc

    from selfattn.checks.calling import TIME_LIMIT, Case, call_cases
    from selfattn.checks.notebook import _as_graded, time_limit

    def softmax(S, axis=-1):
        while True:
            print("x" * 100_000)
            print("y" * 100_000, file=sys.stderr)

    before = sys.stdout, sys.stderr, signal.getsignal(signal.SIGALRM)
    tracemalloc.start()
    try:
        with _as_graded(), time_limit(0.5):
            (outcome,) = call_cases(softmax, [Case((np.zeros(3),))])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (outcome.kind, outcome.error) == (TIME_LIMIT, "used 0.5 s of CPU time without a result (an infinite loop?)")
    assert peak < 16 << 20, f"{peak >> 20} MiB kept"
    assert signal.getitimer(signal.ITIMER_REAL) == signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # no timer left
    assert (sys.stdout, sys.stderr, signal.getsignal(signal.SIGALRM)) == before


def test_a_stuck_function_defined_outside_a_cell_fails_its_check_in_time(monkeypatch):
    """A function the notebook did not define in a cell (imported, or made by exec) is called as it
    is: a loop there fails its check after the same time limit instead of hanging the kernel."""
    import pytest

    from selfattn import checking
    from selfattn.checks import notebook

    monkeypatch.setattr(notebook, "NOTEBOOK_SECONDS", 0.3)

    def softmax(S, axis=-1):
        while True:
            pass

    with pytest.raises(checking.CheckFailed, match=r"used 0\.3 s of CPU time without a result"):
        checking.check(softmax, "softmax/rows-sum-to-one")


@pytest.mark.unit
@pytest.mark.parametrize(("cell", "kept"), [
    ("def helper(S):\n    return S\n\n\ndef softmax(S, axis=-1):\n    return S\n", ["helper"]),
    ("import os\nos._exit(3)\n", ["os"]),
    ("import functools\n\n@functools.cache\ndef scale(n):\n    return n ** -0.5\nC = 3; print(C)\n",
     ["functools", "scale", "C"]),
    ("class Softmax:\n    pass\n\nsoftmax = Softmax()\n", ["Softmax", "softmax"]),
    ("def softmax(:\n", []),
    ("raise ValueError('x')\n", []),
])
def test_the_re_run_keeps_the_definitions_of_a_dependencys_cell_besides_the_function(cell, kept):
    """What of a failing dependency's cell runs beside the course's function: the names it defines
    (functions, classes, imports, assignments), never its own function, its calls or its exits; the
    names the kept source defines are exactly these (an assignment to the name stays: the course's
    stand-in is installed after it)."""
    import ast

    from autograder.verdicts.blame import definitions_besides

    source = definitions_besides(cell, "softmax")
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names]
        else:
            names.append(node.name)
    assert names == kept, source
    assert "print" not in source and "_exit" not in source and "raise" not in source, source


@pytest.mark.unit
def test_the_notebooks_limits_are_of_gradings_kinds_cpu_time_and_time_in_all():
    """A call that computes is stopped by CPU time, as grading's run is (RLIMIT_CPU); a call that waits
    (sleeps) uses no CPU and is stopped only by the time in all, given as grading's; each message says
    which limit it met, and the check's line says grading's limits as they are."""
    import time

    from autograder import sandbox
    from selfattn.checks.calling import TIME_LIMIT, Case, call_cases
    from selfattn.checks.judging import first_error
    from selfattn.checks.notebook import time_limit
    from selfattn.checks.record import REGISTRY

    def busy(S, axis=-1):
        while True:
            pass

    def sleeps(S, axis=-1):
        time.sleep(0.6)
        return np.exp(S) / np.exp(S).sum()

    with time_limit(0.3, wait=60.0):   # wall far above: a loaded machine gives the loop a small share of a core
        (stuck,) = call_cases(busy, [Case((np.zeros(3),))])
        (slept,) = call_cases(sleeps, [Case((np.zeros(3),))])  # 0.6 s of waiting is no CPU time
    assert (stuck.kind, stuck.error) == (TIME_LIMIT, "used 0.3 s of CPU time without a result (an infinite loop?)")
    assert slept.kind != TIME_LIMIT, slept
    with time_limit(5.0, wait=0.3):
        (waited,) = call_cases(lambda S, axis=-1: time.sleep(30), [Case((np.zeros(3),))])
    assert waited.kind == TIME_LIMIT and waited.error.startswith("waited 0.3 s without a result"), waited
    found = first_error(REGISTRY["softmax/rows-sum-to-one"], [Case((np.zeros(3),))], [stuck])
    limits = sandbox.DEFAULT
    assert found is not None and (f"grading stops a run of its checks after {limits.cpu_seconds} s of CPU time or "
                                  f"{limits.wall_seconds:g} s in all") in found.text, found


def test_the_course_function_a_re_run_calls_finds_the_courses_own_graded_functions_beside_it():
    """``multi_head_attention`` judged with the course's ``attention`` (fair blame): the oracle runs the
    course's cell of ``attention``, which calls ``softmax`` and ``scaled_scores``, beside the course's
    cells of those two (alone, it raised NameError and the student lost the points of a right answer);
    only ``attention`` is offered to the student's run."""
    from autograder.sandbox.oracle import reference_functions
    from autograder.verdicts.blame import _reference_sources
    from selfattn import numerics

    course = reference_functions(dict(_reference_sources("attention", "03-softmax-attention", ("attention",), ROOT)))
    assert set(course) == {"attention"}
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    np.testing.assert_allclose(course["attention"](Q, K, V), numerics.attention(Q, K, V), rtol=1e-12)

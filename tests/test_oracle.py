"""Fair blame never puts the course's solution next to student code.

When ``attention`` and the ``softmax`` it calls both fail, the grader judges ``attention`` again "with
the course's softmax". The course's function runs in the grader's process as an oracle
(:mod:`autograder.sandbox.oracle`); the sandbox holds a stand-in that sends arrays and gets arrays.
These tests hunt for the reference from inside the sandbox, the way an attacker did (frames, ``gc``,
``sys.modules``, files, ``/proc/self/*``), in public runs, hidden runs and blame re-runs, and check the
oracle's bounds: arguments of no known kind, too many requests, a request never read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from autograder import sandbox
from autograder.sandbox.oracle import Oracle, OracleCaps, reference_functions
from autograder.workspace import ROOT
from selfattn.checks.calling import Case
from selfattn.checks.findings import Kind
from tests.test_fault_blame import GRADE

#: a reference whose source, constants and names carry a canary the student's code never spells
CANARY_REFERENCE = ("def softmax(S, axis=-1):\n    marker = 'zq' + '-canary-' + '4417'\n"
                    "    CANARY = 'zq-canary-4417'\n"
                    "    e = np.exp(S - S.max(axis=axis, keepdims=True))\n"
                    "    return e / e.sum(axis=axis, keepdims=True)\n")

#: the hunt, as a function body's code: ``n`` counts every place the canary (or a course cell named
#: ``softmax``) was found; the student's own cells are labelled by their function, so in a run whose
#: ``softmax`` is the course's, any code compiled from "<softmax>" is the course's
HUNT = '''
    import gc, os, sys
    c = "".join(["zq", "-can", "ary-4417"])  # a call: the compiler folds "a" + "b" into one constant
    n = 0
    for o in gc.get_objects():
        try:
            if type(o).__name__ == "code" and o.co_filename == "<softmax>":
                n += 1
            elif type(o).__name__ == "function" and getattr(o.__code__, "co_filename", "") == "<softmax>":
                n += 1
            elif c in repr(o):
                n += 1
        except Exception:
            pass
    f = sys._getframe(1)
    while f is not None:
        try:
            if c in repr(f.f_globals) or c in repr(f.f_locals) or c in repr(f.f_code.co_consts):
                n += 1
        except Exception:
            pass
        f = f.f_back
    for name, module in list(sys.modules.items()):
        try:
            if c in repr(vars(module)):
                n += 1
        except Exception:
            pass
    for root in ("/harness", "/tmp", "/dev/shm", os.getcwd()):
        for folder, _, files in os.walk(root):
            for x in files:
                try:
                    with open(os.path.join(folder, x), "rb") as fh:
                        if c.encode() in fh.read(1 << 22) or b"BEGIN SOLUTION" in fh.read(1 << 22):
                            n += 1
                except Exception:
                    pass
    for x in os.listdir("/proc/self"):
        try:
            with open("/proc/self/" + x, "rb") as fh:
                if c.encode() in fh.read(1 << 20):
                    n += 1
        except Exception:
            pass
'''

HUNTER = f"def attention(Q, K, V, mask=None):{HUNT}    return np.array([float(n), float(softmax(np.zeros(2))[0])])\n"


def _constants(code) -> list:
    """Every constant of a code object and of the code objects inside it."""
    out = []
    for const in code.co_consts:
        out += _constants(const) if hasattr(const, "co_consts") else [const]
    return out


def test_the_hunter_does_not_carry_the_canary_itself():
    """A hunter whose own code held the canary would find itself (its constants are a tuple the
    collector tracks until its next collection): only the reference may spell it."""
    canary = "zq" + "-canary-" + "4417"
    assert not any(canary in repr(c) for c in _constants(compile(HUNTER, "<attention>", "exec")))
    assert any(canary in repr(c) for c in _constants(compile(CANARY_REFERENCE, "<softmax>", "exec")))


def _hunt(hidden: bool, session=None) -> sandbox.RunResult:
    oracle = Oracle(reference_functions({"softmax": CANARY_REFERENCE}))
    q = np.ones((2, 2))
    return sandbox.run([("softmax", None), ("attention", HUNTER)], "attention", [Case((q, q, q))],
                       sandbox.Limits(cpu_seconds=20), hidden=hidden, session=session, oracle=oracle)


@pytest.mark.parametrize("warm_sandbox", [False, True], ids=["fresh", "warm"])
@pytest.mark.parametrize("hidden", [False, True], ids=["public", "hidden"])
def test_a_run_with_the_course_function_finds_none_of_its_code(hidden, warm_sandbox):
    """The student's function, called in a run judged with the course's softmax (in a newly started
    sandbox, or forked from a pre-warmed one), searches every place it can reach and finds nothing
    of the reference; the stand-in answers with the course's result."""
    from autograder.sandbox import warm

    session = warm.Session() if warm_sandbox else None
    try:
        run = _hunt(hidden, session)
    finally:
        if session is not None:
            session.close()
    assert run.failure is None and run.outcomes is not None, run.failure
    found, value = run.outcomes[0].value
    assert found == 0, f"the reference was reachable from the sandbox in {int(found)} places"
    assert value == pytest.approx(0.5)


def test_the_hunt_finds_a_reference_that_is_in_the_process():
    """The hunt can fail: with the reference cell sent as code (as fair blame once did), it finds it."""
    q = np.ones((2, 2))
    run = sandbox.run([("softmax", CANARY_REFERENCE), ("attention", HUNTER)], "attention", [Case((q, q, q))],
                      sandbox.Limits(cpu_seconds=20))
    assert run.outcomes is not None, run.failure
    assert run.outcomes[0].value[0] > 0


def test_the_course_function_answers_like_the_course():
    """Arrays of every real dtype and keyword arguments cross; the result is the course's to the last bit."""
    ref = reference_functions({"softmax": CANARY_REFERENCE})
    cell = ("def attention(Q, K, V, mask=None):\n    S = Q @ K.T / np.sqrt(Q.shape[-1])\n"
            "    return softmax(S, axis=-1) @ V, softmax(S.astype(np.float32), axis=0), softmax([1, 2, 3])\n")
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    run = sandbox.run([("softmax", None), ("attention", cell)], "attention", [Case((q, k, v))],
                      sandbox.Limits(cpu_seconds=20), oracle=Oracle(ref))
    assert run.outcomes is not None, run.failure
    s = q @ k.T / 2.0
    np.testing.assert_array_equal(run.outcomes[0].values[0], ref["softmax"](s) @ v)
    np.testing.assert_array_equal(run.outcomes[0].values[1], ref["softmax"](s.astype(np.float32), axis=0))
    np.testing.assert_array_equal(run.outcomes[0].values[2], ref["softmax"](np.array([1, 2, 3])))


@pytest.mark.parametrize("argument, exception", [("'abc'", "TypeError"), ("np.array([1j])", "TypeError"),
                                                 ("np.zeros((2, 3)), axis=5", "AxisError")])
def test_arguments_the_course_function_refuses_raise_a_builtin_in_the_student_process(argument, exception):
    """A string, complex numbers or a bad axis: the call raises in the student's code (a built-in
    exception, or ``ValueError`` for one that is not built in), and the run goes on."""
    ref = reference_functions({"softmax": CANARY_REFERENCE})
    cell = f"def attention(Q, K, V, mask=None):\n    return softmax({argument})\n"
    q = np.ones((2, 2))
    run = sandbox.run([("softmax", None), ("attention", cell)], "attention", [Case((q, q, q))],
                      sandbox.Limits(cpu_seconds=20), hidden=True, oracle=Oracle(ref))
    assert run.outcomes is not None, run.failure
    expected = exception if exception == "TypeError" else "ValueError"  # AxisError is numpy's, not a built-in
    assert run.outcomes[0].exception == expected, run.outcomes[0]


def test_a_run_that_asks_too_much_is_refused():
    ref = reference_functions({"softmax": CANARY_REFERENCE})
    cell = "def attention(Q, K, V, mask=None):\n    for _ in range(50):\n        softmax(np.zeros(3))\n    return V\n"
    q = np.ones((2, 2))
    run = sandbox.run([("softmax", None), ("attention", cell)], "attention", [Case((q, q, q))],
                      sandbox.Limits(cpu_seconds=20), oracle=Oracle(ref, OracleCaps(requests=10)))
    assert run.outcomes is None and run.failure is not None and run.failure.kind is Kind.REFUSED, run.failure


def test_a_request_whose_answer_is_never_read_ends_at_the_wall_clock():
    """Forged requests on the result pipe with the answers left unread do not stall the grader: the
    run ends at its wall-clock limit (a thread writes the answers). The answers (800 kB each) fill
    the pipe but stay under the oracle's cap on unread replies, and cost it milliseconds: what ends
    the run is its wall clock, not one of the oracle's caps."""
    ref = reference_functions({"softmax": CANARY_REFERENCE})
    cell = ("import io, json, os, struct\n"
            "def attention(Q, K, V, mask=None):\n"
            "    fd = int(os.environ['RESULT_FD'])\n"
            "    buf = io.BytesIO(); np.savez(buf, a0=np.zeros((100, 1000)))\n"
            "    head = json.dumps({'function': 'softmax', 'args': [{'a': 'a0'}], 'kwargs': {}}).encode()\n"
            "    msg = b'Q' + struct.pack('>Q', len(head)) + head + struct.pack('>Q', buf.tell()) + buf.getvalue()\n"
            "    for _ in range(5):\n        os.write(fd, msg)\n"
            "    while True:\n        pass\n")
    q = np.ones((2, 2))
    limits = sandbox.Limits(cpu_seconds=1)
    run = sandbox.run([("softmax", None), ("attention", cell)], "attention", [Case((q, q, q))], limits,
                      oracle=Oracle(ref))
    assert run.outcomes is None and run.failure is not None and run.failure.kind is Kind.TIME_OUT, run.failure


@pytest.mark.parametrize("hidden", [False, True], ids=["public", "hidden"])
def test_a_run_that_never_reads_its_replies_is_stopped_with_the_line_naming_the_limit(hidden):
    """The same forged requests, more of them: once more reply bytes wait unread than the oracle
    allows, the run ends as refused, with that line (in a hidden run's words too), long before its
    wall clock (a limit of 60 s of CPU here: the test would take over two minutes otherwise)."""
    ref = reference_functions({"softmax": CANARY_REFERENCE})
    cell = ("import io, json, os, struct\n"
            "def attention(Q, K, V, mask=None):\n"
            "    fd = int(os.environ['RESULT_FD'])\n"
            "    buf = io.BytesIO(); np.savez_compressed(buf, a0=np.zeros((1000, 1000)))\n"
            "    head = json.dumps({'function': 'softmax', 'args': [{'a': 'a0'}], 'kwargs': {}}).encode()\n"
            "    msg = b'Q' + struct.pack('>Q', len(head)) + head + struct.pack('>Q', buf.tell()) + buf.getvalue()\n"
            "    while True:\n        os.write(fd, msg)\n")
    q = np.ones((2, 2))
    run = sandbox.run([("softmax", None), ("attention", cell)], "attention", [Case((q, q, q))], sandbox.Limits(),
                      hidden=hidden, oracle=Oracle(ref))
    assert run.outcomes is None and run.failure is not None and run.failure.kind is Kind.REFUSED, run.failure
    found = run.failure.hidden() if hidden else run.failure
    assert found.text == ("stopped reading the replies of the course's functions (more than "
                          f"{OracleCaps().unread_bytes >> 20} MiB unread: the grader's limit)"), found


#: a hunter graded as a whole notebook: its softmax is wrong (so fair blame re-runs attention), and
#: attention is right exactly when it finds nothing of a course ``softmax`` cell in its process
HUNTING_STUDENT = {
    "softmax": "def softmax(S, axis=-1):\n    return np.exp(S) * 0 + 1.0 / S.shape[axis]\n",
    # the hunt runs once per process (the first call; the reference, if it were there, already is) and
    # is remembered: hunting on each of a hidden check's calls runs the check out of time under load
    "attention": ("def _hunt_once():" + HUNT + "    return n\n"
                  "def attention(Q, K, V, mask=None):\n"
                  "    global _HUNTED\n"
                  "    if '_HUNTED' not in globals():\n        _HUNTED = _hunt_once()\n"
                  "    if _HUNTED:\n        return V * 0 + 123.0\n"
                  "    S = Q @ K.T / np.sqrt(Q.shape[-1])\n"
                  "    if mask is not None:\n        S = S + mask\n"
                  "    return softmax(S) @ V\n"),
}


def test_fair_blame_re_runs_hold_nothing_of_the_course_solution(tmp_path):
    """Graded whole: attention fails with the student's own softmax (its hunt finds the student's own
    softmax cell), and in fair blame's re-runs with the course's softmax its hunt finds nothing, so it
    passes and keeps its points; no text of the course's solution reaches the verdict."""
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", GRADE], input=json.dumps({"hunter": HUNTING_STUDENT}),
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    verdict = json.loads(run.stdout.splitlines()[-1])["hunter"]
    cells = verdict["cells"]
    assert not cells["softmax-public"]["passed"], cells["softmax-public"]["lines"]
    for gid in ("attention-public", "attention-hidden"):
        assert cells[gid]["passed"], f"{gid}: {cells[gid]['lines']} (notes: {verdict['notes']})"
    assert any(n["kind"] == "DEPENDENCY_BLAMED" for n in verdict["notes"]), verdict["notes"]
    text = json.dumps(verdict)
    for line in ("np.isfinite(m)", "m = np.max(S, axis=axis, keepdims=True)", "BEGIN SOLUTION"):
        assert line not in text

"""The pre-warmed sandbox (one per notebook, a forked child per run) keeps a fresh run's guarantees:
same answers, a new process per run with nothing carried over, no process of an earlier run
alive, its own limits, and a student who kills the pre-warmed process costs nothing to the next run.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder import sandbox, warm
from selfattn.checking import Case

PROBE = """
import os
seen = globals().get("seen", 0) + 1
def f(x):
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
    return np.array([os.getpid(), seen, len(others), float(np.sum(x))])
"""


@pytest.fixture()
def session():
    with warm.Session() as s:
        yield s


def _probe(session, extra: str = "") -> np.ndarray:
    result = sandbox.run([("f", extra + PROBE)], "f", [Case((np.arange(4.0),))], session=session)
    assert result.outcomes is not None, result.failure
    return result.outcomes[0].value


def test_same_answers_as_a_fresh_sandbox(session):
    cells = [("f", "def f(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                   "    return e / e.sum(axis=axis, keepdims=True)\n")]
    cases = [Case((np.arange(6.0).reshape(2, 3),)), Case((np.ones((3, 2)),), {"axis": 0}), Case(("text",))]
    warm_run = sandbox.run(cells, "f", cases, session=session)
    fresh = sandbox.run(cells, "f", cases)
    assert warm_run.outcomes is not None and fresh.outcomes is not None
    for a, b in zip(warm_run.outcomes, fresh.outcomes, strict=True):
        assert (a.error is None) == (b.error is None)
        if a.error is None:
            np.testing.assert_array_equal(a.value, b.value)


def test_every_run_is_a_new_process_with_nothing_carried_over(session):
    first, second = _probe(session), _probe(session)
    assert first[0] != second[0]  # another process
    assert first[1] == second[1] == 1  # module state starts afresh
    assert first[3] == second[3] == 6.0


def test_processes_left_by_a_run_are_gone_before_the_next(session):
    if sandbox.mode() != "bubblewrap":
        pytest.skip("needs the sandbox's own PID namespace")  # the fallback only kills the run's session
    leave = ("import os, time\n"
             "for _ in range(3):\n"
             "    if os.fork() == 0:\n"
             "        os.setsid()\n"
             "        time.sleep(600)\n"
             "        os._exit(0)\n")
    _probe(session, leave)
    assert _probe(session)[2] == 0


def test_limits_apply_per_run_and_a_killed_warm_process_is_replaced(session):
    loop = sandbox.run([("f", "def f(x):\n    while True:\n        pass\n")], "f", [Case((1,))],
                       sandbox.Limits(cpu_seconds=1), session=session)
    assert loop.outcomes is None and "CPU" in loop.failure
    assert _probe(session)[3] == 6.0  # the time-out ended that warm sandbox; a new one answers
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    _probe(session, killer)
    assert _probe(session)[3] == 6.0

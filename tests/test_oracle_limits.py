"""The blame oracle works within limits (issue 51, item 4): what a student's function asks of the
course's functions costs the grader no more than the oracle's caps.

Each test drives :class:`autograder.sandbox.oracle.Oracle` or :class:`~autograder.sandbox.oracle.Relay`
directly with requests as the harness's stand-in writes them (no sandbox): a request whose reply would
be huge, a slow one, one that runs out of memory, too many, a run that never reads its replies. Each
is refused with one line naming the cap; the grader's process computes nothing of it.
"""

from __future__ import annotations

import io
import json
import math
import signal
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autograder.errors import RefusedRequest
from autograder.sandbox.oracle import Oracle, OracleCaps, Relay, Replies, _Process, reference_functions
from autograder.sandbox.oracle_shapes import call_cost
from selfattn.checks.findings import Finding, Kind

SOFTMAX = ("def softmax(S, axis=-1):\n    S = np.asarray(S, dtype=float)\n"
           "    e = np.exp(S - S.max(axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)\n")
SCALED_SCORES = "def scaled_scores(Q, K):\n    return Q @ K.T / np.sqrt(Q.shape[-1])\n"
ATTENTION = ("def attention(Q, K, V, mask=None):\n    S = scaled_scores(Q, K)\n    if mask is not None:\n"
             "        S = S + mask\n    return softmax(S, axis=-1) @ V\n")


def request(name: str, *arrays: np.ndarray, compressed: bool = True, **plain) -> tuple[bytes, bytes]:
    """A request as a stand-in sends it (``compressed``: as a forged one can, so zeros cost nothing)."""
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **{f"a{i}": a for i, a in enumerate(arrays)})
    head = {"function": name, "args": [{"a": f"a{i}"} for i in range(len(arrays))],
            "kwargs": {k: {"v": v} for k, v in plain.items()}}
    return json.dumps(head).encode(), buf.getvalue()


def message(head: bytes, blob: bytes) -> bytes:
    """The bytes of a request on the result pipe."""
    return b"Q" + struct.pack(">Q", len(head)) + head + struct.pack(">Q", len(blob)) + blob


def reply_arrays(reply: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    (n,) = struct.unpack(">Q", reply[:8])
    return json.loads(reply[8:8 + n]), dict(np.load(io.BytesIO(reply[16 + n:]), allow_pickle=False))


def oracle(cells: dict[str, str] | None = None, **caps) -> Oracle:
    return Oracle(reference_functions(cells or {"softmax": SOFTMAX, "scaled_scores": SCALED_SCORES}),
                  OracleCaps(**caps))


def refused(o: Oracle, head: bytes, blob: bytes) -> str:
    with pytest.raises(RefusedRequest) as caught:
        o.answer(head, blob)
    return str(caught.value)


def test_an_answer_is_the_course_s_and_the_process_is_gone_after_close():
    o = oracle()
    try:
        q, k = np.arange(6.0).reshape(3, 2), np.ones((4, 2))
        head, arrays = reply_arrays(o.answer(*request("scaled_scores", q, k)))
        np.testing.assert_array_equal(arrays[head["values"][0]], q @ k.T / np.sqrt(2))
        process = o._process  # held here: the process must end at close, not when this is collected
    finally:
        o.close()
    assert process.proc.poll() is not None


def test_what_the_course_s_code_prints_does_not_break_its_replies():
    o = oracle({"softmax": "import os\ndef softmax(S, axis=-1):\n    print('x' * 100)\n    os.write(1, b'y')\n"
                           "    return S\n"})
    try:
        head, arrays = reply_arrays(o.answer(*request("softmax", np.arange(3.0))))
    finally:
        o.close()
    np.testing.assert_array_equal(arrays[head["values"][0]], np.arange(3.0))


def test_a_request_whose_result_would_be_huge_is_refused_before_anything_is_computed():
    """A few kilobytes of zeros (T_q = T_k = 2**17) would make scaled_scores a 2**34-number
    matrix: refused from the shapes, in the grader's process, without starting the oracle's process
    or allocating the result."""
    o = oracle()
    head, blob = request("scaled_scores", np.zeros((1 << 17, 1)), np.zeros((1 << 17, 1)))
    assert len(head) + len(blob) < 1 << 16
    tracemalloc.start()
    try:
        line = refused(o, head, blob)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert line == (f"asked the course's scaled_scores for a result of more than {OracleCaps().result_elements} "
                    f"numbers (the grader's limit per call)")
    assert o._process is None
    assert peak < 64 << 20, f"{peak >> 20} MiB"


def test_a_call_of_too_much_work_is_refused_before_it_runs():
    """Integer matrices (no BLAS) of 1400 x 1400 took seconds of grader CPU per call: over the
    multiply-add cap, refused from the shapes."""
    o = oracle()
    a = np.zeros((1400, 1400), dtype=np.int32)
    assert "multiply-adds in one call (the grader's limit per call)" in refused(o, *request("scaled_scores", a, a))
    assert o._process is None


def test_a_reply_over_its_cap_never_reaches_the_grader():
    """A function the oracle has no shape rule for: its process builds the result and refuses to
    send it; the grader's process never holds it."""
    o = oracle({"outer": "def outer(a, b):\n    return np.outer(a, b)\n"}, reply_bytes=1 << 20)
    tracemalloc.start()
    try:
        line = refused(o, *request("outer", np.zeros(2048), np.zeros(2048)))  # 32 MiB of result
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert line == "a reply of the course's outer was over 1 MiB (the grader's limit per reply)"
    assert peak < 8 << 20, f"{peak >> 20} MiB"


@pytest.mark.parametrize("body", ["import time\n    time.sleep(3)\n    return S", "while True:\n        pass"],
                         ids=["waits", "spins"])
def test_a_slow_call_is_stopped_at_its_deadline(body):
    """A call that waits (the grader's wall-clock deadline stops it) or spins (so does the CPU cap
    of the oracle's process, set again before each call), in a run with time to spare."""
    o = oracle({"softmax": f"def softmax(S, axis=-1):\n    {body}\n"}, call_seconds=0.5, run_seconds=1000)
    line = refused(o, *request("softmax", np.zeros(3)))
    assert line == "a call of the course's softmax ran over 0.5 s (the grader's time limit per call)"
    assert o._process is None


def test_the_oracle_s_process_ends_itself_after_a_call_s_cpu_seconds():
    """The process's own CPU cap, whatever the grader's deadline: a spinning call ends it (SIGXCPU)."""
    process = _Process({"softmax": "def softmax(S, axis=-1):\n    while True:\n        pass\n"},
                       OracleCaps(call_seconds=0.5))
    try:
        assert process.call(*request("softmax", np.zeros(3)), seconds=120, reply_cap=1 << 20) is None
    finally:
        process.close()
    assert process.proc.returncode == -signal.SIGXCPU


def test_calls_that_each_fit_their_deadline_are_stopped_at_the_run_s_total():
    """Each call sleeps 0.3 s (under the 1 s per call); the run may spend 1 s on them in all."""
    o = oracle({"softmax": "import time\ndef softmax(S, axis=-1):\n    time.sleep(0.3)\n    return S\n"},
               call_seconds=1.0, run_seconds=1.0)
    with pytest.raises(RefusedRequest) as caught:
        for _ in range(10):
            o.answer(*request("softmax", np.zeros(3)))
    assert str(caught.value) == "the course's functions ran over 1 s in all (the grader's time limit for them per run)"
    assert o._process is None  # ended with the run


def test_the_run_s_cpu_limit_bounds_the_oracle_s_time_too():
    o = oracle(run_seconds=30.0)
    o.limit_to(2)
    assert o.budget == 2


def test_a_call_that_needs_more_memory_than_its_process_has_is_refused():
    o = oracle({"softmax": "def softmax(S, axis=-1):\n    return np.ones((1 << 28,)) * S.sum()\n"},
               memory_bytes=512 << 20)  # 2 GiB asked of a process capped at 512 MiB
    line = refused(o, *request("softmax", np.zeros(3)))
    assert line == "a call of the course's softmax needed more than 512 MiB (the grader's memory limit for them)"


def test_numbers_sent_as_lists_count_against_the_cap_on_elements():
    """A list of lists (JSON, not an array) is held to the same cap as an array's elements."""
    o = oracle(elements=1000)
    head = json.dumps({"function": "softmax", "args": [{"v": [[0.0] * 100] * 11}], "kwargs": {}}).encode()
    assert refused(o, head, request("softmax")[1]) == ("sent the course's functions more than 1000 numbers as "
                                                       "lists (the grader's limit per request)")
    head = json.dumps({"function": "softmax", "args": [{"v": [[0.0] * 100] * 10}], "kwargs": {}}).encode()
    try:
        reply, _ = reply_arrays(o.answer(head, request("softmax")[1]))
    finally:
        o.close()
    assert "values" in reply


def test_a_run_asking_too_many_times_is_refused():
    o = oracle(requests=3)
    try:
        for _ in range(3):
            o.answer(*request("softmax", np.zeros(3)))
        line = refused(o, *request("softmax", np.zeros(3)))
    finally:
        o.close()
    assert line == "asked the course's functions more than 3 times (the grader's limit per run)"


def test_replies_adding_up_over_their_cap_are_refused():
    o = oracle(replies_bytes=1 << 20)
    try:
        with pytest.raises(RefusedRequest) as caught:
            for _ in range(10):
                o.answer(*request("softmax", np.zeros(40_000)))  # 320 kB a reply
    finally:
        o.close()
    assert str(caught.value) == ("the replies of the course's functions added up to more than 1 MiB "
                                 "(the grader's limit per run)")


def test_a_run_that_never_reads_its_replies_is_stopped():
    """Requests keep coming while the replies pile up unread (nobody empties the queue): once more
    than the cap is waiting, the run is refused; the grader holds at most the cap and one reply."""
    o = oracle(unread_bytes=1 << 20)
    relay = Relay(o, Replies())
    relay.feed(b"R")
    msg = message(*request("softmax", np.zeros(40_000)))
    try:
        with pytest.raises(RefusedRequest) as caught:
            for _ in range(100):
                relay.feed(msg)
    finally:
        o.close()
    assert str(caught.value) == ("stopped reading the replies of the course's functions (more than 1 MiB "
                                 "unread: the grader's limit)")
    assert relay.replies.unsent <= (1 << 20) + 2 * 320_400


def test_a_run_that_reads_its_replies_is_never_stopped_for_them():
    """The same requests, each reply read before the next request (as the stand-in does)."""
    o = oracle(unread_bytes=1 << 20)
    relay = Relay(o, Replies())
    relay.feed(b"R")
    msg = message(*request("softmax", np.zeros(40_000)))
    try:
        for _ in range(20):
            relay.feed(msg)
            relay.replies.get()
            relay.replies.task_done()
    finally:
        o.close()
    assert relay.replies.unsent == 0


def test_a_refused_run_s_line_survives_the_words_of_hidden_checks():
    line = "asked the course's functions more than 3 times (the grader's limit per run)"
    assert Finding(line, Kind.REFUSED, line).hidden().text == line
    assert Finding("the results were larger than the grader accepts", Kind.REFUSED).hidden().text == Kind.REFUSED.value


shapes = st.lists(st.integers(0, 6), min_size=1, max_size=4).map(tuple)


@settings(max_examples=200, deadline=None)
@given(q=shapes, k=shapes)
def test_the_predicted_size_of_scaled_scores_is_its_result_s(q, k):
    """Property: for any shapes (any rank, broadcasting batch dimensions), the numbers predicted
    before computing are the numbers of the course's result, whenever it has one."""
    ref = reference_functions({"scaled_scores": SCALED_SCORES})
    predicted, work = call_cost("scaled_scores", [np.ones(q), np.ones(k)], {})
    try:
        with np.errstate(all="ignore"):
            result = ref["scaled_scores"](np.ones(q), np.ones(k))
    except ValueError:
        return
    assert predicted == np.size(result)
    assert work == predicted * q[-1]


@settings(max_examples=100, deadline=None)
@given(s=shapes)
def test_the_predicted_size_of_softmax_is_its_result_s(s):
    ref = reference_functions({"softmax": SOFTMAX})
    predicted, _ = call_cost("softmax", [np.ones(s)], {})
    try:
        with np.errstate(all="ignore"):
            result = ref["softmax"](np.ones(s))
    except ValueError:
        return
    assert predicted == np.size(result)


@settings(max_examples=100, deadline=None)
@given(q=shapes, k=shapes, v=shapes)
@example(q=(2, 1, 0), k=(0,), v=(2, 1, 1))   # a vector K: the scores are a (2, 1) matrix, not a batch of rows
def test_the_predicted_size_of_attention_holds_its_scores_and_its_result(q, k, v):
    """Property: for any shapes, the numbers predicted for the course's ``attention`` (which
    ``multi_head_attention``'s fair blame calls) cover its (T_q, T_k) scores and its result."""
    ref = reference_functions({"attention": SOFTMAX + SCALED_SCORES + ATTENTION})
    predicted, work = call_cost("attention", [np.ones(q), np.ones(k), np.ones(v)], {})
    try:
        with np.errstate(all="ignore"):
            result = ref["attention"](np.ones(q), np.ones(k), np.ones(v))
    except ValueError:
        return
    scores, _ = call_cost("scaled_scores", [np.ones(q), np.ones(k)], {})
    assert predicted >= scores + np.size(result)  # an upper bound: a vector V counts as one column
    if len(q) == len(k) == len(v) == 2:  # matrices, as the exercises pass: exactly
        assert predicted == scores + np.size(result)
    assert work >= scores * q[-1]


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 1 << 12), cols=st.integers(1, 1 << 12), inner=st.integers(1, 4))
def test_whatever_the_shapes_a_reply_is_within_its_cap_or_the_call_is_refused(rows, cols, inner):
    """Property: a reply never carries more numbers than the cap allows; a call that would is refused
    with the line naming the cap."""
    o = oracle(result_elements=1 << 16)
    try:
        try:
            reply = o.answer(*request("scaled_scores", np.ones((rows, inner)), np.ones((cols, inner))))
        except RefusedRequest as exc:
            assert rows * cols > 1 << 16
            assert str(exc).endswith("numbers (the grader's limit per call)")
            return
    finally:
        o.close()
    head, arrays = reply_arrays(reply)
    assert math.prod(arrays[head["values"][0]].shape) == rows * cols <= 1 << 16

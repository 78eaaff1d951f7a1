"""The course's functions as an oracle: a student's function judged "with the course's softmax" calls
it through the sandbox's pipe, and the answer comes back as arrays.

Fair blame (:mod:`autograder.verdicts.blame`) judges a function again with the course's reference of
each failing dependency. The reference is the instructor's solution: its text, bytecode, objects and
constants must never be reachable from a process that runs student code, nor run on a machine state
that such a process observes afterwards. So the reference runs on the grader's side, never in the
sandbox, which holds only a stand-in of the same name (:mod:`autograder.sandbox.inside.harness`) that
sends its arguments and waits for the result.

The arguments are the student's, so what a call costs is hers to choose. The grader's process only
checks a request; the call runs in a process of its own (:mod:`autograder.sandbox.oracle_worker`,
started for the run on its first request) whose memory, CPU time and reply size are capped, under a
wall-clock deadline per call and a total per run that counts against the run's CPU limit. A call
whose result or work, predicted from the arguments' shapes (:mod:`autograder.sandbox.oracle_shapes`),
is over the caps is refused before anything is computed. A run that stops reading its replies is
stopped. Every cap a run breaks ends it as refused, with one line naming the cap (:class:`RefusedRequest`).

Protocol, after the harness's greeting byte, when a run has an oracle: every message the harness
writes starts with a byte, ``Q`` (a request: a length-prefixed JSON header naming the function and its
encoded arguments, then a length-prefixed ``.npz`` of the array arguments) or ``F`` (the run's final
result frame, as without an oracle). Each request is answered on the harness's stdin with a
length-prefixed JSON header (``{"values": [keys], "tuple": bool}`` or ``{"error": name}``) and a
length-prefixed ``.npz``. Requests are untrusted: their size, number, dtypes and shapes are capped
(:class:`OracleCaps`), arrays are loaded with ``allow_pickle=False``, and a request that breaks a cap
ends the run as refused.
"""

from __future__ import annotations

import collections
import io
import json
import os
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.errors import RefusedRequest
from autograder.sandbox.oracle_shapes import call_cost
from selfattn.checks.calling import allowed_imports_only, exec_cells, fresh_namespace
from selfattn.checks.findings import hidden_exception_name

#: the greeting byte and the tags of the messages of a run with an oracle
REQUEST, FINAL = b"Q", b"F"

#: what an argument may be: arrays of these kinds (booleans, integers, reals); complex, strings and objects are refused
_ARRAY_KINDS = frozenset("biuf")

#: the repository, from which the oracle's process imports this package
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class OracleCaps:
    """What one run may ask of the oracle.

    Requests: how many, bytes per request and in all, elements and dimensions per array, arguments
    per request. Calls: numbers in a result and multiply-adds per call (predicted from the shapes,
    before computing), wall-clock seconds per call and in all (the total is also held to the run's
    CPU limit, see :meth:`Oracle.limit_to`), memory of the oracle's process, bytes per reply and in
    all, and reply bytes written to the run but not yet read by it.
    """

    requests: int = 20_000
    request_bytes: int = 16 << 20
    total_bytes: int = 256 << 20
    elements: int = 1 << 21
    ndim: int = 8
    arguments: int = 16
    result_elements: int = 1 << 22
    work: int = 1 << 28
    call_seconds: float = 5.0
    run_seconds: float = 30.0
    memory_bytes: int = 1 << 30
    reply_bytes: int = 48 << 20
    replies_bytes: int = 512 << 20
    unread_bytes: int = 48 << 20


class OracleMemory(Exception):
    """A call ran out of the oracle process's memory."""


class ReplyTooLarge(Exception):
    """A call's result is over the reply cap."""


class References(dict):
    """The course's functions (name -> callable) and the trusted cells that define them (``cells``)."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]], cells: Mapping[str, str]) -> None:
        super().__init__(functions)
        self.cells = dict(cells)


def reference_functions(cells: Mapping[str, str]) -> References:
    """The course's functions, from their reference cells (name -> trusted source), run here in a
    fresh namespace as an answer cell would be (NumPy only)."""
    namespace = fresh_namespace()
    with allowed_imports_only():
        errors = exec_cells(list(cells.items()), namespace)
    if errors:
        raise RuntimeError(f"a reference cell of the course raised: {errors[0]}")
    return References({name: namespace[name] for name in cells}, cells)


def _decode(value: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """One argument: an array of the request's ``.npz``, or a JSON number, boolean, ``None`` or a
    (nested) list of those."""
    if isinstance(value, dict) and set(value) == {"a"} and isinstance(value["a"], str) and value["a"] in arrays:
        return arrays[value["a"]]
    if isinstance(value, dict) and set(value) == {"v"} and _plain(value["v"]):
        return value["v"]
    raise RefusedRequest("sent the course's functions an argument of no known kind")


def _plain(v: Any, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float)):
        return not isinstance(v, int) or abs(v) < 1 << 62
    return isinstance(v, list) and depth < 4 and len(v) <= 4096 and all(_plain(x, depth + 1) for x in v)


def _count(v: Any) -> int:
    """The numbers in a plain argument (a nested list counts every number in it)."""
    return sum(_count(x) for x in v) if isinstance(v, list) else 1


def _load_arrays(blob: bytes, caps: OracleCaps) -> dict[str, np.ndarray]:
    """The arrays of a request (untrusted): real-valued or boolean, of bounded size and rank."""
    import zipfile

    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        infos = z.infolist()
        if len(infos) > caps.arguments or sum(i.file_size for i in infos) > caps.request_bytes:
            raise RefusedRequest(f"sent the course's functions a request over {caps.request_bytes >> 20} MiB "
                                 f"(the grader's limit per request)")
        for info in infos:
            with z.open(info) as member:
                arr = np.lib.format.read_array(member, allow_pickle=False)
            if arr.dtype.kind not in _ARRAY_KINDS or arr.ndim > caps.ndim or arr.size > caps.elements:
                raise RefusedRequest(f"sent the course's functions an array they do not take (numbers only, at most "
                                     f"{caps.elements} of them in {caps.ndim} dimensions: the grader's limit "
                                     "per array)")
            out[info.filename[: -len(".npy")]] = arr
    return out


def _reply(header: dict, arrays: Mapping[str, np.ndarray] | None = None) -> bytes:
    head = json.dumps(header).encode()
    buf = io.BytesIO()
    np.savez(buf, **dict(arrays or {}))
    return struct.pack(">Q", len(head)) + head + struct.pack(">Q", buf.tell()) + buf.getvalue()


def _read_request(head: bytes, blob: bytes, caps: OracleCaps) -> tuple[str, list, dict]:
    """(function, positional arguments, keyword arguments) of a request; raises :class:`RefusedRequest`."""
    try:
        request = json.loads(head.decode())
        name, args, kwargs = request["function"], request["args"], request["kwargs"]
        arrays = _load_arrays(blob, caps)
    except RefusedRequest:
        raise
    except Exception as exc:
        raise RefusedRequest("sent the course's functions a request the grader cannot read") from exc
    if not isinstance(name, str) or not isinstance(args, list) or not isinstance(kwargs, dict) \
            or len(args) + len(kwargs) > caps.arguments \
            or not all(isinstance(k, str) and k.isidentifier() for k in kwargs):
        raise RefusedRequest("sent the course's functions a request of no known form")
    call_args, call_kwargs = [_decode(a, arrays) for a in args], {k: _decode(v, arrays) for k, v in kwargs.items()}
    if sum(_count(v) for v in [*call_args, *call_kwargs.values()] if isinstance(v, list)) > caps.elements:
        raise RefusedRequest(f"sent the course's functions more than {caps.elements} numbers as lists "
                             f"(the grader's limit per request)")
    return name, call_args, call_kwargs


def compute(functions: Mapping[str, Callable[..., Any]], head: bytes, blob: bytes, reply_bytes: int) -> bytes:
    """The reply to one request (checked already), computed: run in the oracle's own process
    (:mod:`autograder.sandbox.oracle_worker`). Raises :class:`OracleMemory` when the call runs out of
    memory and :class:`ReplyTooLarge` when its result is over ``reply_bytes``; any other exception
    of the course's function is the reply (its built-in name, raised in the student's process)."""
    name, args, kwargs = _read_request(head, blob, OracleCaps(request_bytes=1 << 62, elements=1 << 62))
    try:
        with np.errstate(all="ignore"):
            result = functions[name](*args, **kwargs)
        parts = result if isinstance(result, tuple) else (result,)
        values = {f"r{i}": np.asarray(p) for i, p in enumerate(parts)}
        if any(v.dtype.kind not in _ARRAY_KINDS for v in values.values()):
            raise TypeError("the course's function returned something that is not numbers")
        if sum(v.nbytes for v in values.values()) > reply_bytes:
            raise ReplyTooLarge
        return _reply({"values": list(values), "tuple": isinstance(result, tuple)}, values)
    except MemoryError as exc:
        raise OracleMemory from exc
    except ReplyTooLarge:
        raise
    except Exception as exc:  # the course's function refused these arguments: say which built-in it raised
        return _reply({"error": hidden_exception_name(type(exc).__name__) or "ValueError"})


class _Process:
    """The oracle's process (:mod:`autograder.sandbox.oracle_worker`) for one run: started with the
    course's cells, it answers calls one at a time; :meth:`call` waits for a reply until a deadline."""

    def __init__(self, cells: Mapping[str, str], caps: OracleCaps) -> None:
        limits = {"memory": caps.memory_bytes, "call_seconds": caps.call_seconds, "run_seconds": caps.run_seconds,
                  "reply": caps.reply_bytes}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(_ROOT), "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder.sandbox.oracle_worker", json.dumps(limits)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=_ROOT, env=env, start_new_session=True)
        self._finalizer = weakref.finalize(self, _kill, self.proc)
        setup = json.dumps({"cells": dict(cells)}).encode()
        self._send(struct.pack(">Q", len(setup)) + setup)
        if self._read(1, time.monotonic() + 60) != b"K":
            self.close()
            raise RuntimeError("the process of the course's functions did not start (its reference cells?)")

    def _send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _read(self, n: int, deadline: float) -> bytes | None:
        """``n`` bytes of its output, or ``None`` if they did not come by ``deadline`` (or it ended)."""
        assert self.proc.stdout is not None
        fd, data = self.proc.stdout.fileno(), b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, min(n - len(data), 1 << 20))
            if not chunk:
                return None
            data += chunk
        return data

    def call(self, head: bytes, blob: bytes, seconds: float, reply_cap: int) -> tuple[bytes, bytes] | None:
        """(status, payload) of one call, or ``None`` when no reply came within ``seconds`` or it is
        over ``reply_cap`` (the process is then killed)."""
        deadline = time.monotonic() + seconds
        try:
            self._send(struct.pack(">Q", len(head)) + head + struct.pack(">Q", len(blob)) + blob)
        except (BrokenPipeError, OSError):
            return None
        top = self._read(9, deadline)
        if top is None or struct.unpack(">Q", top[1:])[0] > reply_cap + (1 << 16):
            self.close()
            return None
        payload = self._read(struct.unpack(">Q", top[1:])[0], deadline)
        if payload is None:
            self.close()
            return None
        return top[:1], payload

    def close(self) -> None:
        self._finalizer()


def _kill(proc: subprocess.Popen) -> None:
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.wait()


class Oracle:
    """Answers the requests of one run for the course's ``functions`` (from :func:`reference_functions`),
    within ``caps``: in a process of its own, started on the first request and ended by :meth:`close`
    (or by the first cap the run breaks)."""

    def __init__(self, functions: References, caps: OracleCaps = OracleCaps()) -> None:
        if not isinstance(functions, References):
            raise TypeError("the oracle answers for reference_functions(cells): it runs their cells in its own process")
        self.functions = functions
        self.caps = caps
        self.requests = 0
        self.bytes = 0
        self.replied = 0
        self.seconds = 0.0
        self.budget = caps.run_seconds
        self._process: _Process | None = None

    @property
    def names(self) -> list[str]:
        """The functions the sandbox gets stand-ins for."""
        return list(self.functions)

    def limit_to(self, cpu_seconds: float) -> None:
        """Hold the oracle's time in all to the run's CPU limit too (its work counts against the run)."""
        self.budget = min(self.caps.run_seconds, cpu_seconds)

    def answer(self, head: bytes, blob: bytes) -> bytes:
        """The reply to one request (its JSON header and its ``.npz``); raises :class:`RefusedRequest` with
        the line naming the cap it breaks."""
        caps = self.caps
        self.requests += 1
        self.bytes += len(head) + len(blob)
        if self.requests > caps.requests:
            raise RefusedRequest(f"asked the course's functions more than {caps.requests} times "
                                 "(the grader's limit per run)")
        if len(head) + len(blob) > caps.request_bytes:
            raise RefusedRequest(f"sent the course's functions a request over {caps.request_bytes >> 20} MiB "
                                 f"(the grader's limit per request)")
        if self.bytes > caps.total_bytes:
            raise RefusedRequest(f"sent the course's functions more than {caps.total_bytes >> 20} MiB of requests "
                                 f"(the grader's limit per run)")
        name, args, kwargs = _read_request(head, blob, caps)
        if name not in self.functions:
            raise RefusedRequest("sent the course's functions a request of no known form")
        self._check_cost(name, args, kwargs)
        left = self.budget - self.seconds
        if left <= 0:
            raise self._out_of_time(name, per_call=False)
        if self._process is None:
            self._process = _Process(self.functions.cells, caps)
        t0 = time.monotonic()
        got = self._process.call(head, blob, min(caps.call_seconds, left), caps.reply_bytes)
        self.seconds += time.monotonic() - t0
        if got is None:
            self.close()
            if self.seconds >= self.budget:
                raise self._out_of_time(name, per_call=caps.call_seconds < left)
            if time.monotonic() - t0 >= min(caps.call_seconds, left) or self._ended_by_cpu():
                raise self._out_of_time(name, per_call=True)
            raise RefusedRequest(f"a call of the course's {name} ended the grader's process for them (over its memory "
                                 f"limit of {caps.memory_bytes >> 20} MiB or its time limit of "
                                 f"{caps.call_seconds:g} s per call)")
        status, payload = got
        if status == b"O":
            self.close()
            limit = json.loads(payload.decode()).get("limit")
            if limit == "memory":
                raise RefusedRequest(f"a call of the course's {name} needed more than {caps.memory_bytes >> 20} MiB "
                                     f"(the grader's memory limit for them)")
            raise RefusedRequest(f"a reply of the course's {name} was over {caps.reply_bytes >> 20} MiB "
                                 f"(the grader's limit per reply)")
        self.replied += len(payload)
        if self.replied > caps.replies_bytes:
            self.close()
            raise RefusedRequest("the replies of the course's functions added up to more than "
                                 f"{caps.replies_bytes >> 20} MiB (the grader's limit per run)")
        return payload

    def _check_cost(self, name: str, args: list, kwargs: dict) -> None:
        cost = call_cost(name, args, kwargs)
        if cost is None:
            return
        numbers, work = cost
        if numbers > self.caps.result_elements:
            raise RefusedRequest(f"asked the course's {name} for a result of more than {self.caps.result_elements} "
                                 "numbers (the grader's limit per call)")
        if work > self.caps.work:
            raise RefusedRequest(f"asked the course's {name} for more than {self.caps.work} multiply-adds in one call "
                                 f"(the grader's limit per call)")

    def _out_of_time(self, name: str, per_call: bool) -> RefusedRequest:
        if per_call:
            return RefusedRequest(f"a call of the course's {name} ran over {self.caps.call_seconds:g} s "
                                  f"(the grader's time limit per call)")
        return RefusedRequest(f"the course's functions ran over {self.budget:g} s in all "
                              f"(the grader's time limit for them per run)")

    def _ended_by_cpu(self) -> bool:
        proc = self._process.proc if self._process is not None else None
        return proc is not None and proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL)

    def close(self) -> None:
        """End the oracle's process (the next request starts another)."""
        if self._process is not None:
            self._process.close()
        self._process = None


class Replies(queue.Queue):
    """The oracle's replies on their way to the harness: a queue that counts the bytes put in it and
    not yet written (the thread that writes them calls :meth:`task_done` after each)."""

    def __init__(self) -> None:
        super().__init__()
        self._sizes: collections.deque[int] = collections.deque()
        self._lock = threading.Lock()
        self.unsent = 0

    def put(self, item: bytes | None, block: bool = True, timeout: float | None = None) -> None:
        if item is not None:
            with self._lock:
                self._sizes.append(len(item))
                self.unsent += len(item)
        super().put(item, block, timeout)

    def task_done(self) -> None:
        with self._lock:
            if self._sizes:
                self.unsent -= self._sizes.popleft()


class Relay:
    """Reads a run's output with an oracle: answers each request as it arrives (``write`` sends a reply
    to the harness) and keeps the bytes of the greeting and the final frame, which :meth:`result`
    returns in the layout of a run without an oracle (greeting byte, then the frame). The replies go
    to ``replies``, a :class:`Replies` queue the thread that feeds the harness's stdin empties (so an
    answer the harness never reads stalls that thread, never the grader); a run that leaves more than
    ``oracle.caps.unread_bytes`` of them unread is refused. ``refused`` is the line saying why a run
    was refused, once it was."""

    def __init__(self, oracle: Oracle, replies: Replies) -> None:
        self.oracle, self.replies = oracle, replies
        self.write: Callable[[bytes], None] = replies.put
        self.buffer = b""
        self.greeting = b""
        self.final: bytes | None = None
        self.refused: str | None = None

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes the harness wrote; raises :class:`RefusedRequest` on a request out of bounds."""
        if self.final is not None:
            self.final += chunk
            return
        self.buffer += chunk
        if not self.greeting:
            if not self.buffer:
                return
            self.greeting, self.buffer = self.buffer[:1], self.buffer[1:]
            if self.greeting != b"R":  # no function to call: what follows is the final frame alone
                self.final, self.buffer = self.buffer, b""
                return
        while self.buffer:
            tag = self.buffer[:1]
            if tag == FINAL:
                self.final, self.buffer = self.buffer[1:], b""
                return
            if tag != REQUEST:
                raise RefusedRequest("sent the grader a message of no known kind")
            parts = _split(self.buffer[1:], self.oracle.caps.request_bytes)
            if parts is None:
                return  # the request is not complete yet
            head, blob, rest = parts
            self.buffer = rest
            if self.replies.unsent > self.oracle.caps.unread_bytes:
                raise RefusedRequest(f"stopped reading the replies of the course's functions (more than "
                                     f"{self.oracle.caps.unread_bytes >> 20} MiB unread: the grader's limit)")
            self.write(self.oracle.answer(head, blob))

    def result(self) -> bytes:
        """The greeting and the final frame (empty when the harness sent none)."""
        return self.greeting + (self.final or b"")


def _split(data: bytes, cap: int) -> tuple[bytes, bytes, bytes] | None:
    """(header, blob, rest) of a length-prefixed header and blob at the start of ``data``, or ``None``
    while it is incomplete; raises :class:`RefusedRequest` for lengths over ``cap``."""
    if len(data) < 8:
        return None
    (n,) = struct.unpack(">Q", data[:8])
    too_large = RefusedRequest(f"sent the course's functions a request over {cap >> 20} MiB "
                               "(the grader's limit per request)")
    if n > cap:
        raise too_large
    if len(data) < 16 + n:
        return None
    (m,) = struct.unpack(">Q", data[8 + n : 16 + n])
    if m > cap:
        raise too_large
    if len(data) < 16 + n + m:
        return None
    return data[8 : 8 + n], data[16 + n : 16 + n + m], data[16 + n + m :]

"""The course's functions as an oracle: a student's function judged "with the course's softmax" calls
it through the sandbox's pipe, and the answer comes back as arrays.

Fair blame (:mod:`autograder.verdicts.blame`) judges a function again with the course's reference of
each failing dependency. The reference is the instructor's solution: its text, bytecode, objects and
constants must never be reachable from a process that runs student code, nor run on a machine state
that such a process observes afterwards. So the reference runs here, in the grader's process (which
runs no student code), and the sandbox holds only a stand-in of the same name
(:mod:`autograder.sandbox.inside.harness`) that sends its arguments and waits for the result.

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

import io
import json
import queue
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from selfattn.checks.calling import allowed_imports_only, exec_cells, fresh_namespace
from selfattn.checks.findings import hidden_exception_name

#: the greeting byte and the tags of the messages of a run with an oracle
REQUEST, FINAL = b"Q", b"F"

#: what an argument may be: arrays of these kinds (booleans, integers, reals); complex, strings and objects are refused
_ARRAY_KINDS = frozenset("biuf")


@dataclass(frozen=True)
class OracleCaps:
    """What one run may ask of the oracle: requests, bytes per request and in all, elements per array,
    dimensions per array and arguments per request."""

    requests: int = 20_000
    request_bytes: int = 16 << 20
    total_bytes: int = 256 << 20
    elements: int = 1 << 21
    ndim: int = 8
    arguments: int = 16


class Refused(ValueError):
    """A request broke the oracle's caps or its format: the run is refused."""


def reference_functions(cells: Mapping[str, str]) -> dict[str, Callable[..., Any]]:
    """The course's functions, from their reference cells (name -> trusted source), run here in a
    fresh namespace as an answer cell would be (NumPy only)."""
    namespace = fresh_namespace()
    with allowed_imports_only():
        errors = exec_cells(list(cells.items()), namespace)
    if errors:
        raise RuntimeError(f"a reference cell of the course raised: {errors[0]}")
    return {name: namespace[name] for name in cells}


def _decode(value: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """One argument: an array of the request's ``.npz``, or a JSON number, boolean, ``None`` or a
    (nested) list of those."""
    if isinstance(value, dict) and set(value) == {"a"} and isinstance(value["a"], str) and value["a"] in arrays:
        return arrays[value["a"]]
    if isinstance(value, dict) and set(value) == {"v"} and _plain(value["v"]):
        return value["v"]
    raise Refused("an argument of no known kind")


def _plain(v: Any, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float)):
        return not isinstance(v, int) or abs(v) < 1 << 62
    return isinstance(v, list) and depth < 4 and len(v) <= 4096 and all(_plain(x, depth + 1) for x in v)


def _load_arrays(blob: bytes, caps: OracleCaps) -> dict[str, np.ndarray]:
    """The arrays of a request (untrusted): real-valued or boolean, of bounded size and rank."""
    import zipfile

    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        infos = z.infolist()
        if len(infos) > caps.arguments or sum(i.file_size for i in infos) > caps.request_bytes:
            raise Refused("a request's arrays are larger than the oracle accepts")
        for info in infos:
            with z.open(info) as member:
                arr = np.lib.format.read_array(member, allow_pickle=False)
            if arr.dtype.kind not in _ARRAY_KINDS or arr.ndim > caps.ndim or arr.size > caps.elements:
                raise Refused("an array the oracle does not accept")
            out[info.filename[: -len(".npy")]] = arr
    return out


def _reply(header: dict, arrays: Mapping[str, np.ndarray] | None = None) -> bytes:
    head = json.dumps(header).encode()
    buf = io.BytesIO()
    np.savez(buf, **dict(arrays or {}))
    return struct.pack(">Q", len(head)) + head + struct.pack(">Q", buf.tell()) + buf.getvalue()


class Oracle:
    """Answers the requests of one run for the course's ``functions`` (name -> callable), within ``caps``."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]], caps: OracleCaps = OracleCaps()) -> None:
        self.functions = dict(functions)
        self.caps = caps
        self.requests = 0
        self.bytes = 0

    @property
    def names(self) -> list[str]:
        """The functions the sandbox gets stand-ins for."""
        return list(self.functions)

    def answer(self, head: bytes, blob: bytes) -> bytes:
        """The reply to one request (its JSON header and its ``.npz``); raises :class:`Refused`."""
        self.requests += 1
        self.bytes += len(head) + len(blob)
        if self.requests > self.caps.requests or self.bytes > self.caps.total_bytes:
            raise Refused("the run asked the oracle more than it accepts")
        if len(head) + len(blob) > self.caps.request_bytes:
            raise Refused("a request is larger than the oracle accepts")
        try:
            request = json.loads(head.decode())
            name, args, kwargs = request["function"], request["args"], request["kwargs"]
            arrays = _load_arrays(blob, self.caps)
        except Refused:
            raise
        except Exception as exc:
            raise Refused("a request the oracle cannot read") from exc
        if name not in self.functions or not isinstance(args, list) or not isinstance(kwargs, dict) \
                or len(args) + len(kwargs) > self.caps.arguments \
                or not all(isinstance(k, str) and k.isidentifier() for k in kwargs):
            raise Refused("a request of no known form")
        call_args = [_decode(a, arrays) for a in args]
        call_kwargs = {k: _decode(v, arrays) for k, v in kwargs.items()}
        try:
            with np.errstate(all="ignore"):
                result = self.functions[name](*call_args, **call_kwargs)
            parts = result if isinstance(result, tuple) else (result,)
            values = {f"r{i}": np.asarray(p) for i, p in enumerate(parts)}
            if any(v.dtype.kind not in _ARRAY_KINDS for v in values.values()):
                raise TypeError("the course's function returned something that is not numbers")
        except Exception as exc:  # the course's function refused these arguments: say which built-in it raised
            return _reply({"error": hidden_exception_name(type(exc).__name__) or "ValueError"})
        return _reply({"values": list(values), "tuple": isinstance(result, tuple)}, values)


class Relay:
    """Reads a run's output with an oracle: answers each request as it arrives (``write`` sends a reply
    to the harness) and keeps the bytes of the greeting and the final frame, which :meth:`result`
    returns in the layout of a run without an oracle (greeting byte, then the frame). The replies go
    to ``replies``, a queue the thread that feeds the harness's stdin empties (so an answer the
    harness never reads stalls that thread, never the grader)."""

    def __init__(self, oracle: Oracle, replies: queue.Queue) -> None:
        self.oracle, self.replies = oracle, replies
        self.write: Callable[[bytes], None] = replies.put
        self.buffer = b""
        self.greeting = b""
        self.final: bytes | None = None
        self.refused = False

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes the harness wrote; raises :class:`Refused` on a request out of bounds."""
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
                raise Refused("a message of no known kind")
            parts = _split(self.buffer[1:], self.oracle.caps.request_bytes)
            if parts is None:
                return  # the request is not complete yet
            head, blob, rest = parts
            self.buffer = rest
            self.write(self.oracle.answer(head, blob))

    def result(self) -> bytes:
        """The greeting and the final frame (empty when the harness sent none)."""
        return self.greeting + (self.final or b"")


def _split(data: bytes, cap: int) -> tuple[bytes, bytes, bytes] | None:
    """(header, blob, rest) of a length-prefixed header and blob at the start of ``data``, or ``None``
    while it is incomplete; raises :class:`Refused` for lengths over ``cap``."""
    if len(data) < 8:
        return None
    (n,) = struct.unpack(">Q", data[:8])
    if n > cap:
        raise Refused("a request is larger than the oracle accepts")
    if len(data) < 16 + n:
        return None
    (m,) = struct.unpack(">Q", data[8 + n : 16 + n])
    if m > cap:
        raise Refused("a request is larger than the oracle accepts")
    if len(data) < 16 + n + m:
        return None
    return data[8 : 8 + n], data[16 + n : 16 + n + m], data[16 + n + m :]

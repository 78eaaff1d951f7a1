"""The sandbox's pipe: the frames the grader sends (cells, then cases), the reading of what comes
back, and the checks on it (:func:`parse_frame`, :func:`read_outcome`, :func:`read_cell_errors`).

Everything that comes back is untrusted: a frame is length-checked and its ``.npz`` inspected
before anything is inflated, an outcome's kind and exception must be ones we know, and a hidden
run keeps only what no input can be spelled in.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import signal
import struct
import subprocess
import threading
import time
import zipfile
from typing import Any, Protocol

import numpy as np

from selfattn.checks.calling import (
    BAD_RETURN,
    FAILED_KINDS,
    NOT_ANSWERED,
    RAISED,
    TIME_LIMIT,
    Case,
    CellError,
    Outcome,
)
from selfattn.checks.findings import hidden_exception_name

MAX_RESULT_BYTES = 64 << 20


class WallClock(Protocol):
    """What :func:`collect` reads of a run's limits (an :class:`autograder.sandbox.Limits`)."""

    @property
    def wall_seconds(self) -> float: ...


def _encode(value, store: dict[str, np.ndarray]):
    if isinstance(value, np.ndarray):
        key = f"a{len(store)}"
        store[key] = value
        return {"a": key}
    if isinstance(value, (np.integer, np.floating)):
        return {"v": value.item()}
    if isinstance(value, (list, tuple)):
        return {"v": [v.item() if isinstance(v, np.generic) else v for v in value]}
    return {"v": value}


def _frame(header: dict, arrays: dict[str, np.ndarray] | None = None) -> bytes:
    """Length-prefixed JSON, then (if ``arrays`` is given) a length-prefixed ``.npz``."""
    head = json.dumps(header).encode()
    out = struct.pack(">Q", len(head)) + head
    if arrays is not None:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        out += struct.pack(">Q", buf.tell()) + buf.getvalue()
    return out



def request_frames(cells: list[tuple[str, str | None]], function: str, cases: list[Case],
            oracle: list[str] | None = None) -> tuple[bytes, bytes]:
    """A run's two frames: the cells (label, source) and the function's name, then the cases (their
    arguments encoded by :func:`_encode`, the arrays among them in the second frame's ``.npz``).
    ``oracle`` names the course's functions the run calls through the grader
    (:mod:`autograder.sandbox.oracle`): their cells are sent without source. The first frame also
    carries :data:`MAX_RESULT_BYTES`: results that would be larger are refused by the harness at once
    (``"too_large"``), not written until the grader stops reading, so that how long a refused run
    lasts, and whether its limits end it first, cannot depend on how large the student made them."""
    store: dict[str, np.ndarray] = {}
    encoded = [{"args": [_encode(a, store) for a in c.args],
                "kwargs": {k: _encode(v, store) for k, v in c.kwargs.items()}} for c in cases]
    first = _frame({"cells": cells, "function": function, "max_result_bytes": MAX_RESULT_BYTES,
                    **({"oracle": oracle} if oracle else {})})
    second = _frame({"cases": encoded}, store)
    return first, second


_EXCEPTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,60}")


def _error_type(name: str) -> str:
    """``name`` if it is one of Python's built-in exceptions; anything else, a class the student
    could have named after a hidden input, becomes ``"an exception"``."""
    return hidden_exception_name(name) or "an exception"


#: A hidden run's failed call, in fixed words by kind (a raised built-in keeps its name).
_HIDDEN_WORDS = {NOT_ANSWERED: "NotImplementedError", BAD_RETURN: "returned something that is not numbers",
                 TIME_LIMIT: "gave no result in time"}


def read_outcome(enc: dict, arrays, hidden: bool) -> Outcome:
    """One call's outcome as the harness sent it (untrusted: its kind must be one we know, its
    exception a plain name; a hidden run's keeps only what no input can be spelled in)."""
    if "error" not in enc:
        return Outcome(values=tuple(np.asarray(arrays[k], dtype=np.float64) for k in enc["values"]))
    kind, exception = enc.get("kind", RAISED), enc.get("exception")
    if kind not in FAILED_KINDS or not (exception is None or (isinstance(exception, str)
                                                              and _EXCEPTION_NAME.fullmatch(exception))):
        raise ValueError("an outcome of no known kind")
    if not hidden:
        return Outcome(error=str(enc["error"])[:500], kind=kind, exception=exception)
    exception = hidden_exception_name(exception or "")
    return Outcome(error=_HIDDEN_WORDS.get(kind, exception or "an exception"), kind=kind, exception=exception)


def read_cell_errors(sent: Any, labels: list[str], hidden: bool) -> list[CellError]:
    """The harness's cell errors (untrusted data): each names a cell that was sent and an exception
    class; anything else is dropped. A hidden run's keeps only the cell and a built-in exception's
    name (its text could carry a hidden input), in fixed words."""
    out = []
    for e in sent if isinstance(sent, list) else []:
        if not isinstance(e, dict) or e.get("label") not in labels or not isinstance(e.get("exception"), str) \
                or not _EXCEPTION_NAME.fullmatch(e["exception"]):
            continue
        label, exception = e["label"], e["exception"]
        if hidden:
            exception = _error_type(exception)
            out.append(CellError(f"the cell of {label} raised {exception}", exception, label=label))
        else:
            out.append(CellError(str(e.get("text", ""))[:500], exception, label=label))
    return out


def feed(stdin, first: bytes, second: bytes, asked: threading.Event, replies=None) -> None:
    """Send the cells, and the cases once the harness asks for them (a thread: the pipe may fill);
    then, with ``replies`` (a queue), the oracle's answers as they come, until ``None``."""
    try:
        stdin.write(first)
        stdin.flush()
        asked.wait()
        stdin.write(second)
        stdin.flush()
        while replies is not None and (reply := replies.get()) is not None:
            stdin.write(reply)
            stdin.flush()
            replies.task_done()  # written: no longer counted as unread (oracle.Replies)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            stdin.close()
        except (BrokenPipeError, OSError):
            pass


def collect(fd: int, proc, limits: WallClock, on_first_byte=None, kill=None, stop=None,
            relay=None) -> tuple[bytes, bool, bool]:
    """Read the result pipe until EOF, the wall-clock limit, the size cap, or ``stop()`` says the run
    was ended (it ran into a cap of its cgroup); call ``on_first_byte`` when the harness first
    writes (it is asking for the cases). Then ``kill`` (by default the process group of ``proc``:
    whatever the student started). With ``relay`` (an :class:`autograder.sandbox.oracle.Relay`), the
    oracle's requests are answered as they come and only the greeting and the final frame are kept
    (a request out of bounds ends the run, ``relay.refused``)."""
    import select

    from autograder.errors import RefusedRequest

    chunks, size = [], 0
    deadline = time.monotonic() + limits.wall_seconds
    exited_at: float | None = None
    timed_out = too_big = False
    try:
        while True:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now > exited_at + 1.0:
                break  # the harness is gone; a process it forked may hold the pipe open
            if now >= deadline:
                timed_out = True
                break
            if stop is not None and stop():
                break
            ready, _, _ = select.select([fd], [], [], 0.1 if stop is not None else 0.2)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            if size == 0 and on_first_byte is not None:
                on_first_byte()
            if relay is None:
                chunks.append(chunk)
                size += len(chunk)
            else:
                try:
                    relay.feed(chunk)
                except RefusedRequest as exc:
                    relay.refused = str(exc)
                    break
                size = len(relay.buffer) + len(relay.final or b"") + 1
            if size > MAX_RESULT_BYTES:
                too_big = True
                break
    finally:
        os.close(fd)
        if not (timed_out or too_big):
            try:  # let it exit on its own, so its exit status means something
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if kill is not None:
            kill()
        else:
            try:  # whatever the student started is stopped with it (its own process group)
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return (b"".join(chunks) if relay is None else relay.result()), timed_out, too_big


#: Decompressed bytes the results of one run may declare (a real run sends a few kilobytes).
MAX_RESULT_ARRAY_BYTES = 256 << 20


def parse_frame(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON header and the arrays of a result frame, checked before anything is inflated.

    Every member of the ``.npz`` must be one the header names, hold float64 in a plain ``.npy``,
    and declare (in its zip entry and in its array header) a size that adds up to at most
    :data:`MAX_RESULT_ARRAY_BYTES`: a deflated bomb is refused without being decompressed.
    """
    (n,) = struct.unpack(">Q", data[:8])
    result = json.loads(data[8 : 8 + n].decode())
    if not isinstance(result, dict):
        raise ValueError("not a dict")
    (m,) = struct.unpack(">Q", data[8 + n : 16 + n])
    blob = data[16 + n : 16 + n + m]
    if len(blob) != m or len(data) != 16 + n + m:
        raise ValueError("the frame's lengths do not add up")
    announced = {k for o in result.get("outcomes", []) if isinstance(o, dict) for k in o.get("values", [])}
    arrays: dict[str, np.ndarray] = {}
    budget = MAX_RESULT_ARRAY_BYTES
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names) or not {f"{k}.npy" for k in announced} >= set(names):
            raise ValueError("the archive holds arrays the header did not announce")
        for info in infos:
            budget -= info.file_size
            if budget < 0:
                raise ValueError("the arrays are larger than the grader accepts")
            with z.open(info) as member:
                version = np.lib.format.read_magic(member)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(member)
                size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                if dtype != np.dtype("<f8") or member.tell() + size != info.file_size:
                    raise ValueError("an array is not what its header says")
                raw = member.read(size)
            if len(raw) != size:
                raise ValueError("an array is shorter than its header says")
            arr = np.frombuffer(raw, dtype=dtype)
            arrays[info.filename[: -len(".npy")]] = arr.reshape(shape, order="F" if fortran else "C").copy()
    return result, arrays


#: the numbers of an OSError that writing a file too many bytes gives: EFBIG (RLIMIT_FSIZE), ENOSPC (a full tmpfs)
DISK_ERRNOS = frozenset({errno.EFBIG, errno.ENOSPC})


def disk_full(result: dict) -> bool:
    """Whether the run's cells or calls failed writing a file: its folders were full or the file
    too large, by the ``errno`` each sends as data (never by reading its words; a submission could
    claim this only against itself)."""
    sent = [e for part in (result.get("cell_errors"), result.get("outcomes")) if isinstance(part, list) for e in part]
    return any(isinstance(e, dict) and type(e.get("errno")) is int and e["errno"] in DISK_ERRNOS for e in sent)

"""The process the course's functions run in when a student's function calls them (fair blame).

The grader's process never computes a request of the oracle (:mod:`autograder.sandbox.oracle`): it
checks the request, then hands it to this process, which holds the course's reference functions
(trusted code, never in a sandbox) and nothing else. Its own limits cap what one call can cost: an
address-space cap (``RLIMIT_AS``), a CPU-time cap set again before each call (``RLIMIT_CPU``: the
call's seconds on top of what the process has used), no file writes (``RLIMIT_FSIZE`` 0), one BLAS
thread (so wall-clock time bounds CPU time), and a reply-size cap checked before the reply is built.
The grader adds a wall-clock deadline per call and kills the process when it passes.

Protocol on stdin/stdout. First an 8-byte big-endian length and a JSON header ``{"cells": {name:
source}}``; the process answers ``K`` once the functions are defined. Then, per call, the request as
the harness sent it (a length-prefixed JSON header and a length-prefixed ``.npz``), answered by one
status byte and an 8-byte length: ``A`` and the reply for the harness (see
:func:`autograder.sandbox.oracle.compute`), or ``O`` and a JSON ``{"limit": name}`` (``memory`` or
``reply``). End of input ends the process.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import sys
import time

from autograder.errors import command_line


def _read_exact(fd: int, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, min(n - len(data), 1 << 20))
        if not chunk:
            return None
        data += chunk
    return data


def _read_framed(fd: int) -> bytes | None:
    size = _read_exact(fd, 8)
    return None if size is None else _read_exact(fd, struct.unpack(">Q", size)[0])


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _cap_cpu(seconds: float) -> None:
    """Allow this process ``seconds`` of CPU time more than it has used (the kernel ends it with SIGXCPU)."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(time.process_time() + seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


@command_line
def main(argv: list[str]) -> int:
    """Serve calls until stdin ends: ``argv[1]`` is JSON ``{"memory": bytes, "call_seconds": s,
    "run_seconds": s, "reply": bytes}``."""
    caps = json.loads(argv[1])
    # the replies go out on a descriptor of their own: what the course's code prints goes nowhere
    out = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stdout = open(os.devnull, "w")  # for the process's life
    from autograder.sandbox.oracle import OracleMemory, ReplyTooLarge, compute, reference_functions

    setup = _read_framed(0)
    if setup is None:
        return 1
    functions = reference_functions(json.loads(setup.decode())["cells"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    hard = int(time.process_time() + caps["run_seconds"] + caps["call_seconds"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
    resource.setrlimit(resource.RLIMIT_AS, (caps["memory"], caps["memory"]))
    _write_all(out, b"K")
    while True:
        head = _read_framed(0)
        blob = _read_framed(0) if head is not None else None
        if blob is None:
            return 0
        _cap_cpu(caps["call_seconds"])
        try:
            status, payload = b"A", compute(functions, head, blob, caps["reply"])
        except OracleMemory:
            status, payload = b"O", b'{"limit": "memory"}'
        except ReplyTooLarge:
            status, payload = b"O", b'{"limit": "reply"}'
        _write_all(out, status + struct.pack(">Q", len(payload)) + payload)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""One grading run at a time per work folder.

A run (``make grade``, ``make grades-final``) holds an exclusive ``flock`` on the work folder itself from
start to end; a second run refuses at once with a clear message instead of interleaving its
writes. ``grade one`` jobs (fanned out by a scheduler) share the lock with each other, never with a
run. No lock file is created, and the kernel releases the lock when its holder dies, so a killed
run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from autograder.errors import RunBusy
from autograder.workspace import Workspace

#: another run holds the lock (exit status 75 at the command line)
Busy = RunBusy


@contextmanager
def hold(shared: bool = False, *, ws: Workspace) -> Iterator[None]:
    """Hold the run lock of the work folder of ``ws`` (exclusive unless ``shared``) or raise :class:`Busy`."""
    ws.work.mkdir(parents=True, exist_ok=True)
    fd = os.open(ws.work, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another grading run is using {ws.work}; wait for it to finish, then run again") from None
        yield
    finally:
        os.close(fd)

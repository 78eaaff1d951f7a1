"""One grading run at a time per work folder.

A run (``make grade``, ``--finish``) holds an exclusive lock on ``.grading/run.lock`` from start
to end; a second run refuses at once with a clear message instead of interleaving its writes.
``--one`` jobs (fanned out by a scheduler) share the lock with each other, never with a run.
The lock is an ``flock``: the kernel releases it when its holder dies, so a killed run never
leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from .paths import GRADING


class Busy(SystemExit):
    """Another run holds the lock (an exit with a message, status 1)."""


@contextmanager
def hold(shared: bool = False) -> Iterator[None]:
    """Hold the work folder's run lock (exclusive unless ``shared``) or raise :class:`Busy`."""
    GRADING.mkdir(parents=True, exist_ok=True)
    path = GRADING / "run.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise Busy(f"another grading run is using {GRADING.parent} (pid {holder}); "
                       "wait for it to finish, then run again") from None
        if not shared:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)

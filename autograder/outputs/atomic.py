"""Result files are replaced whole or not at all: written under a temporary name in the same
folder, flushed to disk, then renamed into place. A run killed half-way leaves the previous
file (or none), never a truncated one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import tempfile
from pathlib import Path


def write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically."""
    write_bytes(path, text.encode("utf-8"))


def create_once(path: Path, data: bytes) -> bytes:
    """Create ``path`` holding ``data`` unless it exists; return what it holds (the first writer wins)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path)  # fails if another process created it first
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_bytes()


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False
    where the system has no such call."""
    try:
        renameat2 = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        err = ctypes.get_errno()
        if err in (38, 22, 95):  # ENOSYS, EINVAL, EOPNOTSUPP: not on this system or file system
            return False
        raise OSError(err, os.strerror(err), str(b))
    return True


def place_folder(folder: Path, target: Path, aside: Path) -> str:
    """Put the folder ``folder`` at ``target`` (same file system) in one step; return "taken" or
    "replaced".

    Where ``target`` does not exist, one rename. Where it does, one exchange, after which
    ``folder`` holds the old ``target`` (the caller removes it); where the system has no exchange,
    ``target`` is renamed to ``aside`` and then ``folder`` to ``target``, so a run killed between
    the two leaves the old folder whole at ``aside``.
    """
    if not target.exists():
        os.rename(folder, target)
        return "taken"
    if not _exchange(folder, target):
        os.rename(target, aside)
        os.rename(folder, target)
    return "replaced"

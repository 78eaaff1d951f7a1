"""What Collect takes from the exchange's inbound folder: only what a student cannot forge.

A student may put anything in her own inbound folder, not only what ``nbgrader submit`` copies,
and Collect runs as the grader account. So (:class:`autograder.nbgrader_ext.plugins.CollectIntoSubmitted`):

- a hand-in folder (``STUDENT+ASSIGNMENT+TIME[+RANDOM]``) is taken only if it is a real folder whose
  owner is the account of the student its name says (or the account running Collect, which made it
  itself); any other is refused and reported, never collected (:func:`folder_problem`);
- in it, at any depth, only real folders and regular files of that same owner are copied: a
  symbolic link, a device, a FIFO, a socket, or a file of anyone else (a hard link to another's
  file) is refused with one line and nothing is read through it. Each file is opened with
  ``O_NOFOLLOW`` after ``lstat`` and must still be the same regular file (``fstat``); bytes are
  counted *while* copying, against a cap per file and per hand-in (:func:`copy_handin`);
- the hand-in time is what the grader side observed: the change times (``ctime``, which no
  student can set back) of the folder and everything in it. A claimed time (the folder's name,
  ``timestamp.txt``) earlier than that by more than the tolerance, or in the future, is replaced by
  the observed time, with a line saying so (:func:`handin_time`);
- ``submission_secret.txt`` (what names the released feedback page, ``md5(secret + notebook)``)
  is kept only in the form nbgrader's ``submit`` writes (128 hex digits) and only if no other
  student's collected hand-in holds it; otherwise the grader makes one (:func:`feedback_secret`).

Every refusal is one line naming the student and the problem; the lines of the last Collect of
each assignment are kept in the work folder (:func:`record_refusals`) and listed by ``make grade``'s
summary (:func:`recorded_refusals`).
"""

from __future__ import annotations

import errno
import json
import os
import pwd
import re
import secrets
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from fnmatch import fnmatch
from pathlib import Path

from autograder.errors import RefusedFile, RefusedHandin
from autograder.intake.untrusted import MAX_TIMESTAMP_BYTES, id_problem, read_regular
from autograder.outputs import atomic
from autograder.workspace import Workspace

#: how a folder or a file of a hand-in is opened: never through a link, never blocking on a FIFO
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
#: the files nbgrader's exchange adds to a hand-in, which the grader side writes itself
STAMP, SECRET = "timestamp.txt", "submission_secret.txt"
#: nbgrader's submit writes ``secrets.token_hex(64)``
_SECRET_FORM = re.compile(r"[0-9a-f]{128}")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Caps:
    """What one hand-in may hold (Collect's traitlets)."""

    file_bytes: int
    handin_bytes: int
    entries: int


def account_name(uid: int) -> str:
    """The login of ``uid``, or ``uid N`` when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def account_uid(login: str) -> int | None:
    try:
        return pwd.getpwnam(login).pw_uid
    except KeyError:
        return None


def shown(name: str) -> str:
    """A name made safe to print on one line (control characters and odd bytes made visible)."""
    return ascii(name)


def parse_folder_name(name: str, assignment: str) -> tuple[str, datetime] | str:
    """(student, claimed time) from ``STUDENT+ASSIGNMENT+TIME[+RANDOM]``, else why not."""
    from nbgrader.utils import parse_utc

    parts = name.split("+")
    if len(parts) not in (3, 4) or parts[1] != assignment:
        return "its name is not STUDENT+ASSIGNMENT+TIME[+RANDOM]"
    if why := id_problem(parts[0]):
        return f"the student its name gives is refused: {why}"
    try:
        return parts[0], parse_utc(parts[2])
    except Exception:
        return f"the time in its name is not a date and time ({shown(parts[2][:40])})"


def folder_problem(path: Path, student: str, collector: int) -> str | None:
    """Why the hand-in folder ``path`` named for ``student`` is refused, or ``None``: it must be a
    real folder owned by ``student``'s account (or by ``collector``, the account running Collect)."""
    try:
        st = path.lstat()
    except OSError as exc:
        return f"it cannot be read ({os.strerror(exc.errno or 0)})"
    if not stat.S_ISDIR(st.st_mode):
        return f"it is {_kind(st)}, not a folder"
    uid = account_uid(student)
    if st.st_uid not in {uid, collector}:
        owner = account_name(st.st_uid)
        if uid is None:
            return f"it was made by {owner}, and {student} has no account here"
        return f"it was made by {owner}, not by {student}: a hand-in in another student's name"
    return None


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "an entry of an unknown kind"


def entry_problem(st: os.stat_result, owner: int) -> str | None:
    """Why an entry of a hand-in owned by ``owner`` is refused (from its ``lstat``), or ``None``."""
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return f"it is {_kind(st)}"
    if st.st_uid != owner:
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            return f"it is a hard link to a file of {account_name(st.st_uid)}"
        return f"it belongs to {account_name(st.st_uid)}, not to the hand-in's owner"
    return None


@dataclass
class _Copy:
    """One hand-in being copied: its caps, its counts and the lines of the entries it refused."""

    owner: int
    caps: Caps
    skip: Callable[[str, bool], bool]
    refused: list[str] = field(default_factory=list)
    bytes: int = 0
    entries: int = 0

    def tree(self, dir_fd: int, dest: Path, rel: str) -> None:
        dest.mkdir(mode=0o755)
        for name in sorted(os.listdir(dir_fd)):
            self.entries += 1
            if self.entries > self.caps.entries:
                raise RefusedHandin(f"it holds more than {self.caps.entries} files and folders")
            where = f"{rel}{name}"
            try:
                st = os.lstat(name, dir_fd=dir_fd)
            except FileNotFoundError:  # removed while read: nothing to copy
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if (rel == "" and name in (STAMP, SECRET)) or self.skip(name, is_dir):
                continue  # the grader side writes nbgrader's two files itself; nbgrader's ignore list
            if why := entry_problem(st, self.owner):
                self.refused.append(f"{shown(where)}: refused, {why}{_target(name, dir_fd, st)}; nothing was "
                                    "copied through it")
            elif is_dir:
                self._folder(name, dir_fd, st, dest, where)
            else:
                self._file(name, dir_fd, st, dest / name, where)

    def _folder(self, name: str, dir_fd: int, st: os.stat_result, dest: Path, where: str) -> None:
        try:
            fd = os.open(name, _OPEN_DIR, dir_fd=dir_fd)
        except OSError as exc:
            self.refused.append(f"{shown(where)}: refused, it cannot be opened as a folder ({_why(exc)})")
            return
        try:
            if not _same(os.fstat(fd), st):
                self.refused.append(f"{shown(where)}: refused, it was replaced while read")
                return
            self.tree(fd, dest / name, f"{where}/")
        finally:
            os.close(fd)

    def _file(self, name: str, dir_fd: int, st: os.stat_result, dest: Path, where: str) -> None:
        try:
            fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
        except OSError as exc:
            self.refused.append(f"{shown(where)}: refused, it cannot be opened ({_why(exc)})")
            return
        try:
            opened = os.fstat(fd)
            if not (stat.S_ISREG(opened.st_mode) and _same(opened, st)):
                self.refused.append(f"{shown(where)}: refused, it was replaced while read (now {_kind(opened)}); "
                                    "nothing was copied through it")
                return
            over = None
            written = 0
            with open(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644),
                      "wb") as out:
                while True:  # the caps hold while copying: nothing past either cap is written
                    chunk = os.read(fd, min(_CHUNK, self.caps.file_bytes - written + 1))
                    if not chunk:
                        break
                    if written + len(chunk) > self.caps.file_bytes:
                        over = "file"  # refused alone, whatever the hand-in's room
                        break
                    if self.bytes + written + len(chunk) > self.caps.handin_bytes:
                        over = "handin"  # read on (to the file cap at most) to tell which cap it passed
                    elif over is None:
                        out.write(chunk)
                    written += len(chunk)
            if over == "handin":
                raise RefusedHandin(f"it holds more than the cap of {self.caps.handin_bytes} bytes per hand-in")
            if over:
                dest.unlink()
                self.refused.append(f"{shown(where)}: refused, it is larger than the cap of {self.caps.file_bytes} "
                                    "bytes per file; it was not copied")
                return
            self.bytes += written
            os.utime(dest, ns=(opened.st_atime_ns, opened.st_mtime_ns))
        finally:
            os.close(fd)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, stat.S_IFMT(a.st_mode)) == (b.st_dev, b.st_ino, stat.S_IFMT(b.st_mode))


def _why(exc: OSError) -> str:
    return "a symbolic link" if exc.errno == errno.ELOOP else os.strerror(exc.errno or 0)


def _target(name: str, dir_fd: int, st: os.stat_result) -> str:
    """`` (to TARGET)`` for a symbolic link, so the instructor sees what it pointed at."""
    if not stat.S_ISLNK(st.st_mode):
        return ""
    try:
        return f" (to {shown(os.readlink(name, dir_fd=dir_fd)[:120])})"
    except OSError:
        return ""


def copy_handin(src: Path, dest: Path, owner: int, caps: Caps,
                skip: Callable[[str, bool], bool] = lambda name, is_dir: False) -> list[str]:
    """Copy the hand-in folder ``src`` (owned by ``owner``) into ``dest`` (made here; it must not
    exist), taking only real folders and regular files of ``owner`` and never ``timestamp.txt``
    or ``submission_secret.txt`` at its top; ``skip(name, is_dir)`` passes over an entry unread.

    Returns one line per refused entry (without the student's name). Raises :class:`RefusedHandin`
    when the hand-in as a whole is over a cap or cannot be read (``dest`` may then hold a part).
    """
    try:
        fd = os.open(src, _OPEN_DIR)
    except OSError as exc:
        raise RefusedHandin(f"it cannot be opened as a folder ({_why(exc)})") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != owner:
            raise RefusedHandin(f"it was replaced while read (now made by {account_name(st.st_uid)})")
        copy = _Copy(owner, caps, skip)
        copy.tree(fd, dest, "")
        return copy.refused
    finally:
        os.close(fd)


def observed_time(src: Path, limit: int) -> datetime:
    """The latest change time (``ctime``) of the folder ``src`` and of everything in it, as UTC
    without a zone (as nbgrader keeps times); links are not followed. At most ``limit`` entries are
    looked at (a hand-in with more is refused when copied)."""
    latest = src.lstat().st_ctime
    seen = 0
    todo = [src]
    while todo and seen <= limit:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            latest = max(latest, st.st_ctime)
            if stat.S_ISDIR(st.st_mode):
                todo.append(Path(entry.path))
    return datetime.fromtimestamp(latest, timezone.utc).replace(tzinfo=None)


def claimed_time(src: Path, from_name: datetime, owner: int) -> datetime:
    """The hand-in time the student claims: the later of her folder's name and her ``timestamp.txt``
    (read only if it is a regular file of hers)."""
    from nbgrader.utils import parse_utc

    stamp = src / STAMP
    try:
        if stamp.lstat().st_uid == owner:
            return max(from_name, parse_utc(read_regular(stamp, MAX_TIMESTAMP_BYTES).decode("utf-8").strip()))
    except (OSError, RefusedFile, ValueError, UnicodeDecodeError, OverflowError):
        pass
    return from_name


def handin_time(claimed: datetime, observed: datetime, now: datetime, tolerance: float) -> tuple[datetime, str | None]:
    """The trusted hand-in time and, when the claim was not taken, why (one clause).

    The claim stands when it is at most ``tolerance`` seconds before what the grader side observed
    and not in the future (``now`` plus the tolerance); otherwise the observed time replaces it."""
    slack = timedelta(seconds=tolerance)
    if claimed > now + slack:
        return observed, f"its claimed hand-in time {stamp_text(claimed)} is in the future"
    if claimed < observed - slack:
        return observed, (f"its claimed hand-in time {stamp_text(claimed)} is {_span(observed - claimed)} before "
                          "the files changed last")
    return claimed, None


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 60} min {seconds % 60} s"


def stamp_text(when: datetime) -> str:
    """A time as nbgrader writes ``timestamp.txt``."""
    return f"{when:%Y-%m-%d %H:%M:%S.%f} UTC"


def feedback_secret(src: Path, owner: int, others: Iterable[str]) -> tuple[str, str | None]:
    """The ``submission_secret.txt`` the collected hand-in gets and, when the student's was not
    kept, why. Hers is kept (her copy of nbgrader finds her feedback by it) only in the form
    nbgrader's submit writes and if it is none of ``others`` (other students' secrets)."""
    path = src / SECRET
    try:
        if path.lstat().st_uid != owner:
            raise RefusedFile("it belongs to someone else")
        text = read_regular(path, 4 * 128).decode("ascii").strip()
    except FileNotFoundError:
        return secrets.token_hex(64), None  # a hand-in not made by nbgrader's submit
    except (OSError, RefusedFile, UnicodeDecodeError) as exc:
        return secrets.token_hex(64), f"its {SECRET} was not used ({exc})"
    if not _SECRET_FORM.fullmatch(text):
        return secrets.token_hex(64), f"its {SECRET} is not one nbgrader's submit writes"
    if text in set(others):
        return secrets.token_hex(64), f"its {SECRET} is another student's"
    return text, None


def secrets_of_others(ws: Workspace, assignment: str, student: str) -> set[str]:
    """The feedback secrets of every other student's collected hand-in of ``assignment``."""
    out: set[str] = set()
    if not ws.submitted.is_dir():
        return out
    for folder in ws.submitted.iterdir():
        if folder.name != student:
            try:
                out.add(read_regular(folder / assignment / SECRET, 4 * 128).decode("ascii").strip())
            except (OSError, RefusedFile, UnicodeDecodeError):
                continue
    return out


# --- the refusals of the last Collect, for make grade's summary ------------------------------------

def refusals_file(ws: Workspace) -> Path:
    return ws.grading / "collect-refusals.json"


def _load(ws: Workspace) -> dict[str, dict[str, list[str]]]:
    try:
        data = json.loads(refusals_file(ws).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_refusals(ws: Workspace, assignment: str, students: str, lines: dict[str, list[str]]) -> None:
    """Keep the refusal ``lines`` (by the student each folder names) of a Collect of ``assignment``
    for the students matching ``students`` (a pattern), replacing what an earlier Collect of them said."""
    data = _load(ws)
    kept = {s: v for s, v in data.get(assignment, {}).items() if not fnmatch(s, students or "*")}
    kept.update({s: v for s, v in lines.items() if v})
    data[assignment] = kept
    ws.grading.mkdir(parents=True, exist_ok=True)
    atomic.write_text(refusals_file(ws), json.dumps(data, indent=1, sort_keys=True) + "\n")


def recorded_refusals(ws: Workspace) -> list[str]:
    """Every line the last Collect of each assignment refused or corrected, ``assignment: line``."""
    data = _load(ws)
    return [f"{a}: {line}" for a in sorted(data) for s in sorted(data[a]) for line in data[a][s]]

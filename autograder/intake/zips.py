"""Handed-in zips into ``submitted/``: ``python -m autograder.intake.zips FOLDER`` (``make intake ZIPS=FOLDER``).

A student hands in ``LOGIN.zip`` (``hand_in.py``), laid out ``LOGIN/<assignment>/<notebook>.ipynb``;
an LMS download folder holds one such zip per student, renamed by the LMS. Each zip is read as
data, checked whole, and only then unpacked into ``submitted/<LOGIN>/<assignment>/``, nowhere else.

Names accepted (:func:`named`): ``LOGIN.zip`` as handed in; Canvas's
``<name>_[LATE_]<user id>_<attempt>_LOGIN.zip`` (a re-upload ``LOGIN-1.zip``); Moodle's
``<full name>_<participant id>_assignsubmission_file_LOGIN.zip``, or ``LOGIN.zip`` inside a folder
``<full name>_<participant id>_assignsubmission_file``. The LMS account (Canvas user, Moodle
participant) is who handed it in; ``--login-map FILE`` (CSV ``account,login``, the account being
that id or the zip's file name) gives each account its login instead of the name the student chose.

A zip is refused, with one line, when: its login is not a plain id or not the one of the map; its
top folder is not that login; a member is absolute, climbs out (``..``), is a link, a device, a
pipe or a socket, is encrypted, is named twice (also differing only in case), is not
``.ipynb``, or is not a notebook of the course's assignment; it has more than ``max_members``
members or more than ``max_bytes`` uncompressed (sizes read from the directory are enforced while
reading, so a zip bomb stops there); or taking it would replace what this command did not put in
``submitted/`` (nbgrader collect, a copy by hand) or what another account handed in.

Two zips for one login: from one account, the latest wins (the larger of Canvas's upload numbers, else the
file's modification time) and the others are not taken. Without a login map, the file's name decides
the login, first come first served: a zip is refused, naming the login and both accounts, when its
login was taken earlier from another account's hand-in, or when two accounts hand it in in one run
and neither had it before. With a map, the map decides, also over what earlier runs took: a folder
of ``submitted/`` that this command took from an account the map does not give that login (a zip
named for another student, taken while there was no map) is undone, replaced by the zip the map
says is that student's (graded by the next ``make grade``), or removed when the folder holds none;
either way it is withdrawn from the gradebook (a grade of it was never the student's), the old
copy is kept under ``.intake/undone/``, and one line per folder says what changed.

Nothing is written before a zip is accepted; its notebooks are written under
``.intake/`` in the work folder, then moved into place with one rename (an existing folder taken
from an earlier zip of the same account is swapped in one exchange where the system has it), so a
killed run leaves the old folder or the new one (without an exchange, a run killed between the two
renames leaves the old folder whole under ``.intake/``, and the next run puts it back first); an
undone folder leaves ``submitted/`` with one rename.
What it took is recorded in ``.intake/taken.json`` (written atomically, before and after each move,
so the next run knows which folder a killed one left and whose it is); that is how it knows what it
may replace. It holds the run lock of the work folder, so it never runs beside ``make grade``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import re
import secrets
import shutil
import stat
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from traitlets import Integer, TraitError, Unicode
from traitlets.config import Configurable

from autograder import errors
from autograder.course.ids import id_problem
from autograder.course.spec import notebooks_of
from autograder.errors import RefusedZip
from autograder.nbgrader_ext.withdraw import withdraw
from autograder.outputs import atomic, json_files
from autograder.pipeline import run_lock
from autograder.workspace import Workspace, from_environment

#: Canvas: name, optional LATE, user id, attempt, the file's own name (re-uploads get "-N").
CANVAS = re.compile(r"[^_/]+_(?:LATE_)?(?P<account>\d+)_(?P<attempt>\d+)_(?P<original>[^/]+)")
#: Moodle: full name, participant id, then the file's own name (or a folder of that name).
MOODLE = re.compile(r"(?:.*/)?[^/]*_(?P<account>\d+)_assignsubmission_file(?:_|/)(?P<original>[^/]+)")


class ZipIntake(Configurable):
    """Which handed-in zips are taken, and the caps each one must stay under."""

    login_map = Unicode("", help=(
        "CSV file with columns account,login: the login of each LMS account (Canvas user id, Moodle "
        "participant id) or zip file name; when given, only accounts it names are taken")).tag(config=True)
    max_members = Integer(64, min=1, help=(
        "Most members (files and folders) one zip may hold; more is refused unread")).tag(config=True)
    max_bytes = Integer(256 << 20, min=1, help=(
        "Most bytes one zip may hold uncompressed (and the zip itself); more is refused, and reading "
        "stops there, so a zip bomb costs nothing")).tag(config=True)


@dataclass(frozen=True)
class Named:
    """What a zip's name says: whose it is (``login``), who handed it in (``account``), and its
    place among one account's hand-ins (``order``, larger is later)."""

    path: Path
    login: str
    account: str
    order: tuple[float, ...]


def read_login_map(path: Path) -> dict[str, str]:
    """account -> login from a CSV with columns ``account,login``; raises
    :class:`~autograder.errors.RefusedInput` naming the file and its bad line."""
    out: dict[str, str] = {}
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or not {"account", "login"} <= set(reader.fieldnames):
                raise errors.RefusedInput(f"login map {path}: needs the columns account,login")
            for n, row in enumerate(reader, start=2):
                account, login = (row["account"] or "").strip(), (row["login"] or "").strip()
                if not account or id_problem(login):
                    raise errors.RefusedInput(f"login map {path}:{n}: needs an account and a plain login, got "
                                              f"{account!r}, {login!r}")
                out[account] = login
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise errors.RefusedInput(f"login map {path}: cannot be read ({type(exc).__name__})") from None
    return out


def named(path: Path, folder: Path, login_map: dict[str, str] | None = None) -> Named:
    """Whose zip ``path`` (inside ``folder``) is, by the naming conventions above; raises ``RefusedZip``."""
    rel = path.relative_to(folder).as_posix()
    mtime = path.lstat().st_mtime
    if found := CANVAS.fullmatch(rel):
        account, order = f"canvas user {found['account']}", (float(found["attempt"]), mtime)
        original = re.sub(r"-\d+(?=\.zip$)", "", found["original"])
        key = found["account"]
    elif found := MOODLE.fullmatch(rel):
        account, order, original, key = f"moodle participant {found['account']}", (mtime,), found["original"], \
            found["account"]
    elif "/" not in rel:
        account, order, original, key = f"file {rel}", (mtime,), rel, rel
    else:
        raise RefusedZip("not a name an LMS gives (LOGIN.zip, or Canvas's or Moodle's download names)")
    if login_map is not None:
        login = login_map.get(key) or login_map.get(path.name)
        if login is None:
            raise RefusedZip(f"{account} is not in the login map")
    else:
        login = original[:-4] if original.lower().endswith(".zip") else original
        if why := id_problem(login):
            raise RefusedZip(f"the login {login!r} its name gives is refused: {why}")
    return Named(path, login, account, order)


def assignments(ws: Workspace) -> dict[str, set[str]]:
    """assignment -> the file names of its notebooks, as the course's source notebooks have them."""
    return {a.name: {f"{n}.ipynb" for n in notebooks_of(a.name, ws.course)}
            for a in sorted(ws.solutions.iterdir()) if a.is_dir()}


def _member_problem(info: zipfile.ZipInfo, login: str, course: dict[str, set[str]]) -> str | None:
    """Why one member of ``login``'s zip is refused, or ``None``."""
    name = info.filename
    mode = info.external_attr >> 16
    shown = ascii(name)
    if not name or name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or "\\" in name:
        return f"member {shown} is an absolute path"
    if any(ord(c) < 32 for c in name):
        return f"member {shown} has a control character in its name"
    parts = PurePosixPath(name).parts
    if any(p in ("..", ".") for p in name.rstrip("/").split("/")) or "" in name.rstrip("/").split("/"):
        return f"member {shown} leaves its folder ('..', '.' or an empty part)"
    if info.flag_bits & 0x1:
        return f"member {shown} is encrypted"
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        return f"member {shown} is a symbolic link"
    if kind and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"member {shown} is not a file (a device, pipe or socket)"
    if parts[0] != login:
        return f"its top folder is {parts[0]!r}, not {login!r}: it holds another login's work"
    if info.is_dir():
        if len(parts) > 2 or (len(parts) == 2 and parts[1] not in course):
            return f"folder {shown} is not {login}/<assignment>/"
        return None
    if not name.endswith(".ipynb"):
        return f"member {shown} is not a notebook (.ipynb)"
    if len(parts) != 3 or parts[1] not in course:
        return f"member {shown} is not {login}/<assignment>/<notebook>.ipynb of an assignment of the course"
    if parts[2] not in course[parts[1]]:
        return f"member {shown} is not a notebook of {parts[1]}"
    return None


def read_zip(zpath: Path, login: str, course: dict[str, set[str]], limits: ZipIntake) -> dict[str, dict[str, bytes]]:
    """assignment -> notebook name -> bytes of the zip at ``zpath``, every member checked before
    one is read; raises ``RefusedZip`` with the first problem."""
    st = os.lstat(zpath)
    if not stat.S_ISREG(st.st_mode):
        raise RefusedZip("not a regular file")
    if st.st_size > limits.max_bytes:
        raise RefusedZip(f"the zip is {st.st_size} bytes, over the cap of {limits.max_bytes}")
    try:
        with zipfile.ZipFile(zpath) as z:
            infos = z.infolist()
            if len(infos) > limits.max_members:
                raise RefusedZip(f"{len(infos)} members, over the cap of {limits.max_members}")
            seen: set[str] = set()
            for info in infos:  # twice, also in another case: unpacked, one would replace the other
                key = info.filename.rstrip("/").casefold()
                if key in seen:
                    raise RefusedZip(f"member {info.filename!a} is named twice")
                seen.add(key)
            for info in infos:
                if why := _member_problem(info, login, course):
                    raise RefusedZip(why)
            files = [i for i in infos if not i.is_dir()]
            if not files:
                raise RefusedZip("it holds no notebook")
            if sum(i.file_size for i in files) > limits.max_bytes:
                raise RefusedZip(f"it holds over {limits.max_bytes} bytes uncompressed")
            out: dict[str, dict[str, bytes]] = {}
            for info in files:
                with z.open(info) as fh:  # reads at most the declared size, and checks the CRC
                    data = fh.read(info.file_size + 1)
                if len(data) != info.file_size:
                    raise RefusedZip(f"member {info.filename!a} is not the size its zip declares")
                _, assignment, notebook = PurePosixPath(info.filename).parts
                out.setdefault(assignment, {})[notebook] = data
            return out
    except RefusedZip:
        raise
    except Exception as exc:  # BadZipFile, a damaged member's zlib error, an unknown compression, ...
        raise RefusedZip(f"not a readable zip archive ({type(exc).__name__})") from None


# ------------------------------------------------------------------------------------ writing
def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _contents(folder: Path) -> dict[str, str] | None:
    """file name -> digest of what ``folder`` holds, or ``None`` if it holds anything but regular files."""
    out = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() or not entry.is_file():
            return None
        out[entry.name] = _digest(entry.read_bytes())
    return out


class Ledger:
    """``.intake/taken.json``: for each ``login/assignment`` taken, the account it came from
    (``account``), the digests of the zip (``zip``) and of each file written (``files``), and the
    zip's name (``source``). While a folder is being moved, its entry also holds either
    ``incoming`` (the entry it becomes once the new folder is in place) and ``scratch`` (the run's
    scratch folder), or ``undoing`` (an undone folder on its way out); :func:`recover` settles
    both after a killed run."""

    def __init__(self, ws: Workspace):
        self.path = ws.work / ".intake" / "taken.json"
        self.data: dict[str, dict] = json_files.read(self.path, "taken") if self.path.is_file() else {}

    def save(self) -> None:
        json_files.write(self.path, "taken", self.data, indent=1, sort_keys=True)

    def owners(self, login: str) -> set[str]:
        """The accounts whose hand-ins this command took for ``login`` (any assignment)."""
        return {str(e["account"]) for k, e in self.data.items() if k.split("/", 1)[0] == login and "account" in e}


#: Where a replaced folder waits in its run's scratch folder when the system has no exchange.
ASIDE = "replaced"
#: An ``account`` of the ledger: what :func:`named` calls it, around the key a login map uses.
ACCOUNT = re.compile(r"(?:canvas user|moodle participant) (?P<id>\d+)|file (?P<file>.+)")


def mapped_login(entry: dict, login_map: dict[str, str]) -> str | None:
    """The login ``login_map`` gives the account of a ledger ``entry``, looked up as :func:`named`
    looks up a zip's (its id, else the zip's file name); ``None`` when the map does not name it."""
    found = ACCOUNT.fullmatch(str(entry.get("account", "")))
    key = (found["id"] or found["file"]) if found else None
    return (login_map.get(key) if key else None) or login_map.get(str(entry.get("source", "")))


def contradicted(ledger: Ledger, login_map: dict[str, str]) -> dict[str, str]:
    """``login/assignment`` -> why, for each folder taken earlier from an account that
    ``login_map`` does not give that login (a zip named for another student, taken without a map)."""
    out = {}
    for key, entry in ledger.data.items():
        login, account = key.split("/", 1)[0], entry.get("account")
        mapped = mapped_login(entry, login_map)
        if mapped != login:
            out[key] = f"the map gives {account} to {mapped}" if mapped else f"the map does not name {account}"
    return out


def _held(folder: Path) -> dict[str, str] | None:
    """What :func:`_contents` says of ``folder``, or ``None`` when it is not a real folder."""
    return _contents(folder) if folder.is_dir() and not folder.is_symlink() else None


def _ours(held: dict[str, str] | None, entry: dict | None) -> bool:
    """Whether a folder holding ``held`` is what this command wrote, by its ledger ``entry``
    (``pending``: the record a run of an earlier version left while replacing)."""
    return entry is not None and held is not None and held in (entry.get("files"), entry.get("pending"))


def undone_place(ws: Workspace, key: str) -> Path:
    """A new place under ``.intake/undone/`` for the folder ``submitted/<key>`` that a login map undid."""
    login, assignment = key.split("/", 1)
    folder = ws.work / ".intake" / "undone" / login
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{assignment}-{secrets.token_hex(4)}"


def recover(ws: Workspace, ledger: Ledger) -> None:
    """Settle what a killed run left half-done: a folder moved aside (no exchange on this system)
    whose replacement never arrived goes back; an entry caught in a move records whichever folder
    is in ``submitted/`` now (the new one, or the old one and its account), an undone folder that
    left is forgotten; then the scratch folders of killed runs go (each holds only a copy this
    command wrote, or a folder it had replaced)."""
    changed = False
    for key, entry in list(ledger.data.items()):
        target = ws.submitted / key
        aside = ws.work / ".intake" / str(entry.get("scratch", "")) / ASIDE
        if entry.get("scratch") and aside.is_dir() and not target.exists():
            atomic.place_folder(aside, target, aside)
        if isinstance(entry.get("incoming"), dict):
            rest = {k: v for k, v in entry.items() if k not in ("incoming", "scratch")}
            if _held(target) == entry["incoming"].get("files"):
                ledger.data[key] = entry["incoming"]
            elif "account" in rest:
                ledger.data[key] = rest
            else:
                del ledger.data[key]
            changed = True
        elif "undoing" in entry:
            if target.exists() or target.is_symlink():
                del entry["undoing"]
            else:
                del ledger.data[key]
            changed = True
    if changed:
        ledger.save()
    for stale in (ws.work / ".intake").glob("tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


def place(ws: Workspace, ledger: Ledger, who: Named, zip_digest: str, assignment: str,
          notebooks: dict[str, bytes], overrule: Path | None = None) -> str:
    """Put ``notebooks`` at ``submitted/<login>/<assignment>/`` as one step; return what was done.

    Raises ``RefusedZip`` when that would replace what this command did not write, or another
    account's hand-in; with ``overrule`` (the login map contradicts the folder there,
    :func:`contradicted`), another account's folder this command wrote is replaced, and kept at
    ``overrule``."""
    key = f"{who.login}/{assignment}"
    student = ws.submitted / who.login
    target = student / assignment
    entry = ledger.data.get(key)
    if student.is_symlink() or (student.exists() and not student.is_dir()):
        raise RefusedZip(f"submitted/{who.login} is not a folder: move it away first")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise RefusedZip(f"submitted/{key} is not a folder: move it away first")
    if target.exists():
        held = _contents(target)
        if not _ours(held, entry):
            raise RefusedZip(f"submitted/{key} holds files this command did not put there (nbgrader collect or a "
                             "copy by hand): move them away to take this zip")
        assert entry is not None
        if entry["account"] != who.account and overrule is None:
            raise RefusedZip(f"submitted/{key} was taken from {entry['account']}'s hand-in, this one is "
                             f"{who.account}'s: give a login map (--login-map) to say whose it is")
        if entry["account"] == who.account and entry.get("zip") == zip_digest and held == entry.get("files"):
            return "unchanged"
    files = {name: _digest(data) for name, data in notebooks.items()}
    incoming = {"account": who.account, "zip": zip_digest, "files": files, "source": who.path.name}
    scratch = ws.work / ".intake" / f"tmp-{secrets.token_hex(6)}"
    fresh = scratch / assignment
    fresh.mkdir(parents=True)
    try:
        for name, data in notebooks.items():
            fd = os.open(fresh / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        ledger.data[key] = {**(entry or {}), "incoming": incoming, "scratch": scratch.name}
        ledger.save()
        student.mkdir(parents=True, exist_ok=True)
        done = atomic.place_folder(fresh, target, scratch / ASIDE)  # the old one: written here
        if overrule is not None and done == "replaced":  # the exchange left it at fresh, two renames at ASIDE
            os.rename(fresh if fresh.is_dir() else scratch / ASIDE, overrule)
        ledger.data[key] = incoming
        ledger.save()
    finally:
        if not target.exists() and (scratch / ASIDE).is_dir():  # failed between two renames: the old one back
            atomic.place_folder(scratch / ASIDE, target, scratch / ASIDE)
        shutil.rmtree(scratch, ignore_errors=True)  # made by this run: the new copy or the old one it replaced
    return done


def set_aside(ws: Workspace, ledger: Ledger, key: str) -> Path | None:
    """Move ``submitted/<key>``, which the login map contradicts, to ``.intake/undone/`` in one
    rename, withdraw it from grading (:func:`~autograder.nbgrader_ext.withdraw.withdraw`: a grade
    of it is not the student's) and forget it; return where it went (``None``: it had left
    ``submitted/`` already). Raises ``RefusedZip`` when the folder holds what this command did not write."""
    target, entry = ws.submitted / key, ledger.data[key]
    login, assignment = key.split("/", 1)
    if not (target.exists() or target.is_symlink()):
        withdraw(login, assignment, ws)
        del ledger.data[key]
        ledger.save()
        return None
    if not _ours(_held(target), entry):
        raise RefusedZip(f"submitted/{key} now holds files this command did not put there: left as it is, "
                         "check it by hand")
    dest = undone_place(ws, key)
    ledger.data[key] = {**entry, "undoing": dest.name}
    ledger.save()
    withdraw(login, assignment, ws)  # first: killed after it, the next run with the map moves the folder again
    os.rename(target, dest)
    del ledger.data[key]
    ledger.save()
    try:
        target.parent.rmdir()  # the student's folder, if that was all it held
    except OSError:
        pass
    return dest


# ------------------------------------------------------------------------------------ the run
def zips_in(folder: Path) -> list[Path]:
    """Every ``*.zip`` under ``folder`` (Moodle nests them one folder down), not following links."""
    return sorted(p for p in folder.rglob("*") if p.name.lower().endswith(".zip") and not p.is_dir())


@dataclass
class Outcome:
    """What one run did: one line per zip (``<name>: taken|not taken|refused: ...``), one line
    per folder taken earlier that the login map undid (``<login>: ...``), how many zips were
    refused, and how many undone folders were left in place (they hold what this command did not write)."""

    zips: list[str]
    changes: list[str]
    refused: int
    left: int


def choose(claims: dict[str, list[Named]], ledger: Ledger, mapped: bool, lines: dict[Path, str]) -> list[Named]:
    """The zip taken for each login of ``claims`` (login -> its zips); a line in ``lines`` for
    each other zip. Without a login map (``mapped``), a login taken earlier from one account is
    not taken from another, and one that two accounts hand in now is taken from neither."""
    taken: list[Named] = []
    for login, hand_ins in claims.items():
        owners = set() if mapped else ledger.owners(login)
        if owners:
            for h in hand_ins:
                if h.account not in owners:
                    lines[h.path] = (f"refused: {login} was taken earlier from {' and '.join(sorted(owners))}'s "
                                     f"hand-in, this zip is {h.account}'s: give a login map (--login-map) to say "
                                     "whose it is")
            hand_ins = [h for h in hand_ins if h.account in owners]
        accounts = sorted({h.account for h in hand_ins})
        if len(accounts) > 1:
            why = (f"the login map gives {login} to {len(accounts)} accounts handing it in ({', '.join(accounts)}): "
                   "keep one" if mapped else
                   f"{len(accounts)} accounts hand in {login} ({', '.join(accounts)}): give a login map "
                   "(--login-map) to say whose it is")
            for h in hand_ins:
                lines[h.path] = f"refused: {why}"
            continue
        if not hand_ins:
            continue
        latest = max(hand_ins, key=lambda h: (h.order, h.path.name))
        taken.append(latest)
        for h in hand_ins:
            if h is not latest:
                lines[h.path] = f"not taken: {latest.path.name} is a later hand-in of {login}"
    return taken


def intake(folder: Path, settings: ZipIntake | None = None, *, ws: Workspace) -> Outcome:
    """Take the zips of ``folder`` into ``ws.submitted``, and with a login map undo the earlier
    decisions it contradicts; return what was done (:class:`Outcome`)."""
    settings = settings or ZipIntake()
    login_map = read_login_map(Path(settings.login_map)) if settings.login_map else None
    course = assignments(ws)
    lines: dict[Path, str] = {}
    changes: dict[str, str] = {}
    left = 0
    with run_lock.hold(ws=ws):
        ledger = Ledger(ws)
        recover(ws, ledger)
        claims: dict[str, list[Named]] = {}
        for path in zips_in(folder):
            try:
                who = named(path, folder, login_map)
            except RefusedZip as why:
                lines[path] = f"refused: {why}"
                continue
            claims.setdefault(who.login, []).append(who)
        undo = contradicted(ledger, login_map) if login_map is not None else {}
        earlier = {key: dict(ledger.data[key]) for key in undo}
        for who in choose(claims, ledger, login_map is not None, lines):
            try:
                contents = read_zip(who.path, who.login, course, settings)
                digest = _digest(who.path.read_bytes())
                done = []
                for a, nbs in sorted(contents.items()):
                    key = f"{who.login}/{a}"
                    kept = undone_place(ws, key) if key in undo else None
                    done.append(f"{a} ({place(ws, ledger, who, digest, a, nbs, kept)}, {len(nbs)} notebooks)")
                    if kept is not None:
                        withdraw(who.login, a, ws)  # its grades, comments and hand grades were never the student's
                        why = undo.pop(key)
                        where = (f", the old copy kept in {kept.relative_to(ws.work).as_posix()}" if kept.exists()
                                 else "")
                        changes[key] = (f"{_earlier(key, earlier[key], why)}; replaced by {who.account}'s "
                                        f"{who.path.name}{where}")
                lines[who.path] = f"taken: submitted/{who.login}/ " + ", ".join(done)
            except RefusedZip as why:
                lines[who.path] = f"refused: {why}"
        for key, why in sorted(undo.items()):
            try:
                kept = set_aside(ws, ledger, key)
            except RefusedZip as problem:
                changes[key] = f"{_earlier(key, earlier[key], why)}, but {problem}"
                left += 1
                continue
            what = (f"removed, kept in {kept.relative_to(ws.work).as_posix()}" if kept is not None
                    else "it had left submitted/ already")
            login = key.split("/", 1)[0]
            changes[key] = (f"{_earlier(key, earlier[key], why)}; {what}, and out of the gradebook (no zip of "
                            f"{login}'s was taken in its place)")
    zip_lines = [f"{p.relative_to(folder).as_posix()}: {line}" for p, line in sorted(lines.items())]
    change_lines = [f"{key.split('/', 1)[0]}: {line}" for key, line in sorted(changes.items())]
    return Outcome(zip_lines, change_lines, sum(line.startswith("refused") for line in lines.values()), left)


def _earlier(key: str, entry: dict, why: str) -> str:
    """The start of a line about the folder ``submitted/<key>`` that the login map contradicts."""
    login, assignment = key.split("/", 1)
    return (f"{assignment} from {entry.get('account')}'s {entry.get('source', 'zip')}, taken earlier, is not "
            f"{login}'s by the login map ({why})")


@errors.command_line
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="the LMS download folder holding the handed-in zips")
    p.add_argument("--login-map", default="", help=ZipIntake.login_map.help)
    p.add_argument("--max-members", type=int, default=ZipIntake.max_members.default_value,
                   help=ZipIntake.max_members.help)
    p.add_argument("--max-bytes", type=int, default=ZipIntake.max_bytes.default_value, help=ZipIntake.max_bytes.help)
    a = p.parse_args(argv)
    if not a.folder.is_dir():
        raise errors.RefusedInput(f"{a.folder} is not a folder (give the folder of the handed-in zips)")
    try:
        settings = ZipIntake(login_map=a.login_map, max_members=a.max_members, max_bytes=a.max_bytes)
    except TraitError as exc:
        raise errors.RefusedInput(f"intake: {exc}") from None
    done = intake(a.folder, settings, ws=from_environment())  # another run holding the lock: errors.RunBusy
    for line in done.zips + done.changes:
        print(line)
    n = len(done.changes) - done.left
    undone = f"; {n} folder{'s' * (n != 1)} taken earlier undone by the login map" if n else ""
    print(f"{len(done.zips) - done.refused} of {len(done.zips)} zips taken or not needed, {done.refused} refused"
          f"{undone}")
    return 1 if done.refused or done.left else 0


if __name__ == "__main__":
    sys.exit(main())

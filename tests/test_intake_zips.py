"""Handed-in zips into submitted/ (autograder.intake.zips): hostile zips are refused with one line
each, nothing is unpacked outside submitted/<login>/, no student's work is overwritten by another's,
and a killed run leaves the old folder or the new one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.intake import zips
from autograder.outputs import atomic
from autograder.workspace import ROOT, Workspace

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")  # zips named twice, on purpose

NOTEBOOK = (ROOT / "notebooks" / "attention" / "01-embeddings.ipynb").read_bytes()
OTHER = (ROOT / "notebooks" / "attention" / "02-queries-keys-values.ipynb").read_bytes()
NB1 = "attention/01-embeddings.ipynb"


def make_zip(path: Path, members: list[tuple], **kw) -> Path:
    """A zip at ``path`` of (name, data[, unix mode[, flag bits]]) members."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, **kw) as z:
        for name, data, *rest in members:
            info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = rest[0] if rest else (stat.S_IFDIR | 0o755 if name.endswith("/") else stat.S_IFREG | 0o644)
            info.external_attr = mode << 16
            z.writestr(info, data)
    flags = [m[3] for m in members if len(m) > 3]
    if flags:  # the writer clears flag bits: set them in every local header and central directory entry
        raw = bytearray(path.read_bytes())
        for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            start = raw.find(signature)
            while start != -1:
                raw[start + at] |= flags[0]
                start = raw.find(signature, start + 4)
        path.write_bytes(bytes(raw))
    return path


def hand_in(folder: Path, name: str, login: str, notebook: bytes = NOTEBOOK, mtime: float | None = None) -> Path:
    """``name`` in ``folder``: what hand_in.py writes for ``login``."""
    path = make_zip(folder / name, [(f"{login}/", b""), (f"{login}/attention/", b""),
                                    (f"{login}/{NB1}", notebook)])
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(tmp_path / "work", ROOT)


def run(ws: Workspace, folder: Path, **settings) -> dict[str, str]:
    """zip name -> its line, and login -> each line about an earlier decision the login map undid."""
    done = zips.intake(folder, zips.ZipIntake(**settings), ws=ws)
    out = dict(line.split(": ", 1) for line in done.zips)
    assert done.refused == sum(v.startswith("refused") for v in out.values())
    changes: dict[str, str] = {}
    for login, line in (line.split(": ", 1) for line in done.changes):
        changes[login] = f"{changes[login]}\n{line}" if login in changes else line
    assert not set(out) & set(changes)
    return out | changes


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (links included, not followed) -> its bytes."""
    if not folder.exists():
        return {}
    return {p.relative_to(folder).as_posix(): (b"LINK" if p.is_symlink() else p.read_bytes())
            for p in sorted(folder.rglob("*")) if p.is_symlink() or p.is_file()}


HOSTILE = {
    "absolute": ([("/alice/" + NB1, NOTEBOOK)], "is an absolute path"),
    "dotdot": ([("alice/../bob/" + NB1, NOTEBOOK)], "leaves its folder"),
    "dotdot-deep": ([("alice/attention/../../../etc/x.ipynb", NOTEBOOK)], "leaves its folder"),
    "backslash": ([("alice\\..\\bob\\x.ipynb", NOTEBOOK)], "absolute path"),
    "symlink": ([("alice/" + NB1, b"/etc/passwd", stat.S_IFLNK | 0o777)], "is a symbolic link"),
    "device": ([("alice/" + NB1, b"", stat.S_IFCHR | 0o644)], "is not a file"),
    "fifo": ([("alice/" + NB1, b"", stat.S_IFIFO | 0o644)], "is not a file"),
    "encrypted": ([("alice/" + NB1, NOTEBOOK, stat.S_IFREG | 0o644, 0x1)], "is encrypted"),
    "duplicate": ([("alice/" + NB1, NOTEBOOK), ("alice/" + NB1, OTHER)], "is named twice"),
    "duplicate-folder": ([("alice/attention/", b""), ("alice/attention", b"")], "is named twice"),
    "case-duplicate": ([("alice/" + NB1, NOTEBOOK), ("alice/" + NB1.upper(), OTHER)], "is named twice"),
    "not-a-notebook": ([("alice/attention/run.py", b"import os")], "is not a notebook (.ipynb)"),
    "not-of-the-course": ([("alice/attention/99-extra.ipynb", NOTEBOOK)], "is not a notebook of attention"),
    "no-such-assignment": ([("alice/homework/01-embeddings.ipynb", NOTEBOOK)], "of an assignment of the course"),
    "too-deep": ([("alice/attention/x/01-embeddings.ipynb", NOTEBOOK)], "of an assignment of the course"),
    "loose-file": ([("alice/01-embeddings.ipynb", NOTEBOOK)], "of an assignment of the course"),
    "another-login": ([("bob/" + NB1, NOTEBOOK)], "its top folder is 'bob', not 'alice'"),
    "mixed-logins": ([("alice/" + NB1, NOTEBOOK), ("bob/" + NB1, OTHER)], "its top folder is 'bob'"),
    "empty": ([("alice/", b"")], "holds no notebook"),
    "control-character": ([("alice/attention/\x1b[2J.ipynb", NOTEBOOK)], "control character"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_zip_is_refused_in_one_line_and_nothing_is_written(ws, tmp_path, kind):
    members, reason = HOSTILE[kind]
    downloads = tmp_path / "downloads"
    (ws.submitted / "bob" / "attention").mkdir(parents=True)
    (ws.submitted / "bob" / NB1).write_bytes(OTHER)  # another student's work, collected earlier
    before = tree(ws.work)
    make_zip(downloads / "alice.zip", members)
    said = run(ws, downloads)
    assert list(said) == ["alice.zip"] and said["alice.zip"].startswith("refused: ")
    assert reason in said["alice.zip"] and "\n" not in said["alice.zip"], said
    assert tree(ws.submitted) == {k[len("submitted/"):]: v for k, v in before.items() if k.startswith("submitted/")}
    assert not (tmp_path / "etc").exists() and not any((ws.work / ".intake").glob("tmp-*"))


def test_caps_on_members_and_size_refuse_a_zip_bomb_unread(ws, tmp_path):
    downloads = tmp_path / "downloads"
    bomb = b"{" + b" " * (4 << 20) + b"}"  # 4 MiB that deflate to a few KiB
    make_zip(downloads / "alice.zip", [("alice/" + NB1, bomb)])
    make_zip(downloads / "bob.zip", [(f"bob/attention/{i}/", b"") for i in range(70)])
    said = run(ws, downloads, max_bytes=1 << 20)
    assert (downloads / "alice.zip").stat().st_size < 1 << 20
    assert "over 1048576 bytes uncompressed" in said["alice.zip"], said
    assert "70 members, over the cap of 64" in said["bob.zip"], said
    assert tree(ws.submitted) == {}


def test_a_zip_whose_declared_size_lies_is_refused(ws, tmp_path):
    """A member that inflates to more than its zip says: reading stops at the declared size."""
    downloads = tmp_path / "downloads"
    path = make_zip(downloads / "alice.zip", [("alice/" + NB1, NOTEBOOK)])
    data = bytearray(path.read_bytes())
    size = len(NOTEBOOK).to_bytes(4, "little")
    small = (100).to_bytes(4, "little")
    for at in (i for i in range(len(data) - 3) if bytes(data[i:i + 4]) == size):
        data[at:at + 4] = small  # the uncompressed size, in the local header and the central directory
    path.write_bytes(bytes(data))
    said = run(ws, downloads)
    assert said["alice.zip"].startswith("refused: ") and tree(ws.submitted) == {}, said


def test_what_is_not_a_zip_or_not_a_login_is_refused(ws, tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    (downloads / "carol.zip").write_bytes(b"not a zip at all")
    hand_in(downloads, "a b.zip", "a b")
    (downloads / "dave.zip").symlink_to(hand_in(tmp_path / "elsewhere", "dave.zip", "dave"))
    said = run(ws, downloads)
    assert said["carol.zip"] == "refused: not a readable zip archive (BadZipFile)"
    assert said["a b.zip"].startswith("refused: the login 'a b' its name gives is refused")
    assert said["dave.zip"] == "refused: not a regular file"
    assert tree(ws.submitted) == {}


def test_a_class_from_canvas_and_moodle_is_taken_and_a_resubmission_replaces_only_its_own(ws, tmp_path):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "alice.zip", "alice")
    hand_in(downloads, "doebob_LATE_1234_5678_bob.zip", "bob")  # Canvas
    hand_in(downloads / "Carol Roe_77_assignsubmission_file", "carol.zip", "carol")  # Moodle, in folders
    hand_in(downloads, "Dan Poe_78_assignsubmission_file_dan.zip", "dan")  # Moodle, flat
    said = run(ws, downloads)
    assert all(v.startswith("taken: ") for v in said.values()) and len(said) == 4, said
    assert said["alice.zip"] == "taken: submitted/alice/ attention (taken, 1 notebooks)"
    for login in ("alice", "bob", "carol", "dan"):
        assert tree(ws.submitted / login) == {NB1: NOTEBOOK}
    again = run(ws, downloads)
    assert all("unchanged" in v for v in again.values()), again
    hand_in(downloads, "doebob_1234_5679_bob-1.zip", "bob", OTHER)  # Canvas: bob's second attempt
    said = run(ws, downloads)
    assert said["doebob_1234_5679_bob-1.zip"] == "taken: submitted/bob/ attention (replaced, 1 notebooks)"
    assert said["doebob_LATE_1234_5678_bob.zip"] == "not taken: doebob_1234_5679_bob-1.zip is a later hand-in of bob"
    assert tree(ws.submitted / "bob") == {NB1: OTHER} and tree(ws.submitted / "alice") == {NB1: NOTEBOOK}
    assert not any((ws.work / ".intake").glob("tmp-*"))


def test_a_plain_folder_takes_the_latest_of_one_account_by_time(ws, tmp_path):
    first, second = tmp_path / "monday", tmp_path / "friday"
    hand_in(first, "alice.zip", "alice", NOTEBOOK)
    run(ws, first)
    hand_in(second, "alice.zip", "alice", OTHER)
    assert run(ws, second)["alice.zip"] == "taken: submitted/alice/ attention (replaced, 1 notebooks)"
    assert tree(ws.submitted / "alice") == {NB1: OTHER}


def test_another_account_handing_in_a_login_never_replaces_that_student(ws, tmp_path):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "roealice_11_1_alice.zip", "alice")
    assert run(ws, downloads)["roealice_11_1_alice.zip"].startswith("taken")
    later = tmp_path / "later"
    hand_in(later, "mallory_12_1_alice.zip", "alice", OTHER)  # another Canvas user names it alice.zip
    said = run(ws, later)
    assert said["mallory_12_1_alice.zip"] == ("refused: alice was taken earlier from canvas user 11's hand-in, this "
                                              "zip is canvas user 12's: give a login map (--login-map) to say whose "
                                              "it is")
    assert tree(ws.submitted / "alice") == {NB1: NOTEBOOK}
    both = tmp_path / "both"
    hand_in(both, "roebob_21_1_bob.zip", "bob")
    hand_in(both, "mallory_12_2_bob.zip", "bob", OTHER)
    said = run(ws, both)
    assert all("2 accounts hand in bob (canvas user 12, canvas user 21)" in v for v in said.values()), said
    assert not (ws.submitted / "bob").exists()


def test_a_login_map_decides_whose_a_zip_is(ws, tmp_path):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "roealice_11_1_whatever.zip", "alice")
    hand_in(downloads, "mallory_12_1_alice.zip", "alice", OTHER)
    hand_in(downloads, "roebob_21_1_bob.zip", "alice")  # bob's account, alice's top folder
    table = tmp_path / "logins.csv"
    table.write_text("account,login\n11,alice\n21,bob\n")
    said = run(ws, downloads, login_map=str(table))
    assert said["roealice_11_1_whatever.zip"].startswith("taken: submitted/alice/")
    assert said["mallory_12_1_alice.zip"] == "refused: canvas user 12 is not in the login map"
    assert said["roebob_21_1_bob.zip"] == "refused: its top folder is 'alice', not 'bob': it holds another login's work"
    assert tree(ws.submitted) == {f"alice/{NB1}": NOTEBOOK}


def test_a_folder_this_command_did_not_write_is_never_replaced(ws, tmp_path):
    collected = ws.submitted / "alice" / "attention"
    collected.mkdir(parents=True)
    (collected / "01-embeddings.ipynb").write_bytes(OTHER)
    (collected / "timestamp.txt").write_text("2026-01-01 10:00:00")
    downloads = tmp_path / "downloads"
    hand_in(downloads, "alice.zip", "alice")
    said = run(ws, downloads)
    assert "holds files this command did not put there" in said["alice.zip"]
    assert tree(ws.submitted / "alice") == {NB1: OTHER, "attention/timestamp.txt": b"2026-01-01 10:00:00"}


class Killed(BaseException):
    """The run dies here (as a SIGKILL would: nothing after it runs)."""


def _die(*args):
    raise Killed


def _save_then_die():
    """A Ledger.save that saves once (the pending entry) and dies the next time."""
    saves, real = [], zips.Ledger.save

    def save(self):
        saves.append(1)
        return real(self) if len(saves) == 1 else _die()

    return save


def test_a_run_killed_while_replacing_leaves_the_old_folder_or_the_new_one(ws, tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    hand_in(first, "alice.zip", "alice", NOTEBOOK)
    run(ws, first)
    hand_in(second, "alice.zip", "alice", OTHER)
    for where, replacement in (("_exchange", _die), ("save", _save_then_die())):
        with monkeypatch.context() as m:
            m.setattr(atomic if where == "_exchange" else zips.Ledger, where, replacement)
            with pytest.raises(Killed):
                zips.intake(second, zips.ZipIntake(), ws=ws)
        assert tree(ws.submitted / "alice") in ({NB1: NOTEBOOK}, {NB1: OTHER}), where
        json.loads((ws.work / ".intake" / "taken.json").read_text())  # whole
    assert run(ws, second)["alice.zip"].startswith("taken: submitted/alice/ attention")
    assert tree(ws.submitted / "alice") == {NB1: OTHER}


def test_the_command_prints_one_line_per_zip_and_fails_when_one_is_refused(ws, tmp_path):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "alice.zip", "alice")
    make_zip(downloads / "bob.zip", [("../../evil.ipynb", NOTEBOOK)])
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(ws.work))
    done = subprocess.run([sys.executable, "-m", "autograder.intake.zips", str(downloads)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "alice.zip: taken: submitted/alice/ attention (taken, 1 notebooks)",
        "bob.zip: refused: member '../../evil.ipynb' leaves its folder ('..', '.' or an empty part)",
        "1 of 2 zips taken or not needed, 1 refused"]
    assert not (tmp_path / "evil.ipynb").exists() and not (ws.work / "evil.ipynb").exists()


def test_a_bad_folder_or_login_map_is_one_line_and_status_2(ws, tmp_path):
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(ws.work))
    downloads = tmp_path / "downloads"
    hand_in(downloads, "alice.zip", "alice")
    table = tmp_path / "logins.csv"
    table.write_text("user,name\n11,alice\n")
    for args, said in (([str(tmp_path / "nowhere")], "is not a folder"),
                       ([str(downloads), "--login-map", str(table)], "needs the columns account,login"),
                       ([str(downloads), "--login-map", str(tmp_path / "none.csv")], "cannot be read")):
        done = subprocess.run([sys.executable, "-m", "autograder.intake.zips", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert not ws.submitted.exists()


def test_without_an_exchange_a_replacement_still_lands_whole(ws, tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    hand_in(first, "alice.zip", "alice", NOTEBOOK)
    run(ws, first)
    hand_in(second, "alice.zip", "alice", OTHER)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)  # no renameat2 here: two renames
    assert run(ws, second)["alice.zip"] == "taken: submitted/alice/ attention (replaced, 1 notebooks)"
    assert tree(ws.submitted / "alice") == {NB1: OTHER} and not any((ws.work / ".intake").glob("tmp-*"))


KILL_BETWEEN_RENAMES = """
import os, signal, sys
from pathlib import Path
from autograder.intake import zips
from autograder.outputs import atomic
from autograder.workspace import ROOT, Workspace

renames, real = [], os.rename
def rename(a, b):
    renames.append(b)
    if len(renames) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # between the two renames, nothing after runs
    return real(a, b)
atomic._exchange = lambda a, b: False
atomic.os.rename = rename
zips.intake(Path(sys.argv[1]), zips.ZipIntake(), ws=Workspace(Path(sys.argv[2]), ROOT))
"""


def test_a_run_killed_between_two_renames_gets_the_old_folder_back(ws, tmp_path):
    """Without an exchange a replacement is two renames. Killed (SIGKILL) between them, the old
    folder waits whole in the run's scratch space, and the next run puts it back before anything
    else; failing there with an error, the run puts it back itself."""
    first, second = tmp_path / "first", tmp_path / "second"
    hand_in(first, "alice.zip", "alice", NOTEBOOK)
    run(ws, first)
    hand_in(second, "alice.zip", "alice", OTHER)
    killed = subprocess.run([sys.executable, "-c", KILL_BETWEEN_RENAMES, str(second), str(ws.work)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    assert not (ws.submitted / "alice" / "attention").exists()  # killed between the two renames
    (tmp_path / "nothing").mkdir()
    assert run(ws, tmp_path / "nothing") == {}
    assert tree(ws.submitted / "alice") == {NB1: NOTEBOOK}  # the old folder, whole
    assert not any((ws.work / ".intake").glob("tmp-*"))
    assert run(ws, second)["alice.zip"] == "taken: submitted/alice/ attention (replaced, 1 notebooks)"
    assert tree(ws.submitted / "alice") == {NB1: OTHER}


def test_an_error_between_two_renames_puts_the_old_folder_back_at_once(ws, tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    hand_in(first, "alice.zip", "alice", NOTEBOOK)
    run(ws, first)
    hand_in(second, "alice.zip", "alice", OTHER)
    renames, real = [], os.rename

    def rename(a, b):
        renames.append(b)
        if len(renames) == 2:
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    monkeypatch.setattr(atomic.os, "rename", rename)
    with pytest.raises(OSError):
        zips.intake(second, zips.ZipIntake(), ws=ws)
    assert tree(ws.submitted / "alice") == {NB1: NOTEBOOK}


def test_what_hand_in_py_packs_is_taken_whole(ws, tmp_path):
    """The zip a student's hand_in.py writes (in a course folder laid out as make student lays it)
    is taken as it is: every released notebook lands in submitted/<login>/attention/."""
    course = tmp_path / "selfattn-course"
    shutil.copytree(ROOT / "notebooks", course / "notebooks")
    from student_support import lay_out_scripts

    lay_out_scripts(course)
    packed = subprocess.run([sys.executable, "hand_in.py", "--no-validate", "ada"], cwd=course, capture_output=True,
                            text=True, timeout=300)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    shutil.copy(course / "ada.zip", downloads / "ada.zip")
    released = sorted((ROOT / "notebooks" / "attention").glob("*.ipynb"))
    assert run(ws, downloads) == {"ada.zip": f"taken: submitted/ada/ attention (taken, {len(released)} notebooks)"}
    assert tree(ws.submitted / "ada") == {f"attention/{p.name}": p.read_bytes() for p in released}


# ------------------------------------------------------------------ zips named for another login
FORGED, OWN = OTHER, NOTEBOOK  # what mallory hands in as ben's, and ben's own notebook
LOGINS = "account,login\n123,mallory\n456,ben\n"


def undone(ws: Workspace) -> dict[str, bytes]:
    """Every file kept under .intake/undone/ (folders a login map undid)."""
    return tree(ws.work / ".intake" / "undone")


def test_with_a_login_map_a_forgery_taken_earlier_gives_way_to_the_students_own_zip(ws, tmp_path):
    """Without a map the file's name decides, so mallory's zip named ben.zip is taken as ben's; ben's
    own zip from another account is then refused, naming the login and both accounts; once the map
    is given, ben's zip replaces the forgery, the line says so, and the forgery is kept aside."""
    monday, friday = tmp_path / "monday", tmp_path / "friday"
    hand_in(monday, "mallory_123_1_ben.zip", "ben", FORGED)
    assert run(ws, monday)["mallory_123_1_ben.zip"] == "taken: submitted/ben/ attention (taken, 1 notebooks)"
    hand_in(friday, "mallory_123_1_ben.zip", "ben", FORGED)
    hand_in(friday, "benson_456_1_ben.zip", "ben", OWN)
    said = run(ws, friday)
    assert said["benson_456_1_ben.zip"] == ("refused: ben was taken earlier from canvas user 123's hand-in, this zip "
                                            "is canvas user 456's: give a login map (--login-map) to say whose it is")
    table = tmp_path / "logins.csv"
    table.write_text(LOGINS)
    said = run(ws, friday, login_map=str(table))
    assert said["benson_456_1_ben.zip"] == "taken: submitted/ben/ attention (replaced, 1 notebooks)", said
    assert said["mallory_123_1_ben.zip"].startswith("refused: its top folder is 'ben', not 'mallory'"), said
    [kept] = undone(ws)
    assert said["ben"] == ("attention from canvas user 123's mallory_123_1_ben.zip, taken earlier, is not ben's by "
                           "the login map (the map gives canvas user 123 to mallory); replaced by canvas user 456's "
                           f"benson_456_1_ben.zip, the old copy kept in .intake/undone/{kept.rsplit('/', 1)[0]}"), said
    assert tree(ws.submitted) == {f"ben/{NB1}": OWN} and undone(ws) == {kept: FORGED}
    assert run(ws, friday, login_map=str(table)) == {**{k: v for k, v in said.items() if k != "ben"},
                                                     "benson_456_1_ben.zip": "taken: submitted/ben/ attention "
                                                                             "(unchanged, 1 notebooks)"}
    assert run(ws, friday)["mallory_123_1_ben.zip"].startswith("refused: ben was taken earlier from canvas user 456")


def test_with_a_login_map_a_forgery_with_no_owner_is_removed_and_the_line_says_so(ws, tmp_path):
    """The victim has not handed in, or the forger's account is in no map: the forgery leaves
    submitted/ (kept aside) and is not graded as anybody's; the command says so and ends well."""
    downloads = tmp_path / "downloads"
    hand_in(downloads, "mallory_123_1_ben.zip", "ben", FORGED)
    hand_in(downloads, "eve_789_1_carol.zip", "carol", FORGED)  # an account the map will not name
    run(ws, downloads)
    assert sorted(tree(ws.submitted)) == [f"ben/{NB1}", f"carol/{NB1}"]
    table = tmp_path / "logins.csv"
    table.write_text(LOGINS)
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(ws.work))
    done = subprocess.run([sys.executable, "-m", "autograder.intake.zips", str(downloads), "--login-map", str(table)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stderr  # the two zips are refused
    kept = sorted(p.rsplit("/", 1)[0] for p in undone(ws))
    assert lines == [
        "eve_789_1_carol.zip: refused: canvas user 789 is not in the login map",
        "mallory_123_1_ben.zip: refused: its top folder is 'ben', not 'mallory': it holds another login's work",
        "ben: attention from canvas user 123's mallory_123_1_ben.zip, taken earlier, is not ben's by the login map "
        f"(the map gives canvas user 123 to mallory); removed, kept in .intake/undone/{kept[0]}, and out of the "
        "gradebook (no zip of ben's was taken in its place)",
        "carol: attention from canvas user 789's eve_789_1_carol.zip, taken earlier, is not carol's by the login map "
        f"(the map does not name canvas user 789); removed, kept in .intake/undone/{kept[1]}, and out of the "
        "gradebook (no zip of carol's was taken in its place)",
        "0 of 2 zips taken or not needed, 2 refused; 2 folders taken earlier undone by the login map"], lines
    assert tree(ws.submitted) == {} and sorted(undone(ws).values()) == [FORGED, FORGED]


def test_an_undone_folder_that_changed_by_hand_is_left_with_its_line(ws, tmp_path):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "mallory_123_1_ben.zip", "ben", FORGED)
    run(ws, downloads)
    (ws.submitted / "ben" / "attention" / "timestamp.txt").write_text("2026-01-01 10:00:00")  # nbgrader's, say
    table = tmp_path / "logins.csv"
    table.write_text(LOGINS)
    done = zips.intake(downloads, zips.ZipIntake(login_map=str(table)), ws=ws)
    assert done.left == 1 and done.changes == [
        "ben: attention from canvas user 123's mallory_123_1_ben.zip, taken earlier, is not ben's by the login map "
        "(the map gives canvas user 123 to mallory), but submitted/ben/attention now holds files this command did "
        "not put there: left as it is, check it by hand"]
    assert tree(ws.submitted / "ben") == {NB1: FORGED, "attention/timestamp.txt": b"2026-01-01 10:00:00"}


def test_without_a_map_the_account_that_took_a_login_first_keeps_it(ws, tmp_path):
    """The login taken earlier from one account stays that account's: its next attempt replaces it
    even when another account hands in the same login in the same download."""
    monday, friday = tmp_path / "monday", tmp_path / "friday"
    hand_in(monday, "roealice_11_1_alice.zip", "alice", NOTEBOOK)
    run(ws, monday)
    hand_in(friday, "roealice_11_2_alice.zip", "alice", OTHER)
    hand_in(friday, "mallory_12_1_alice.zip", "alice", FORGED + b" ")
    said = run(ws, friday)
    assert said == {
        "roealice_11_2_alice.zip": "taken: submitted/alice/ attention (replaced, 1 notebooks)",
        "mallory_12_1_alice.zip": "refused: alice was taken earlier from canvas user 11's hand-in, this zip is "
                                  "canvas user 12's: give a login map (--login-map) to say whose it is"}
    assert tree(ws.submitted) == {f"alice/{NB1}": OTHER}


@pytest.fixture
def two_assignments(tmp_path) -> Workspace:
    """A work folder of a course with two assignments, attention and extra, of one notebook each."""
    for assignment in ("attention", "extra"):
        (tmp_path / "course" / "solutions" / assignment).mkdir(parents=True)
        (tmp_path / "course" / "solutions" / assignment / "01-embeddings.ipynb").write_bytes(NOTEBOOK)
    return Workspace(tmp_path / "work", tmp_path / "course")


def course_zip(path: Path, login: str, notebooks: dict[str, bytes]) -> Path:
    """A zip at ``path`` with ``login``'s notebook of each assignment of ``notebooks``."""
    return make_zip(path, [(f"{login}/{a}/01-embeddings.ipynb", data) for a, data in sorted(notebooks.items())])


def test_without_a_map_a_login_taken_from_one_account_is_not_taken_from_another_for_any_assignment(
        two_assignments, tmp_path):
    ws = two_assignments
    monday, friday = tmp_path / "monday", tmp_path / "friday"
    course_zip(monday / "mallory_123_1_ben.zip", "ben", {"attention": FORGED})
    run(ws, monday)
    course_zip(friday / "benson_456_1_ben.zip", "ben", {"extra": OWN})
    assert run(ws, friday)["benson_456_1_ben.zip"].startswith("refused: ben was taken earlier from canvas user 123's")
    assert tree(ws.submitted) == {"ben/attention/01-embeddings.ipynb": FORGED}
    table = tmp_path / "logins.csv"
    table.write_text(LOGINS)
    said = run(ws, friday, login_map=str(table))  # ben's zip holds extra alone: the forged attention goes
    assert said["benson_456_1_ben.zip"] == "taken: submitted/ben/ extra (taken, 1 notebooks)", said
    assert said["ben"].startswith("attention from canvas user 123's") and "removed" in said["ben"], said
    assert tree(ws.submitted) == {"ben/extra/01-embeddings.ipynb": OWN}


def _killed_at(ws: Workspace, folder: Path, settings: zips.ZipIntake, step: int, exchange: bool) -> bool:
    """Run the intake in a forked child that is killed (SIGKILL) just before its ``step``-th lasting
    step (a ledger save, a rename, an exchange); whether it was killed (else it ran to its end)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            steps = [0]

            def lasting(real):
                def step_then(*args):
                    steps[0] += 1
                    if steps[0] == step:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return real(*args)
                return step_then

            zips.Ledger.save = lasting(zips.Ledger.save)
            os.rename = lasting(os.rename)
            atomic._exchange = lasting(atomic._exchange if exchange else lambda a, b: False)
            zips.intake(folder, settings, ws=ws)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
@pytest.mark.parametrize("own_zip", [True, False], ids=["replaced", "removed"])
def test_a_run_killed_anywhere_while_undoing_leaves_the_forgery_or_the_result_and_says_whose(tmp_path, own_zip,
                                                                                           exchange):
    """Killed before any of its lasting steps, a login-map run leaves in submitted/ben/ the
    forgery or what the map says (ben's own zip, or nothing), the ledger whole and naming the
    account of what is there, and the next run finishes the job."""
    monday, friday = tmp_path / "monday", tmp_path / "friday"
    hand_in(monday, "mallory_123_1_ben.zip", "ben", FORGED)
    if own_zip:
        hand_in(friday, "benson_456_1_ben.zip", "ben", OWN)
    else:
        friday.mkdir()
    table = tmp_path / "logins.csv"
    table.write_text(LOGINS)
    settings = zips.ZipIntake(login_map=str(table))
    result = {NB1: OWN} if own_zip else {}
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    step = 0
    while True:
        step += 1
        ws = Workspace(tmp_path / f"work-{step}", ROOT)
        run(ws, monday)
        if not _killed_at(ws, friday, settings, step, exchange):
            break
        # between two renames the old folder waits whole under .intake/ (the next run puts it back)
        assert tree(ws.submitted / "ben") in ({NB1: FORGED}, result, *([] if exchange else [{}])), step
        run(ws, nothing)  # settles the killed run
        there = tree(ws.submitted / "ben")
        assert there in ({NB1: FORGED}, result), step
        entry = json.loads((ws.work / ".intake" / "taken.json").read_text()).get("ben/attention")
        whose = None if not there else "canvas user 123" if there == {NB1: FORGED} else "canvas user 456"
        assert (entry or {}).get("account") == whose, step
        assert set(entry or {}) <= {"account", "zip", "files", "source"}, entry
        assert not any((ws.work / ".intake").glob("tmp-*")), step
        run(ws, friday, login_map=str(table))
        assert tree(ws.submitted / "ben") == result, step
        assert "ben" not in run(ws, friday, login_map=str(table))  # nothing left to undo
    assert step > 3 and tree(ws.submitted / "ben") == result


#: The class of the property test: honest students (Canvas user id -> login), and two forgers:
#: mallory, in the map with a login of her own, and eve, whose account no map names.
HONEST = {101: "ann", 102: "ben", 103: "cat"}
MALLORY, EVE = 200, 300
CLASS_MAP = "account,login\n" + "".join(f"{i},{login}\n" for i, login in {**HONEST, MALLORY: "mallory"}.items())

#: One hand-in: an account's new attempt, as (file's login, top folder, assignments) per zip in it.
hand_ins = st.one_of(
    st.tuples(st.sampled_from(sorted(HONEST)), st.sets(st.sampled_from(["attention", "extra"]), min_size=1)).map(
        lambda a: (a[0], [(HONEST[a[0]], HONEST[a[0]], sorted(a[1]))])),
    st.tuples(st.sampled_from([MALLORY, EVE]),
              st.dictionaries(st.sampled_from([*HONEST.values(), "mallory"]),
                              st.sets(st.sampled_from(["attention", "extra"]), min_size=1), min_size=1)).map(
        lambda a: (a[0], [(login, login, sorted(s)) for login, s in sorted(a[1].items())])),
)
#: What happens: hand-ins, and intake runs with (True) or without (False) the login map.
histories = st.lists(st.one_of(hand_ins, st.booleans()), min_size=1, max_size=12)


@given(history=histories)
def test_whatever_the_order_of_zips_and_runs_the_map_decides_and_no_forgery_stays(history):
    """Honest students and two forgers hand in, in any order, and intake runs in between with or
    without the login map, on an LMS download (each account's latest attempt). Without a map, a
    login's folders never hold two accounts' work, and a student's own work is never replaced by
    another's; after every run with the map, each student's folder holds only their own work, the
    latest attempt for every assignment it holds, and no forger's work is anywhere."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for assignment in ("attention", "extra"):
            (root / "course" / "solutions" / assignment).mkdir(parents=True)
            (root / "course" / "solutions" / assignment / "01-embeddings.ipynb").write_bytes(NOTEBOOK)
        ws = Workspace(root / "work", root / "course")
        (root / "logins.csv").write_text(CLASS_MAP)
        latest: dict[int, tuple[int, list]] = {}  # account -> (attempt, its zips)
        author: dict[bytes, int] = {}  # a notebook -> the account that handed it in
        for n, event in enumerate([*history, True]):
            if not isinstance(event, bool):
                account, files = event
                attempt = latest.get(account, (0, []))[0] + 1
                zipped = []
                for named_for, top, assignments in files:
                    notebooks = {a: f'{{"by": {account}, "attempt": {attempt}, "for": "{named_for}/{a}"}}'.encode()
                                 for a in assignments}
                    author.update({data: account for data in notebooks.values()})
                    zipped.append((f"user{account}_{account}_{attempt}_{named_for}.zip", top, notebooks))
                latest[account] = (attempt, zipped)
                continue
            folder = root / f"download-{n}"
            folder.mkdir()
            for _attempt, zipped in latest.values():
                for name, top, notebooks in zipped:
                    course_zip(folder / name, top, notebooks)
                    os.utime(folder / name, (1e9, 1e9))
            before = tree(ws.submitted)
            run(ws, folder, **({"login_map": str(root / "logins.csv")} if event else {}))
            after = tree(ws.submitted)
            for login in {p.split("/", 1)[0] for p in after}:
                assert len({author[data] for p, data in after.items() if p.startswith(f"{login}/")}) == 1, after
            owner = {login: i for i, login in HONEST.items()} | {"mallory": MALLORY}
            for path, data in before.items():  # a student's own work is replaced only by their own
                login = path.split("/", 1)[0]
                if author[data] == owner[login] and path in after:
                    assert author[after[path]] == owner[login], (path, after)
            if event:
                for path, data in after.items():
                    assert author[data] == owner[path.split("/", 1)[0]], (path, after)
                for i, login in HONEST.items():
                    for _name, _top, notebooks in latest.get(i, (0, []))[1]:
                        for a, data in notebooks.items():
                            assert after.get(f"{login}/{a}/01-embeddings.ipynb") == data, (login, a, after)


def test_a_login_map_giving_one_login_to_two_accounts_handing_it_in_takes_neither(ws, tmp_path):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "roealice_11_1_alice.zip", "alice")
    hand_in(downloads, "roealice_12_1_alice.zip", "alice", OTHER)
    table = tmp_path / "logins.csv"
    table.write_text("account,login\n11,alice\n12,alice\n")
    said = run(ws, downloads, login_map=str(table))
    assert set(said.values()) == {"refused: the login map gives alice to 2 accounts handing it in (canvas user 11, "
                                  "canvas user 12): keep one"}, said
    assert tree(ws.submitted) == {}


def test_the_command_does_not_count_a_folder_left_in_place_as_undone(ws, tmp_path, monkeypatch, capsys):
    downloads = tmp_path / "downloads"
    hand_in(downloads, "mallory_123_1_ben.zip", "ben", FORGED)
    run(ws, downloads)
    (ws.submitted / "ben" / "attention" / "timestamp.txt").write_text("2026-01-01 10:00:00")
    table = tmp_path / "logins.csv"
    table.write_text(LOGINS)
    monkeypatch.setenv("AUTOGRADER_WORKDIR", str(ws.work))
    capsys.readouterr()
    assert zips.main([str(downloads), "--login-map", str(table)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "left as it is, check it by hand" in lines[-2]
    assert lines[-1] == "0 of 1 zips taken or not needed, 1 refused", lines

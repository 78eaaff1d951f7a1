"""What Collect copies of a hand-in, entry by entry (autograder/intake/inbound.py), without real
accounts: only real folders and regular files of the hand-in's owner, never through a link, a FIFO,
another account's file or a hard link to one; nbgrader's two files at the top never; the entries cap
exactly; the folder's name, owner and feedback secret read as untrusted. Files of "another account"
are owned here by a uid with no account (chown as root; no account is made). Each test holds one of
these at its edge, both ways (docs/mutation.md); the whole path with real accounts and nbgrader's
collect is tests/test_exchange_collect.py."""

from __future__ import annotations

import os
import pwd
import secrets
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.errors import RefusedHandin as HandinRefused
from autograder.intake import inbound
from autograder.intake.inbound import Caps, copy_handin
from autograder.workspace import ROOT, Workspace

ME = os.geteuid()
CAPS = Caps(file_bytes=1000, handin_bytes=5000, entries=20)


def _free_uid() -> int:
    uid = 61000 + secrets.randbelow(3000)
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


@pytest.fixture
def handin(tmp_path) -> Path:
    src = tmp_path / "handin"
    (src / "sub").mkdir(parents=True)
    (src / "a.ipynb").write_bytes(b"a")
    (src / "sub" / "b.txt").write_bytes(b"bb")
    os.utime(src / "a.ipynb", (1_700_000_000, 1_700_000_000))
    return src


def _copied(dest: Path) -> dict[str, bytes]:
    return {p.relative_to(dest).as_posix(): p.read_bytes() for p in sorted(dest.rglob("*")) if p.is_file()}


def test_real_folders_and_files_of_the_owner_are_copied_whole(handin, tmp_path):
    dest = tmp_path / "dest"
    assert copy_handin(handin, dest, ME, CAPS) == []
    assert _copied(dest) == {"a.ipynb": b"a", "sub/b.txt": b"bb"}
    assert (dest / "a.ipynb").stat().st_mtime == 1_700_000_000


def test_a_link_a_fifo_and_anothers_files_are_refused_and_nothing_is_copied_through_them(handin, tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"secret")
    (handin / "link.ipynb").symlink_to(outside)
    (handin / "sub" / "dirlink").symlink_to(tmp_path)
    os.mkfifo(handin / "fifo")
    other = _free_uid()
    (handin / "theirs.ipynb").write_bytes(b"t")
    os.chown(handin / "theirs.ipynb", other, -1)
    (handin / "theirs-dir").mkdir()
    os.chown(handin / "theirs-dir", other, -1)
    theirs_file = tmp_path / "their-file"
    theirs_file.write_bytes(b"x")
    os.chown(theirs_file, other, -1)
    os.link(theirs_file, handin / "hard.ipynb")
    dest = tmp_path / "dest"
    refused = copy_handin(handin, dest, ME, CAPS)
    assert _copied(dest) == {"a.ipynb": b"a", "sub/b.txt": b"bb"}
    assert sorted(refused) == sorted([
        "'fifo': refused, it is a FIFO; nothing was copied through it",
        f"'hard.ipynb': refused, it is a hard link to a file of uid {other}; nothing was copied through it",
        f"'link.ipynb': refused, it is a symbolic link (to {str(outside)!a}); nothing was copied through it",
        f"'sub/dirlink': refused, it is a symbolic link (to {str(tmp_path)!a}); nothing was copied through it",
        f"'theirs-dir': refused, it belongs to uid {other}, not to the hand-in's owner; nothing was copied through it",
        f"'theirs.ipynb': refused, it belongs to uid {other}, not to the hand-in's owner; nothing was copied "
        "through it",
    ]), refused


def test_nbgraders_two_files_are_left_at_the_top_only_and_the_skip_list_is_heeded(handin, tmp_path):
    for folder in (handin, handin / "sub"):
        (folder / inbound.STAMP).write_text("2026-12-01 12:00:00")
        (folder / inbound.SECRET).write_text("0" * 128)
    (handin / ".ipynb_checkpoints").mkdir()
    (handin / ".ipynb_checkpoints" / "a.ipynb").write_bytes(b"old")
    dest = tmp_path / "dest"
    copy_handin(handin, dest, ME, CAPS, skip=lambda name, is_dir: is_dir and name.startswith("."))
    assert sorted(_copied(dest)) == sorted(["a.ipynb", f"sub/{inbound.SECRET}", f"sub/{inbound.STAMP}", "sub/b.txt"])


def test_the_entries_cap_holds_exactly(handin, tmp_path):
    assert copy_handin(handin, tmp_path / "at", ME, Caps(1000, 5000, entries=3)) == []  # a.ipynb, sub, sub/b.txt
    with pytest.raises(HandinRefused, match="more than 2 files and folders"):
        copy_handin(handin, tmp_path / "over", ME, Caps(1000, 5000, entries=2))


def test_a_file_at_the_file_cap_is_copied_and_one_past_it_is_not(handin, tmp_path):
    (handin / "big").write_bytes(b"x" * 1000)
    (handin / "bigger").write_bytes(b"x" * 1001)
    refused = copy_handin(handin, tmp_path / "dest", ME, CAPS)
    assert "big" in _copied(tmp_path / "dest") and "bigger" not in _copied(tmp_path / "dest")
    assert refused == ["'bigger': refused, it is larger than the cap of 1000 bytes per file; it was not copied"]


def test_a_handin_folder_that_is_a_link_or_anothers_is_refused_whole(handin, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(handin)
    with pytest.raises(HandinRefused, match=r"cannot be opened as a folder \(Not a directory\)"):
        copy_handin(link, tmp_path / "dest", ME, CAPS)
    other = _free_uid()
    os.chown(handin, other, -1)
    with pytest.raises(HandinRefused, match=f"now made by uid {other}"):
        copy_handin(handin, tmp_path / "dest2", ME, CAPS)


# ---- the hand-in folder itself --------------------------------------------------------------------

@pytest.mark.parametrize(("name", "result"), [
    ("alice+attention+2026-12-01 12:00:00.000000 UTC", ("alice", datetime(2026, 12, 1, 12))),
    ("alice+attention+2026-12-01 12:00:00.000000 UTC+abc", ("alice", datetime(2026, 12, 1, 12))),
    ("alice+other+2026-12-01 12:00:00 UTC", "its name is not STUDENT+ASSIGNMENT+TIME[+RANDOM]"),
    ("alice+attention", "its name is not STUDENT+ASSIGNMENT+TIME[+RANDOM]"),
    ("a+attention+2026-12-01+b+c", "its name is not STUDENT+ASSIGNMENT+TIME[+RANDOM]"),
    ("../x+attention+2026-12-01 12:00:00 UTC", "the student its name gives is refused"),
    ("alice+attention+yesterday", "the time in its name is not a date and time ('yesterday')"),
])
def test_a_folder_name_is_read_as_nbgrader_writes_it(name, result):
    got = inbound.parse_folder_name(name, "attention")
    assert got == result if isinstance(result, tuple) else str(got).startswith(result), got


def test_a_handin_folder_must_be_a_real_folder_of_its_student(tmp_path):
    root = pwd.getpwuid(ME).pw_name
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "l").symlink_to(tmp_path / "d")
    other = _free_uid()
    (tmp_path / "theirs").mkdir()
    os.chown(tmp_path / "theirs", other, -1)
    collector = _free_uid() + 1
    assert inbound.folder_problem(tmp_path / "d", root, collector) is None
    assert inbound.folder_problem(tmp_path / "theirs", root, other) is None  # made by the collecting account
    assert inbound.folder_problem(tmp_path / "f", root, collector) == "it is a regular file, not a folder"
    assert inbound.folder_problem(tmp_path / "l", root, collector) == "it is a symbolic link, not a folder"
    assert inbound.folder_problem(tmp_path / "theirs", root, collector) == (
        f"it was made by uid {other}, not by {root}: a hand-in in another student's name")
    assert inbound.folder_problem(tmp_path / "d", "no-such-login-x", collector) == (
        f"it was made by {root}, and no-such-login-x has no account here")
    assert inbound.folder_problem(tmp_path / "none", root, collector).startswith("it cannot be read")


def test_a_feedback_secret_is_kept_only_in_nbgraders_form_and_when_no_one_elses(tmp_path):
    mine = "a" * 128
    new, why = inbound.feedback_secret(tmp_path, ME, [])  # none: a new one in nbgrader's form, nothing said
    assert why is None and len(new) == 128
    (tmp_path / inbound.SECRET).write_text(mine + "\n")
    assert inbound.feedback_secret(tmp_path, ME, ["b" * 128]) == (mine, None)
    new, why = inbound.feedback_secret(tmp_path, ME, [mine])
    assert new != mine and len(new) == 128 and why == f"its {inbound.SECRET} is another student's"
    (tmp_path / inbound.SECRET).write_text("A" * 128)
    new, why = inbound.feedback_secret(tmp_path, ME, [])
    assert len(new) == 128 and why == f"its {inbound.SECRET} is not one nbgrader's submit writes"
    (tmp_path / inbound.SECRET).write_text(mine)
    os.chown(tmp_path / inbound.SECRET, _free_uid(), -1)
    new, why = inbound.feedback_secret(tmp_path, ME, [])
    assert new != mine and len(new) == 128 and "belongs to someone else" in why


# ---- times and the refusals record --------------------------------------------------------------

def test_the_observed_time_is_the_latest_change_within_the_limit(handin):
    latest = max(p.lstat().st_ctime for p in [handin, *handin.rglob("*")])
    assert inbound.observed_time(handin, 100) == datetime.fromtimestamp(latest, timezone.utc).replace(tzinfo=None)
    (handin / "link").symlink_to("/nonexistent")
    assert inbound.observed_time(handin, 100) >= inbound.observed_time(handin, 0)


def test_the_claimed_time_is_the_later_of_the_name_and_the_students_own_stamp(handin):
    named = datetime(2026, 12, 1, 12)
    assert inbound.claimed_time(handin, named, ME) == named
    (handin / inbound.STAMP).write_text("2026-12-02 12:00:00.000000 UTC")
    assert inbound.claimed_time(handin, named, ME) == datetime(2026, 12, 2, 12)
    assert inbound.claimed_time(handin, datetime(2026, 12, 3), ME) == datetime(2026, 12, 3)
    os.chown(handin / inbound.STAMP, _free_uid(), -1)  # not hers: not read
    assert inbound.claimed_time(handin, named, ME) == named


@pytest.mark.parametrize(("seconds", "span"), [(59, "0 min 59 s"), (120, "2 min 0 s"), (3599, "59 min 59 s"),
                                               (3600, "1 h 0 min"), (3720, "1 h 2 min"),
                                               (2 * 86400 + 61, "48 h 1 min")])
def test_a_claim_before_the_files_changed_says_by_how_much(seconds, span):
    observed = datetime(2026, 12, 1, 12)
    when, why = inbound.handin_time(observed - timedelta(seconds=seconds), observed, observed, 0.0)
    claimed = inbound.stamp_text(observed - timedelta(seconds=seconds))
    assert (when, why) == (observed, f"its claimed hand-in time {claimed} is {span} before the files changed last")
    assert inbound.stamp_text(observed) == "2026-12-01 12:00:00.000000 UTC"


def test_the_refusals_of_a_collect_replace_only_those_of_the_students_it_collected(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    assert inbound.recorded_refusals(ws) == []
    inbound.record_refusals(ws, "a1", "*", {"alice": ["x: refused"], "bob": ["y: refused"], "carol": []})
    inbound.record_refusals(ws, "a1", "b*", {"bob": []})
    inbound.record_refusals(ws, "a2", "", {"dan": ["z"]})
    assert inbound.recorded_refusals(ws) == ["a1: x: refused", "a2: z"]


def test_the_secrets_of_other_students_are_read_from_their_collected_hand_ins(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    assert inbound.secrets_of_others(ws, "a1", "alice") == set()
    for student, secret in (("alice", "a" * 128), ("bob", "b" * 128)):
        (ws.submitted / student / "a1").mkdir(parents=True)
        (ws.submitted / student / "a1" / inbound.SECRET).write_text(secret + "\n")
    (ws.submitted / "carol" / "a1").mkdir(parents=True)
    assert inbound.secrets_of_others(ws, "a1", "alice") == {"b" * 128}


def test_an_entry_replaced_between_its_lstat_and_its_open_is_refused_and_nothing_is_read_through_it(
        handin, tmp_path, monkeypatch):
    """The race a student could try (swap an entry for a link or another file after Collect looked
    at it), staged by making ``lstat`` report what was there before the swap."""
    (handin / "swapdir").mkdir()
    (handin / "swapdir" / "secret.txt").write_bytes(b"s")
    (handin / "linkdir").symlink_to(handin / "sub", target_is_directory=True)
    (handin / "swapfile").write_bytes(b"swapped")
    (handin / "linkfile").symlink_to(handin / "a.ipynb")
    before = {"swapdir": handin / "sub", "linkdir": handin / "sub", "swapfile": handin / "a.ipynb",
              "linkfile": handin / "a.ipynb"}
    real = os.lstat

    def lstat(path, *, dir_fd=None):
        return real(before[path]) if path in before else real(path, dir_fd=dir_fd)

    monkeypatch.setattr(inbound.os, "lstat", lstat)
    refused = copy_handin(handin, tmp_path / "dest", ME, CAPS)
    monkeypatch.undo()
    assert refused == ["'linkdir': refused, it cannot be opened as a folder (Not a directory)",
                       "'linkfile': refused, it cannot be opened (a symbolic link)",
                       "'swapdir': refused, it was replaced while read",
                       "'swapfile': refused, it was replaced while read (now a regular file); nothing was copied "
                       "through it"]
    assert _copied(tmp_path / "dest") == {"a.ipynb": b"a", "sub/b.txt": b"bb"}


def test_the_handin_cap_counts_the_earlier_chunks_of_a_large_file(handin, tmp_path):
    (handin / "zz-large").write_bytes(b"x" * (2 << 20))  # two chunks, copied last
    with pytest.raises(HandinRefused, match="more than the cap of"):
        copy_handin(handin, tmp_path / "dest", ME, Caps(file_bytes=4 << 20, handin_bytes=3 << 19, entries=20))
    assert copy_handin(handin, tmp_path / "ok", ME, Caps(file_bytes=4 << 20, handin_bytes=3 << 20, entries=20)) == []


def test_the_observed_time_reaches_into_subfolders_and_not_through_links(handin, tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"o")
    (handin / "link").symlink_to(outside)
    time.sleep(0.05)  # so the next changes are later than every ctime above (no timing is asserted)
    (handin / "sub" / "b.txt").write_bytes(b"changed")
    nested = (handin / "sub" / "b.txt").lstat().st_ctime
    assert nested > max(p.lstat().st_ctime for p in [handin, handin / "a.ipynb", handin / "sub", handin / "link"])
    assert inbound.observed_time(handin, 100) == datetime.fromtimestamp(nested, timezone.utc).replace(tzinfo=None)
    time.sleep(0.05)
    outside.write_bytes(b"later")  # a link's target changed: not the hand-in's change
    assert inbound.observed_time(handin, 100) == datetime.fromtimestamp(nested, timezone.utc).replace(tzinfo=None)

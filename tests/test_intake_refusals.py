"""`make intake` never writes through what it did not make (autograder/intake/zips.py): a
``submitted/<login>`` or ``submitted/<login>/<assignment>`` that is a symbolic link, or a file, is
refused with one line naming it, and nothing is written where the link points; a folder holding
anything but regular files is not taken for one this command wrote. These kill the mutants that
delete each refusal with the rest of the intake tests passing (docs/mutation.md)."""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.errors import RefusedInput, RefusedZip
from autograder.intake import zips
from autograder.workspace import ROOT, Workspace

NOTEBOOK = (ROOT / "notebooks" / "attention" / "01-embeddings.ipynb").read_bytes()
NB1 = "attention/01-embeddings.ipynb"


def _hand_in(folder: Path, login: str) -> Path:
    path = folder / f"{login}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in ((f"{login}/", b""), (f"{login}/attention/", b""), (f"{login}/{NB1}", NOTEBOOK)):
            info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFDIR | 0o755 if name.endswith("/") else stat.S_IFREG | 0o644) << 16
            z.writestr(info, data)
    return path


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(tmp_path / "work", ROOT)


def _intake(ws: Workspace, downloads: Path) -> str:
    done = zips.intake(downloads, zips.ZipIntake(), ws=ws)
    (line,) = done.zips
    assert done.refused == line.split(": ", 1)[1].startswith("refused")
    return line


@pytest.mark.parametrize("linked", ["alice", "alice/attention"])
def test_a_symlinked_submitted_folder_is_refused_and_nothing_is_written_through_it(ws, tmp_path, linked):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = ws.submitted / linked
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    line = _intake(ws, downloads)
    assert line == f"alice.zip: refused: submitted/{linked} is not a folder: move it away first", line
    assert _files(elsewhere) == [] and link.is_symlink()


@pytest.mark.parametrize("blocked", ["alice", "alice/attention"])
def test_a_file_where_a_submitted_folder_goes_is_refused_and_left(ws, tmp_path, blocked):
    path = ws.submitted / blocked
    path.parent.mkdir(parents=True)
    path.write_bytes(b"kept")
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    assert _intake(ws, downloads) == f"alice.zip: refused: submitted/{blocked} is not a folder: move it away first"
    assert path.read_bytes() == b"kept"


def test_a_taken_folder_with_a_link_or_a_folder_added_is_not_replaced(ws, tmp_path):
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    assert _intake(ws, downloads).startswith("alice.zip: taken:")
    target = ws.submitted / "alice" / "attention"
    for added in ("link", "folder"):
        extra = target / f"added-{added}"
        if added == "link":
            extra.symlink_to(target / "01-embeddings.ipynb")
        else:
            extra.mkdir()
        line = _intake(ws, downloads)  # the same zip again
        assert line.startswith("alice.zip: refused: submitted/alice/attention holds files this command did not"), line
        assert extra.exists() or extra.is_symlink()
        extra.unlink() if added == "link" else extra.rmdir()


# ---- the login map, the zips' names and members, the caps ---------------------------------------

@pytest.mark.parametrize("row", [",alice", "alice.zip,", "alice.zip,../bob", "alice.zip,a b"])
def test_a_login_map_row_without_an_account_or_a_plain_login_is_one_line_naming_it(tmp_path, row):
    table = tmp_path / "logins.csv"
    table.write_text(f"account,login\n12,carol\n{row}\n", encoding="utf-8")
    with pytest.raises(RefusedInput) as caught:
        zips.read_login_map(table)
    assert str(caught.value).startswith(f"login map {table}:3: needs an account and a plain login"), caught.value
    assert "\n" not in str(caught.value)


def test_only_zips_are_read_and_a_zip_in_a_folder_no_lms_makes_is_refused(ws, tmp_path):
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    (downloads / "index.html").write_text("not a zip")
    (downloads / "folder.zip").mkdir()
    _hand_in(downloads / "sub", "bob")
    done = zips.intake(downloads, zips.ZipIntake(), ws=ws)
    assert [line.split(":", 1)[0] for line in done.zips] == ["alice.zip", "sub/bob.zip"], done.zips
    assert done.zips[1] == ("sub/bob.zip: refused: not a name an LMS gives (LOGIN.zip, or Canvas's or Moodle's "
                            "download names)")


@pytest.mark.parametrize("folder", ["alice/attention/extra/", "alice/homework/"])
def test_a_folder_member_outside_login_and_assignment_is_refused(ws, tmp_path, folder):
    downloads = tmp_path / "downloads"
    path = _hand_in(downloads, "alice")
    with zipfile.ZipFile(path, "a") as z:
        info = zipfile.ZipInfo(folder, (2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFDIR | 0o755) << 16
        z.writestr(info, b"")
    assert _intake(ws, downloads) == f"alice.zip: refused: folder '{folder}' is not alice/<assignment>/"


def _stored_zip(downloads: Path, members: int) -> Path:
    """alice.zip, uncompressed, with ``members`` members (folders, then the notebook)."""
    path = downloads / "alice.zip"
    downloads.mkdir(parents=True, exist_ok=True)
    names = [*["alice/", "alice/attention/"][: members - 1], f"alice/{NB1}"]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name in names:
            info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFDIR | 0o755 if name.endswith("/") else stat.S_IFREG | 0o644) << 16
            z.writestr(info, b"" if name.endswith("/") else NOTEBOOK)
    return path


def test_the_caps_on_a_zip_hold_exactly(ws, tmp_path):
    downloads = tmp_path / "downloads"
    path = _stored_zip(downloads, 3)
    size = path.stat().st_size
    for cap, refused in ((size, False), (size - 1, True)):  # the zip's own size (stored: more than its members)
        line = zips.intake(downloads, zips.ZipIntake(max_bytes=cap), ws=ws).zips[0]
        assert line.startswith("alice.zip: refused: the zip is") is refused, (cap, line)
    for cap, refused in ((3, False), (2, True)):
        line = zips.intake(downloads, zips.ZipIntake(max_members=cap), ws=ws).zips[0]
        assert ("refused" in line) is refused, (cap, line)
    deflated = _hand_in(tmp_path / "deflated", "alice")
    with zipfile.ZipFile(deflated) as z:
        unpacked = sum(i.file_size for i in z.infolist())
    assert deflated.stat().st_size < unpacked
    for cap, refused in ((unpacked, False), (unpacked - 1, True)):  # what its members unpack to
        line = zips.intake(tmp_path / "deflated", zips.ZipIntake(max_bytes=cap), ws=ws).zips[0]
        assert ("refused" in line) is refused, (cap, line)


def test_a_taken_notebook_is_written_readable_and_not_executable(ws, tmp_path):
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    _intake(ws, downloads)
    written = ws.submitted / "alice" / NB1
    umask = os.umask(0)
    os.umask(umask)
    assert written.read_bytes() == NOTEBOOK and stat.S_IMODE(written.stat().st_mode) == 0o644 & ~umask


def test_another_accounts_folder_is_never_replaced_without_the_login_maps_word(ws, tmp_path):
    downloads = tmp_path / "downloads"
    path = _hand_in(downloads, "alice")
    _intake(ws, downloads)
    ledger = zips.Ledger(ws)
    other = zips.Named(path, "alice", "canvas user 7", (1.0,))
    with pytest.raises(RefusedZip, match=r"was taken from file alice\.zip's hand-in, this one is canvas user 7's"):
        zips.place(ws, ledger, other, "digest", "attention", {"01-embeddings.ipynb": b"{}"})
    assert (ws.submitted / "alice" / NB1).read_bytes() == NOTEBOOK


# ---- what the login map undoes ------------------------------------------------------------------

def _map(tmp_path: Path) -> zips.ZipIntake:
    table = tmp_path / "logins.csv"
    table.write_text("account,login\n", encoding="utf-8")  # names no account: every earlier folder is undone
    return zips.ZipIntake(login_map=str(table))


def test_an_undone_folder_leaves_submitted_and_its_empty_student_folder(ws, tmp_path):
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    _intake(ws, downloads)
    (tmp_path / "empty").mkdir()
    done = zips.intake(tmp_path / "empty", _map(tmp_path), ws=ws)
    assert len(done.changes) == 1 and "removed, kept in .intake/undone/alice/attention-" in done.changes[0], done
    assert not (ws.submitted / "alice").exists()


def test_a_folder_gone_by_hand_is_forgotten_once(ws, tmp_path):
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    _intake(ws, downloads)
    shutil.rmtree(ws.submitted / "alice" / "attention")
    (tmp_path / "empty").mkdir()
    done = zips.intake(tmp_path / "empty", _map(tmp_path), ws=ws)
    assert len(done.changes) == 1 and done.changes[0].endswith(
        "it had left submitted/ already, and out of the gradebook (no zip of alice's was taken in its place)"), done
    assert zips.intake(tmp_path / "empty", _map(tmp_path), ws=ws).changes == []  # the ledger forgot it


def test_a_folder_replaced_by_a_link_to_its_copy_is_not_undone(ws, tmp_path):
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    _intake(ws, downloads)
    target = ws.submitted / "alice" / "attention"
    copy = tmp_path / "copy"
    shutil.copytree(target, copy)
    shutil.rmtree(target)
    target.symlink_to(copy, target_is_directory=True)
    (tmp_path / "empty").mkdir()
    done = zips.intake(tmp_path / "empty", _map(tmp_path), ws=ws)
    assert done.left == 1 and "now holds files this command did not put there" in done.changes[0], done
    assert target.is_symlink() and _files(copy) == ["01-embeddings.ipynb"]


# ---- the command ---------------------------------------------------------------------------------

def test_the_command_says_what_it_undid_and_its_status(ws, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUTOGRADER_WORKDIR", str(ws.work))
    downloads = tmp_path / "downloads"
    _hand_in(downloads, "alice")
    assert zips.main([str(downloads)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 of 1 zips taken or not needed, 0 refused"
    (tmp_path / "empty").mkdir()
    table = tmp_path / "logins.csv"
    table.write_text("account,login\n", encoding="utf-8")
    assert zips.main([str(tmp_path / "empty"), "--login-map", str(table)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "0 of 0 zips taken or not needed, 0 refused; 1 folder taken earlier undone by the login map")
    with pytest.raises(SystemExit) as exit_:
        zips.main([str(downloads), "--max-members", "0"])
    assert exit_.value.code == 2 and capsys.readouterr().err.startswith("intake: ")

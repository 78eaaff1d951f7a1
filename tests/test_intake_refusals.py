"""`make intake` never writes through what it did not make (autograder/intake/zips.py): a
``submitted/<login>`` or ``submitted/<login>/<assignment>`` that is a symbolic link, or a file, is
refused with one line naming it, and nothing is written where the link points; a folder holding
anything but regular files is not taken for one this command wrote. These kill the mutants that
delete each refusal with the rest of the intake tests passing (docs/mutation.md)."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

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

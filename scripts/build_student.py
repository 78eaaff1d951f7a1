"""Build what a course hands out to students: ``make student``.

Writes ``_build/student/selfattn-course/`` and the same folder as one archive,
``_build/student/selfattn-course.zip``:

- ``START_HERE.md``: the students' guide, ``student/START_HERE.md`` (set-up in one command, pip only;
  how to work, check, validate and hand in), with the points of each notebook (read from the released
  notebooks' nbgrader metadata) written in at its marker line;
- ``notebooks/``: the released notebooks (``make release``), no solutions, no hidden checks;
- ``wheels/``: a wheel of the helper package ``selfattn`` alone (no grading code, no graded function:
  ``scripts/student_package.py``);
- ``requirements.txt``: pinned, for Python 3.10-3.13 (``student/requirements.txt``);
- ``install.py``, ``hand_in.py``, ``nbgrader_config.py`` (from ``student/``), and from ``autograder/``
  ``stored_outputs.py`` and ``ids.py`` (``hand_in.py`` measures a notebook as grading reads it, and
  refuses a login that grading would refuse).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import student_package

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "student"))
import hand_in  # the student's script: the bundle's list of notebooks is what it reads

from autograder.late.clock import BUNDLE_FILE

ROOT = Path(__file__).resolve().parent.parent
NAME = "selfattn-course"
COPIED = ("requirements.txt", "install.py", "hand_in.py", "nbgrader_config.py")
#: the students' guide, shipped as the bundle's START_HERE.md with the points table at its marker
START_HERE = ROOT / "student" / "START_HERE.md"
POINTS_MARKER = "<!-- the points table and the total: written here by scripts/build_student.py (make student) -->"
#: grader modules (standard library only) that hand_in.py imports, copied unchanged
GRADER_COPIED = ("intake/stored_outputs.py", "course/ids.py", "late/clock.py")


def points(path: Path) -> tuple[float, float]:
    """(automatically graded, hand-graded) points of one released notebook."""
    auto = manual = 0.0
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            if cell.cell_type == "code":
                auto += float(meta.get("points", 0))
            else:
                manual += float(meta.get("points", 0))
    return auto, manual


def title(path: Path) -> str:
    first = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]
    return first.lstrip("# ").strip()


def minutes(path: Path) -> int:
    """The time estimate the notebook states in its first cell ("Time: about N minutes")."""
    found = re.search(r"Time: about (\d+) minutes", nbformat.read(path, as_version=4).cells[0].source)
    if not found:
        raise ValueError(f"{path.name}: the first cell states no time estimate")
    return int(found.group(1))


def due_info() -> dict:
    """The due date of each assignment (``autograder/due-dates.csv``, never a student's extension)
    and the late policy in words: the bundle's ``due-dates.json``, read by ``hand_in.py``."""
    from autograder.late import due_dates, policy
    from autograder.nbgrader_ext.steps import load_config
    from autograder.workspace import from_environment

    return {"due": due_dates.bundle_data(from_environment().due_dates),  # make student: the course it names
            "policy": policy.policy_of(load_config()).describe()}


def due_text(due: dict) -> str:
    """START_HERE's lines on due dates and late work."""
    from autograder.late.clock import show

    if not due["due"]:
        return f"Due date: not set yet (your instructor announces it). Late work: {due['policy']}."
    dates = "; ".join(f"`{a}`: {show(datetime.fromisoformat(d))}" for a, d in sorted(due["due"].items()))
    return (f"Due: {dates}. Late work: {due['policy']}; an extension you were granted replaces the date. "
            "`hand_in.py` says whether handing in now is late, and by how much.")


def start_here(notebooks: list[Path], due: dict | None = None) -> str:
    """The bundle's ``START_HERE.md``: the students' guide (``student/START_HERE.md``) with the
    points of each notebook, read from ``notebooks``, where its marker line stands."""
    due = due if due is not None else due_info()
    rows, total, hours = [], 0.0, 0
    for path in notebooks:
        auto, manual = points(path)
        total += auto + manual
        hours += minutes(path)
        written = f" + {manual:g} written" if manual else ""
        rows.append(f"| `{path.parent.name}/{path.name}` | {title(path)} | {minutes(path)} min | {auto:g}{written} |")
    table = "\n".join(["| notebook | section | time | points |", "|---|---|---|---|", *rows])
    guide = START_HERE.read_text(encoding="utf-8")
    if guide.count(POINTS_MARKER) != 1:
        raise ValueError(f"{START_HERE.relative_to(ROOT)}: needs the line {POINTS_MARKER!r} exactly once")
    return guide.replace(POINTS_MARKER, f"{table}\n\nTotal: {total:g} points, about {hours / 60:.1f} hours. "
                         "Written answers are graded by hand.\n\n" + due_text(due))


def build_wheel(out: Path) -> Path:
    """A wheel of ``selfattn`` alone, without its graded functions (``scripts/student_package.py``:
    results recorded at build time stand in for them), built from a copy (no build files left in
    the repository)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        shutil.copy(ROOT / "pyproject.toml", src)
        student_package.build(src)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "-w", str(out), str(src)], check=True)
    (wheel,) = out.glob("selfattn-*.whl")
    return wheel


def build(dest: Path) -> Path:
    """Build the bundle folder under ``dest`` and its archive; return the archive's path."""
    folder = dest / NAME
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copytree(ROOT / "notebooks", folder / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for name in COPIED:
        shutil.copy(ROOT / "student" / name, folder / name)
    for name in GRADER_COPIED:
        shutil.copy(ROOT / "autograder" / name, folder / Path(name).name)
    build_wheel(folder / "wheels")
    notebooks = sorted((folder / "notebooks").glob("*/*.ipynb"))
    # the course's notebooks: hand_in.py packs these and names any other (renamed, duplicated) it finds
    listed = {p.relative_to(folder / "notebooks").as_posix(): sorted(hand_in.graded_cells(p)) for p in notebooks}
    (folder / hand_in.COURSE_LIST).write_text(json.dumps(listed, indent=1) + "\n")
    due = due_info()
    (folder / "START_HERE.md").write_text(start_here(notebooks, due))
    (folder / BUNDLE_FILE).write_text(json.dumps(due, indent=1) + "\n")
    archive = dest / f"{NAME}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(dest).as_posix())
    return archive


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "_build" / "student", help="where to build")
    a = p.parse_args(argv)
    archive = build(a.out)
    print(f"student bundle: {a.out / NAME}/ and {archive} ({archive.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build what a course hands out to students: ``make student``.

Writes ``_build/student/selfattn-course/`` and the same folder as one archive,
``_build/student/selfattn-course.zip``:

- ``START_HERE.md``: set-up in one command (pip only), how to work, check, validate and hand in,
  and the points of each notebook (read from the released notebooks' nbgrader metadata);
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
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import student_package

ROOT = Path(__file__).resolve().parent.parent
NAME = "selfattn-course"
COPIED = ("requirements.txt", "install.py", "hand_in.py", "nbgrader_config.py")
#: grader modules (standard library only) that hand_in.py imports, copied unchanged
GRADER_COPIED = ("stored_outputs.py", "ids.py")


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


def start_here(notebooks: list[Path]) -> str:
    rows, total, hours = [], 0.0, 0
    for path in notebooks:
        auto, manual = points(path)
        total += auto + manual
        hours += minutes(path)
        written = f" + {manual:g} written" if manual else ""
        rows.append(f"| `{path.parent.name}/{path.name}` | {title(path)} | {minutes(path)} min | {auto:g}{written} |")
    table = "\n".join(rows)
    return f"""# START HERE: self-attention, the exercises

Nine notebooks, one per section of the lecture. Each shows the chapter's widget and asks you to
write a few functions; checks in the notebook tell you at once whether an answer is right.

## 1. Set up (once)

You need Python 3.10 to 3.13 that can create virtual environments; nothing else, no administrator
rights once Python is there. The one prerequisite on each system:

| system | install first | then, in this folder |
|---|---|---|
| Debian, Ubuntu | `sudo apt install python3-venv` (`venv`, not there by default) | `python3 install.py` |
| Fedora | nothing (its `python3` includes `venv`) | `python3 install.py` |
| macOS | Python from python.org or `brew install python` (Apple's `python3` may be too old) | `python3 install.py` |
| Windows | Python from python.org, with *py launcher* and *pip* ticked | `py install.py` |

`install.py` creates `.venv` here and installs JupyterLab, NumPy, Matplotlib, nbgrader and the
course's helper package into it (about a minute from a warm package cache, a few minutes
otherwise). If something is missing it says so in one line and leaves nothing half-made: install
what it names and run it again. An install stopped half-way (Ctrl-C, a closed window) leaves no
`.venv` either; run it again.

## 2. Work

```bash
.venv/bin/jupyter lab notebooks/attention/
```

(On Windows: `.venv\\Scripts\\jupyter lab notebooks\\attention`.) Open the notebooks in order.
Write your code where it says `YOUR CODE HERE` and delete the `raise NotImplementedError()` line.

## 3. Check

Run the cell after each exercise. It prints a ✓ line for each passed check, or stops with one
line that names the likely mistake. The check runs your answer the way the grader will: the
answer cell on its own (plus the cells of the functions it is asked to use), with NumPy and the
standard library only. So keep helpers and imports inside the answer's cell, and do not import
`selfattn` in an answer. A ✓ means the public checks will pass when graded; more (hidden) checks
with other inputs run at grading time, so test your functions on your own examples too. The cell
`compare(...)` after an exercise draws your result beside the course's on the lecture's example.

## 4. Validate

Before handing in: *Kernel → Restart Kernel and Run All Cells*, or from this folder

```bash
.venv/bin/nbgrader validate notebooks/attention/03-softmax-attention.ipynb
```

(on Windows `.venv\\Scripts\\nbgrader validate notebooks\\attention\\03-softmax-attention.ipynb`; or the
*Validate* button in JupyterLab's toolbar).

## 5. Hand in

```bash
.venv/bin/python hand_in.py YOUR_LOGIN
```

(On Windows: `.venv\\Scripts\\python hand_in.py YOUR_LOGIN`.) It validates every notebook,
names each one that still fails with one line saying why, and writes `YOUR_LOGIN.zip`
(your notebooks as `YOUR_LOGIN/attention/<notebook>.ipynb`). Your login may hold letters, digits,
`.`, `_` and `-` only, starting with a letter or digit, as grading requires. Hand in that file.
Each exercise is graded on its own: an unfinished exercise costs only its own points.

## Points

| notebook | section | time | points |
|---|---|---|---|
{table}

Total: {total:g} points, about {hours / 60:.1f} hours. Written answers are graded by hand.
"""


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
        shutil.copy(ROOT / "autograder" / name, folder / name)
    build_wheel(folder / "wheels")
    notebooks = sorted((folder / "notebooks").glob("*/*.ipynb"))
    (folder / "START_HERE.md").write_text(start_here(notebooks))
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

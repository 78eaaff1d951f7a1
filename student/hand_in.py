"""Hand in: ``python hand_in.py YOUR_NAME`` packs your notebooks into ``YOUR_NAME.zip``.

It first validates each notebook with nbgrader (the same public checks as in the notebook), lists
what fails, and writes the archive in the layout the course's grading accepts:
``YOUR_NAME/attention/<notebook>.ipynb``. Notebooks that fail are packed too: every exercise
is graded on its own, so hand in what you have.

A notebook that grading would not read (too large even without its stored outputs, which grading
drops) gets a one-line warning first; it is packed all the same.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
try:  # beside this file in the course folder; with the grader in the course's repository
    import stored_outputs
except ImportError:
    sys.path.append(str(HERE.parent / "autograder"))
    import stored_outputs


def size_warning(path: Path) -> str | None:
    """One line if grading would not read ``path`` (a notebook); None when it would."""
    size, mib = path.stat().st_size, 1 << 20
    if size > stored_outputs.MAX_FILE_BYTES:
        return (f"WARNING {path.name} is {size / mib:.0f} MiB, over the {stored_outputs.MAX_FILE_BYTES // mib} MiB "
                "grading reads: clear its outputs (Edit > Clear Outputs of All Cells), save, and run this again")
    try:
        kept = stored_outputs.kept_size(path.read_bytes())
    except stored_outputs.TooIntricate as exc:
        return f"WARNING {path.name} will not be graded: {exc}; clear its outputs, save, and run this again"
    if kept > stored_outputs.MAX_KEPT_BYTES:
        return (f"WARNING {path.name} is {kept / mib:.1f} MiB without its outputs, over the "
                f"{stored_outputs.MAX_KEPT_BYTES // mib} MiB grading reads: it would be graded as unanswered "
                "(remove large pasted images or cells you added)")
    return None


def main(argv: list[str]) -> int:
    validate = "--no-validate" not in argv
    argv = [a for a in argv if a != "--no-validate"]
    if len(argv) != 1 or not re.fullmatch(r"[A-Za-z0-9_.-]+", argv[0]):
        sys.exit("usage: python hand_in.py [--no-validate] YOUR_NAME   (letters, digits, _ . - only: your login)")
    student = argv[0]
    nbgrader = HERE / ".venv" / ("Scripts/nbgrader.exe" if os.name == "nt" else "bin/nbgrader")
    notebooks = sorted((HERE / "notebooks").glob("*/*.ipynb"))
    archive = HERE / f"{student}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in notebooks:
            if warning := size_warning(path):
                print(warning)
            if validate and nbgrader.exists():
                run = subprocess.run([str(nbgrader), "validate", str(path)], capture_output=True, text=True,
                                     cwd=HERE)
                ok = run.returncode == 0 and "Success!" in run.stdout
                print(f"{'ok  ' if ok else 'FAIL'} {path.relative_to(HERE)}")
            z.write(path, f"{student}/{path.parent.name}/{path.name}")
    print(f"\nwrote {archive.name}: hand in this file")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

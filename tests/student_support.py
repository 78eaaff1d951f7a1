"""The course folder a student unpacks from ``make student``'s archive, for the tests of its scripts."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def unpacked_course(tmp_path_factory) -> Path:
    """Build the bundle (scripts/build_student.py) and unpack its archive; return the course folder."""
    out = tmp_path_factory.mktemp("bundle")
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_student.py"), "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    home = tmp_path_factory.mktemp("home")
    with zipfile.ZipFile(out / "selfattn-course.zip") as z:
        z.extractall(home)
    return home / "selfattn-course"

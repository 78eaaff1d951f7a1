"""The course folder a student unpacks from ``make student``'s archive, for the tests of its scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def built_bundle(tmp_path_factory) -> Path:
    """The folder ``scripts/build_student.py --out`` writes, as ``make student`` builds it: the
    course folder ``selfattn-course/`` and its archive ``selfattn-course.zip`` (the wheel inside).
    The tests share one per session (``student_bundle`` in ``tests/conftest.py``) and never change it."""
    out = tmp_path_factory.mktemp("bundle")
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_student.py"), "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return out


def unpacked_course(bundle: Path, tmp_path_factory) -> Path:
    """The archive of ``bundle`` (:func:`built_bundle`) unpacked into a new home; returns the course
    folder, the test's own to change."""
    home = tmp_path_factory.mktemp("home")
    with zipfile.ZipFile(bundle / "selfattn-course.zip") as z:
        z.extractall(home)
    return home / "selfattn-course"


def lay_out_scripts(folder: Path) -> None:
    """The bundle's scripts beside each other in ``folder``, as ``make student`` lays them out: the
    student's own (``scripts/build_student.py``'s ``COPIED`` that are scripts) and the grader's modules
    they import (its ``GRADER_COPIED``), read from that script so the two never drift."""
    import ast
    import shutil

    tree = ast.parse((ROOT / "scripts" / "build_student.py").read_text(encoding="utf-8"))
    lists = {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name) and t.id in ("COPIED", "GRADER_COPIED")}
    for name in lists["COPIED"]:
        if name.endswith(".py"):
            shutil.copy(ROOT / "student" / name, folder / name)
    for name in lists["GRADER_COPIED"]:
        shutil.copy(ROOT / "autograder" / name, folder / Path(name).name)


#: The Python a student has: the system's own (what START_HERE tells them to run install.py with).
SYSTEM_PYTHON = "/usr/bin/python3"


def installed_course(bundle: Path, tmp_path_factory) -> Path:
    """The course folder unpacked from the bundle and installed by ``install.py`` run by
    :data:`SYSTEM_PYTHON`, as START HERE says: ``.venv`` holds the zip's requirements and the student
    wheel. The tests share one per session (``installed_student_course`` in ``tests/conftest.py``)."""
    assert Path(SYSTEM_PYTHON).exists(), f"no {SYSTEM_PYTHON} on this machine"
    folder = unpacked_course(bundle, tmp_path_factory)
    run = subprocess.run([SYSTEM_PYTHON, "install.py"], cwd=folder, capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return folder


def student_kernel(course: Path, tmp_path_factory) -> tuple[str, Path]:
    """(a kernel name, the folder to put on ``JUPYTER_PATH``) for a kernel run by the installed
    course's own python, as JupyterLab in the bundle starts it."""
    python = course / ".venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    data = tmp_path_factory.mktemp("jupyter-data")
    spec = data / "kernels" / "student-bundle"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "the student bundle", "language": "python"}))
    return "student-bundle", data

"""The course folder a student unpacks from ``make student``'s archive, for the tests of its scripts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def execute_as_a_front_end(client, cell, index: int) -> None:
    """Run ``cell`` in ``client``'s kernel as JupyterLab does: the execute request names the cell
    (``metadata.cellId``), which the notebook's checks read."""
    session = client.kc.session
    make = session.msg

    def with_cell_id(msg_type, content=None, parent=None, header=None, metadata=None):
        if msg_type == "execute_request" and cell.get("id"):
            metadata = {**(metadata or {}), "cellId": cell["id"]}
        return make(msg_type, content, parent, header, metadata)

    session.msg = with_cell_id
    try:
        client.execute_cell(cell, index)
    finally:
        del session.msg


def hand_in_module(name: str):
    """``student/hand_in.py`` imported as module ``name`` (each test file its own copy)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "student" / "hand_in.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


@dataclass
class InstallAttempts:
    """A student's install of the bundle as it goes when it goes badly first, and what each step left.

    The course folder is unpacked once; ``python3 install.py`` is stopped by Ctrl-C while pip unpacks
    packages (the whole process group gets SIGINT, as in a terminal), then killed outright at the same
    point (the terminal closed), then an older install.py's broken ``.venv`` (made without pip) is put
    there, and the install is run again to the end. That last install is the one every test of the
    installed course uses (``installed_student_course`` in ``tests/conftest.py``): one pip install of
    the course for the session, its retry path asserted by ``tests/test_student_install.py``."""

    course: Path
    #: (return code, standard error) of the install stopped by SIGINT
    interrupted: tuple[int, str]
    #: what was left after the SIGINT, after the SIGKILL: (``.venv`` exists, ``.vtmp`` exists)
    left_after_interrupt: tuple[bool, bool]
    left_after_kill: tuple[bool, bool]
    #: the install run to the end over the broken ``.venv``
    retry: subprocess.CompletedProcess
    retry_seconds: float


def _as_in_a_terminal() -> None:
    """Ctrl-C at its default in the install, as a terminal gives it: a suite started in the background
    by a shell without job control (``make test &``, nohup) ignores SIGINT, and an ignored signal is
    inherited, so the install would run on through the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_as_in_a_terminal(argv: list[str], cwd: Path) -> subprocess.Popen:
    """``argv`` started in a session of its own (a signal to its group reaches its children) with
    Ctrl-C at its default whatever the suite's own disposition; its output piped, as text."""
    return subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_in_a_terminal)


def _start_install(course: Path) -> subprocess.Popen:
    return start_as_in_a_terminal([SYSTEM_PYTHON, "install.py"], course)


def _wait_for_pip_installing(course: Path, proc: subprocess.Popen, timeout: float = 600) -> None:
    """Until pip, run by install.py, has begun to unpack packages into the environment being built."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"install.py ended (exit {proc.returncode}) before pip installed anything: "
                                 f"{out[-1000:]}{err[-2000:]}")
        site = list((course / ".vtmp").glob("lib/python*/site-packages"))
        if site and len([p for p in site[0].iterdir() if not p.name.startswith(("pip", "_"))]) >= 3:
            return
        time.sleep(0.05)
    raise AssertionError(f"pip installed nothing within {timeout} s")


def _left(course: Path) -> tuple[bool, bool]:
    return (course / ".venv").exists(), (course / ".vtmp").exists()


def installed_course(bundle: Path, tmp_path_factory) -> InstallAttempts:
    """The course folder unpacked from the bundle and installed by ``install.py`` run by
    :data:`SYSTEM_PYTHON`, as START HERE says, after an interrupted, a killed and an older broken
    install (:class:`InstallAttempts`): ``.venv`` holds the zip's requirements and the student wheel.
    The tests share one per session (``student_install`` in ``tests/conftest.py``)."""
    assert Path(SYSTEM_PYTHON).exists(), f"no {SYSTEM_PYTHON} on this machine"
    folder = unpacked_course(bundle, tmp_path_factory)
    proc = _start_install(folder)
    _wait_for_pip_installing(folder, proc)
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    interrupted, after_interrupt = (proc.returncode, err), _left(folder)
    proc = _start_install(folder)
    _wait_for_pip_installing(folder, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    after_kill = _left(folder)
    if not (folder / ".venv").exists():  # else the killed install left one: the record says so
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(folder / ".venv")], check=True)
    t0 = time.monotonic()
    run = subprocess.run([SYSTEM_PYTHON, "install.py"], cwd=folder, capture_output=True, text=True, timeout=1500)
    seconds = time.monotonic() - t0
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return InstallAttempts(folder, interrupted, after_interrupt, after_kill, run, seconds)


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

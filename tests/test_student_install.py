"""install.py as a student meets it: a Python that cannot make environments, an install stopped
half-way, then a retry that works; and nothing in the bundle's scripts that only Linux has.

The Python without ``ensurepip`` is Debian's without ``python3.X-venv``, made faithfully: a copy
of the system interpreter beside links to every module of its standard library but ``ensurepip``
(Debian ships that whole package in ``python3.X-venv``), so Debian's own ``venv`` (with its patch
that prints "apt install python3.X-venv") runs as it would there.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from student_support import SYSTEM_PYTHON, start_as_in_a_terminal, unpacked_course

ROOT = Path(__file__).resolve().parent.parent
BUNDLE_SCRIPTS = ("install.py", "hand_in.py")
#: strings with a '/' that are no file paths: addresses, JupyterLab plugin ids, MIME types
NOT_PATHS = ("http", "@jupyter/", "@jupyterlab/", "text/", "image/", "application/")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"student_{name}", ROOT / "student" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def course(student_bundle, tmp_path_factory) -> Path:
    """The course folder as a student unpacks it from ``make student``'s archive."""
    return unpacked_course(student_bundle, tmp_path_factory)


@pytest.fixture(scope="module")
def python_without_venv(tmp_path_factory) -> Path:
    """The system's python3 as it is on Debian/Ubuntu without the python3-venv package."""
    assert Path(SYSTEM_PYTHON).exists(), f"no {SYSTEM_PYTHON} on this machine"
    info = subprocess.run([SYSTEM_PYTHON, "-c", "import os, sys, sysconfig; print(os.path.realpath(sys.executable)); "
                           "print(sysconfig.get_path('stdlib')); print(sysconfig.get_python_version())"],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    executable, stdlib, version = Path(info[0]), Path(info[1]), info[2]
    root = tmp_path_factory.mktemp("debian-python")
    (root / "bin").mkdir()
    lib = root / "lib" / f"python{version}"
    lib.mkdir(parents=True)
    shutil.copy2(executable, root / "bin" / executable.name)
    (root / "bin" / "python3").symlink_to(executable.name)
    for entry in stdlib.iterdir():
        if entry.name != "ensurepip":
            (lib / entry.name).symlink_to(entry)
    python = root / "bin" / "python3"
    # faithful: the module is gone, and venv itself fails as Debian's does
    probe = subprocess.run([str(python), "-c", "import sys, importlib.util; print(sys.prefix, "
                            "importlib.util.find_spec('ensurepip'))"], capture_output=True, text=True)
    assert probe.stdout.split() == [str(root), "None"], probe.stdout + probe.stderr
    plain = subprocess.run([str(python), "-m", "venv", str(root / "plain-venv")], capture_output=True, text=True)
    assert plain.returncode != 0 and "ensurepip" in plain.stdout + plain.stderr, plain.stdout + plain.stderr
    return python


def test_a_python_without_venv_support_gets_one_line_and_leaves_nothing(course, python_without_venv):
    for attempt in (1, 2):  # the retry meets the same clean state, not a half-made .venv
        run = subprocess.run([str(python_without_venv), "install.py"], cwd=course, capture_output=True, text=True)
        assert run.returncode == 1, (attempt, run.stdout, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
        assert "ensurepip" in lines[0], lines[0]
        if Path("/etc/debian_version").exists():  # the package to install, named for this very Python
            version = python_without_venv.parent.parent.glob("lib/python3.*").__next__().name
            assert f"apt install {version}-venv" in lines[0], lines[0]
        assert not (course / ".venv").exists() and not (course / ".vtmp").exists()


@pytest.mark.unit
def test_the_install_meets_ctrl_c_at_its_default_though_the_suite_ignores_it(tmp_path):
    """A suite started in the background by a shell without job control ignores SIGINT, and an
    ignored signal is inherited: the interrupted install below would then run through its Ctrl-C.
    With SIGINT ignored here, what the install's process is started with still takes it."""
    import signal

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = start_as_in_a_terminal([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) "
                                       "is signal.default_int_handler)"], tmp_path)
        out, err = proc.communicate(timeout=60)
    finally:
        signal.signal(signal.SIGINT, before)
    assert out.strip() == "True", out + err


def test_an_interrupted_install_leaves_no_venv_and_the_retry_works(student_install):
    """The session's install (``student_support.installed_course``) went through Ctrl-C while pip
    installed, a kill at the same point and an older install.py's broken ``.venv`` before it ran to
    the end: each step left nothing that claims to be ready, and the last made a working ``.venv``."""
    attempt = student_install
    course = attempt.course
    code, err = attempt.interrupted
    assert code != 0 and "Traceback" not in err, err[-2000:]
    assert "install.py:" in err and "run it again" in err, err[-2000:]
    assert attempt.left_after_interrupt == (False, False), attempt.left_after_interrupt
    # killed outright (the terminal closed): nothing can clean up, yet no .venv claims to be ready
    assert attempt.left_after_kill[0] is False, attempt.left_after_kill
    # and the broken .venv put there then was replaced, not reused
    run = attempt.retry
    assert "Ready. Start working with:" in run.stdout and ".venv" in run.stdout.splitlines()[-1], run.stdout
    assert not (course / ".vtmp").exists()
    venv_bin = course / ".venv" / "bin"
    # the launchers pip wrote while the environment was in .vtmp now name .venv's python
    for name in ("jupyter", "nbgrader", "pip"):
        first = (venv_bin / name).read_text().splitlines()[0]
        assert ".vtmp" not in first and str(course / ".venv") in first, (name, first)
    assert ".vtmp" not in (course / ".venv" / "pyvenv.cfg").read_text()
    version = subprocess.run([str(venv_bin / "nbgrader"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "nbgrader version" in version.stdout + version.stderr, version
    imports = subprocess.run([str(venv_bin / "python"), "-c", "import selfattn, jupyterlab; print('ok')"],
                             capture_output=True, text=True)
    assert imports.stdout.strip() == "ok", imports.stderr
    print(f"retry installed in {attempt.retry_seconds:.0f} s")


def test_moving_the_environment_keeps_windows_launchers_whole(tmp_path, monkeypatch):
    """A Windows console-script launcher is an .exe with the python's path and a zip appended;
    the byte-for-byte rewrite keeps its length, so the zip still opens and names the new path."""
    install = _load("install")
    built, target = tmp_path / ".vtmp", tmp_path / ".venv"
    monkeypatch.setattr(install, "scripts", lambda prefix: prefix / "Scripts")
    (built / "Scripts").mkdir(parents=True)
    payload = tmp_path / "main.zip"
    with zipfile.ZipFile(payload, "w") as z:
        z.writestr("__main__.py", "import sys\nfrom jupyter_core.command import main\nsys.exit(main())\n")
    shebang = f'#!"{built / "Scripts" / "python.exe"}"\r\n'.encode()
    exe = b"MZ" + bytes(range(256)) * 40 + shebang + payload.read_bytes()
    (built / "Scripts" / "jupyter.exe").write_bytes(exe)
    (built / "Scripts" / "activate.bat").write_text(f'set "VIRTUAL_ENV={built}"\r\n')
    (built / "pyvenv.cfg").write_text(f"home = C:\\Python311\ncommand = py -m venv {built}\n")
    install.relocate(built, target)
    assert not built.exists()
    moved = (target / "Scripts" / "jupyter.exe").read_bytes()
    assert len(moved) == len(exe) and f'#!"{target / "Scripts" / "python.exe"}"'.encode() in moved
    with zipfile.ZipFile(target / "Scripts" / "jupyter.exe") as z:
        assert "jupyter_core" in z.read("__main__.py").decode()
    assert str(target) in (target / "Scripts" / "activate.bat").read_text()
    assert ".vtmp" not in (target / "pyvenv.cfg").read_text()


def test_programs_are_named_for_each_system(monkeypatch):
    install = _load("install")
    prefix = Path("course") / ".venv"
    monkeypatch.setattr(install.os, "name", "nt")
    assert install.program(prefix, "jupyter") == prefix / "Scripts" / "jupyter.exe"
    monkeypatch.setattr(install.os, "name", "posix")
    assert install.program(prefix, "jupyter") == prefix / "bin" / "jupyter"
    for platform, hint in (("win32", "py install.py"), ("darwin", "python.org")):
        monkeypatch.setattr(install.os, "name", "nt" if platform == "win32" else "posix")
        monkeypatch.setattr(install.sys, "platform", platform)
        assert hint in install.venv_hint()


@pytest.mark.parametrize("script", BUNDLE_SCRIPTS)
def test_bundle_scripts_use_nothing_only_posix_has(script):
    """No shell, no POSIX-only module or call, no hard-coded bin/ path or '/'-joined path string."""
    source = (ROOT / "student" / script).read_text()
    tree = ast.parse(source)
    posix_only_modules = {"fcntl", "pwd", "grp", "termios", "resource", "pty", "tty", "posix"}
    posix_only_calls = {"fork", "killpg", "getuid", "geteuid", "setsid", "symlink", "chown", "mkfifo", "uname"}
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            problems += [f"imports {n}" for n in names if n.split(".")[0] in posix_only_modules]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in posix_only_calls:
            problems.append(f"calls os.{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr in ("SIGALRM", "SIGKILL", "setitimer"):
            problems.append(f"uses {node.attr}")
        if isinstance(node, ast.keyword) and node.arg == "shell":
            problems.append("runs a shell")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value \
                and " " not in node.value and node.value.count("/") >= 1 and not node.value.startswith("/") \
                and "*" not in node.value and not node.value.startswith(NOT_PATHS):
            problems.append(f"path literal {node.value!r}")
    assert not problems, problems


def test_start_here_names_the_one_prerequisite_of_each_system(course):
    start = (course / "START_HERE.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in start.splitlines() if line.startswith("| ")}
    assert "sudo apt install python3-venv" in rows["Debian, Ubuntu"] and "python3 install.py" in rows["Debian, Ubuntu"]
    assert "Fedora" in rows and "python3 install.py" in rows["Fedora"]
    assert "python.org" in rows["macOS"]
    assert "py launcher" in rows["Windows"] and "`py install.py`" in rows["Windows"]
    for windows in (r"`.venv\Scripts\jupyter lab notebooks\attention`", r".venv\Scripts\python hand_in.py",
                    r".venv\Scripts\nbgrader validate"):
        assert windows in start, windows

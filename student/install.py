"""Set up the course in one command: ``python3 install.py`` (Python 3.10-3.13, pip only, no root).

Creates ``.venv`` next to this file, installs the pinned requirements and the course's helper
package from ``wheels/``, and configures Jupyter for students: nbgrader's instructor tools
(Formgrader, Create Assignment, Courses) are switched off, and ``nbgrader validate`` shows each
check's message in full.

A new environment is built aside, in ``.vtmp`` (a name as long as ``.venv``), and moved to
``.venv`` only once everything is installed, so a failed or interrupted run never leaves a broken
``.venv``: run it again and it starts afresh. The paths that pip writes into the environment's
launchers are rewritten byte for byte when it moves (the same length keeps Windows' ``.exe``
launchers intact). An existing, working ``.venv`` is updated in place.

Runs unchanged on Linux, macOS and Windows (``py install.py``): no shell, no POSIX-only call.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE / ".venv"
#: where a new environment is built; the same length as TARGET's name (see the module's docstring)
BUILDING = HERE / ".vtmp"
INSTRUCTOR_LAB = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                  "@jupyter/nbgrader:course-list"]
INSTRUCTOR_SERVER = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]


class InstallError(Exception):
    """Setting up failed; the message says why and what to do, in one line."""


def scripts(prefix: Path) -> Path:
    """The folder of an environment's programs: ``Scripts`` on Windows, ``bin`` elsewhere."""
    return prefix / ("Scripts" if os.name == "nt" else "bin")


def program(prefix: Path, name: str) -> Path:
    """The path of program ``name`` (``python``, ``jupyter``, ...) in the environment ``prefix``."""
    return scripts(prefix) / (f"{name}.exe" if os.name == "nt" else name)


def venv_hint() -> str:
    """What to install on this system so that Python can create virtual environments."""
    version = sysconfig.get_python_version()
    if os.name == "nt":
        return "install Python from python.org (keep 'pip' ticked) and run `py install.py`"
    if sys.platform == "darwin":
        return "install Python from python.org or with Homebrew (`brew install python`)"
    if Path("/etc/debian_version").exists():
        return f"on Debian/Ubuntu run `sudo apt install python{version}-venv` (or python3-venv)"
    if Path("/etc/fedora-release").exists() or Path("/etc/redhat-release").exists():
        return "on Fedora run `sudo dnf install python3 python3-pip`"
    return f"install your system's venv/ensurepip package for Python {version}, or Python from python.org"


def check_version() -> None:
    """Fail with one line if this Python is too old for the course's packages."""
    if sys.version_info < (3, 10):  # noqa: UP036 - a student may run any python3
        raise InstallError(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]} ({sys.executable})")


def check_venv() -> None:
    """Fail with one line, before anything is created, if this Python cannot make an environment."""
    if importlib.util.find_spec("ensurepip") is None:
        raise InstallError(f"{sys.executable} cannot create virtual environments (its ensurepip module is "
                           f"missing): {venv_hint()}, then run install.py again")


#: JupyterLab settings the course's environment starts from: news and update checks off.
NO_NEWS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def configure(prefix: Path) -> None:
    """Student-side Jupyter configuration inside the environment ``prefix``."""
    etc = prefix / "etc" / "jupyter"
    (etc / "labconfig").mkdir(parents=True, exist_ok=True)
    (etc / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in INSTRUCTOR_LAB}}, indent=1) + "\n")
    (etc / "jupyter_server_config.d").mkdir(parents=True, exist_ok=True)
    # read after nbgrader's own nbgrader.json (alphabetical order), so it wins
    (etc / "jupyter_server_config.d" / "zz-student.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {name: False for name in INSTRUCTOR_SERVER}}}, indent=1) + "\n")
    (etc / "nbgrader_config.py").write_text((HERE / "nbgrader_config.py").read_text())
    # JupyterLab's own settings defaults (its app settings folder): no "Jupyter news" pop-up, no
    # check for updates (both would ask a website, in every session)
    overrides = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.d"
    overrides.mkdir(parents=True, exist_ok=True)
    (overrides / "selfattn-student.json").write_text(json.dumps(NO_NEWS, indent=1) + "\n")


def works(prefix: Path) -> bool:
    """Whether ``prefix`` holds an environment whose python runs pip (one made by a finished install)."""
    python = program(prefix, "python")
    if not python.exists():
        return False
    run = subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True)
    return run.returncode == 0


def pip_install(prefix: Path) -> None:
    """Install the pinned requirements and the course's wheel into the environment ``prefix``."""
    wheels = sorted((HERE / "wheels").glob("selfattn-*.whl"))
    if not wheels:
        raise InstallError(f"no course wheel in {HERE / 'wheels'}: unpack the whole course archive again")
    run = subprocess.run([str(program(prefix, "python")), "-m", "pip", "install", "--disable-pip-version-check",
                          "--quiet", "-r", str(HERE / "requirements.txt"), *map(str, wheels)])
    if run.returncode != 0:
        raise InstallError("pip could not install the course's packages (its message is above); "
                           "check your internet connection and run install.py again")


def create(prefix: Path) -> None:
    """A new environment with pip at ``prefix``."""
    try:
        venv.create(prefix, with_pip=True)
    except subprocess.CalledProcessError as exc:
        said = (exc.output or b"").decode(errors="replace").strip().splitlines()
        raise InstallError(f"could not create a virtual environment ({said[-1] if said else exc}): "
                           f"{venv_hint()}") from None
    except SystemExit:  # Debian's venv prints its own advice, then exits
        raise InstallError(f"could not create a virtual environment: {venv_hint()}") from None


def relocate(built: Path, target: Path) -> None:
    """Move the environment ``built`` to ``target`` (absent), rewriting the paths pip wrote into it.

    Paths are replaced byte for byte in the files of its program folder and in ``pyvenv.cfg``;
    both names have the same length, so binary launchers keep their layout.
    """
    old, new = str(built).encode(), str(target).encode()
    if len(old) != len(new):
        raise ValueError(f"{built} and {target} must have names of the same length")
    for path in [built / "pyvenv.cfg", *scripts(built).iterdir()]:
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, new))
    os.replace(built, target)  # same folder: a rename, on every system


def remove(prefix: Path) -> None:
    """Delete a partly built environment (read-only files too, as Windows leaves them)."""
    def writable_then_retry(function, path, _exc):
        os.chmod(path, 0o700)
        function(path)

    if prefix.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(prefix, onexc=writable_then_retry)  # novermin (3.12+, guarded above)
        else:
            shutil.rmtree(prefix, onerror=writable_then_retry)


def install() -> Path:
    """Make ``.venv`` work (new, or updated in place); return it."""
    check_version()
    if works(TARGET):
        print(f"updating {TARGET}")
        pip_install(TARGET)
        configure(TARGET)
        return TARGET
    check_venv()
    remove(BUILDING)  # left by an install that was killed
    print(f"creating {TARGET} with {sys.executable} (built in {BUILDING.name} first)")
    try:
        create(BUILDING)
        pip_install(BUILDING)
        configure(BUILDING)
        remove(TARGET)  # not working: made by an older install.py that failed
        relocate(BUILDING, TARGET)
    except BaseException:  # also Ctrl-C: nothing half-made stays
        remove(BUILDING)
        raise
    return TARGET


def main() -> int:
    try:
        target = install()
    except InstallError as exc:
        print(f"install.py: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("install.py: interrupted; nothing was left half-made: run it again", file=sys.stderr)
        return 130
    jupyter = program(target, "jupyter")
    print(f"\nReady. Start working with:\n    {jupyter.relative_to(HERE)} lab {Path('notebooks', 'attention')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

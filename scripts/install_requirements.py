"""Install pinned requirement files into a virtual environment, with uv where it can, else with pip.

uv (pinned in ``requirements-setup.txt``, put into the environment by pip first) installs the same pins
as pip several times faster: it links the wheels from its cache and unpacks them on every core (the
project's environment: pip 26 s, uv 5 s here). Where uv cannot (no route to PyPI, a proxy whose
certificate it does not trust, a platform without a uv wheel), pip installs them after one line saying
why. Then everything installed is byte-compiled on every core (``compileall -j 0``): where
``PYTHONDONTWRITEBYTECODE`` is set, or the environment is read-only to its users (the hub's), nothing
would write the ``.pyc`` files later. Given an environment already compiled (the hub's are built beside
the project's own), its ``.pyc`` files whose source is the same file here are copied first, and only
the rest is compiled (:func:`copy_bytecode`).

Usage: python3 scripts/install_requirements.py VENV REQUIREMENTS...
(``make setup`` and ``autograder/hub/environments.py`` run it.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP_REQUIREMENTS = ROOT / "requirements-setup.txt"


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (done.stderr or done.stdout).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"


def copy_bytecode(venv: Path, donor: Path) -> int:
    """Copy into ``venv`` each compiled file of ``donor`` (another environment of the same Python) whose
    source has the same path below ``lib/``, size and modification time in both, the two things Python
    checks a ``.pyc`` against; ``compileall`` then compiles only the rest (and would replace a copy
    whose source differed). Returns how many were copied."""
    copied = 0
    lib = donor / "lib"
    for cached in lib.glob("python3*/site-packages/**/__pycache__/*.pyc"):
        source = cached.parent.parent / f"{cached.name.split('.', 1)[0]}.py"
        mine = venv / "lib" / source.relative_to(lib)
        try:
            theirs, ours = source.stat(), mine.stat()
        except OSError:  # not in both
            continue
        if (theirs.st_size, int(theirs.st_mtime)) != (ours.st_size, int(ours.st_mtime)):
            continue
        target = mine.parent / "__pycache__" / cached.name
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(cached, target)
            copied += 1
    return copied


def install(venv: Path, requirements: list[Path], log=print, bytecode_from: Path | None = None) -> str:
    """Install ``requirements`` into ``venv`` and byte-compile it (taking the compiled files of the
    environment ``bytecode_from`` whose sources are the same, :func:`copy_bytecode`); returns the installer
    that did it (``"uv"`` or ``"pip"``). Raises ``RuntimeError`` naming what failed."""
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    files = [arg for path in requirements for arg in ("-r", str(path))]
    installer = "uv"
    got_uv = _run([*pip, "-r", str(SETUP_REQUIREMENTS)])
    uv = (_run([str(venv / "bin" / "uv"), "pip", "install", "--quiet", "--python", python, *files],
               env={**os.environ, "UV_NATIVE_TLS": "1"})  # the system's certificates, as pip uses them
          if got_uv.returncode == 0 else got_uv)
    if uv.returncode != 0:
        log(f"install_requirements: uv could not install into {venv} ({_last_line(uv)}); installing with pip")
        installer = "pip"
        done = _run([*pip, "--no-compile", *files])
        if done.returncode != 0:
            raise RuntimeError(f"pip install into {venv}: {_last_line(done)}")
    if bytecode_from is not None:
        copy_bytecode(venv, bytecode_from)
    done = _run([python, "-m", "compileall", "-q", "-j", "0", str(venv / "lib")])
    if done.returncode != 0:
        raise RuntimeError(f"byte-compiling {venv}: {_last_line(done)}")
    return installer


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python3 scripts/install_requirements.py VENV REQUIREMENTS...")
    try:
        print(f"installed with {install(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])}")
    except RuntimeError as exc:
        sys.exit(f"install_requirements: {exc}")

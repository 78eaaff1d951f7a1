"""The hub's two Pythons, built from Debian's ``/usr/bin/python3`` and world-readable.

- students': the student bundle's pins (``student/requirements.txt``), JupyterHub's
  (``requirements-hub.txt``, for ``jupyterhub-singleuser``) and the wheel of ``selfattn`` whose
  graded functions are withheld (``scripts/build_student.py``), never the repository's package;
- graders': the repository's pins (``requirements.txt``) and JupyterHub's; the course code comes
  from the course copy (``PYTHONPATH``, set by the hub's configuration).

An environment is rebuilt only when what it is made of changed (a stamp holds their digest).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.hub.release import ENV_RECORD, wheel_id
from autograder.outputs import atomic
from autograder.workspace import ROOT

SYSTEM_PYTHON = "/usr/bin/python3"
STAMP = ".selfattn-hub-env"
#: the digest of what an environment's packages are made of, without the course's own code
REQUIREMENTS_STAMP = ".selfattn-hub-env-requirements"
#: the students' environment's release: the id of the course files its selfattn wheel was built
#: from (:func:`autograder.hub.release.wheel_id`)
RELEASE = ENV_RECORD
HUB_REQUIREMENTS = ROOT / "requirements-hub.txt"
#: the installer's own pin (scripts/install_requirements.py)
SETUP_REQUIREMENTS = ROOT / "requirements-setup.txt"
#: the installer itself (how an environment is made is part of what it is made of)
INSTALLER = ROOT / "scripts" / "install_requirements.py"


def _sources(kind: str) -> list[Path]:
    if kind == "student":
        return [ROOT / "student" / "requirements.txt", HUB_REQUIREMENTS, *sorted((ROOT / "selfattn").rglob("*.py")),
                ROOT / "scripts" / "student_package.py", ROOT / "scripts" / "build_student.py", ROOT / "pyproject.toml",
                SETUP_REQUIREMENTS, INSTALLER]
    return [ROOT / "requirements.txt", HUB_REQUIREMENTS, SETUP_REQUIREMENTS, INSTALLER]


def _requirement_sources(kind: str) -> list[Path]:
    if kind == "student":
        return [ROOT / "student" / "requirements.txt", HUB_REQUIREMENTS, SETUP_REQUIREMENTS, INSTALLER]
    return _sources(kind)


def requirements_digest(kind: str) -> str:
    """What the packages of an environment of ``kind`` are made of (the students' without its
    ``selfattn`` wheel), as one hex digest: when it is unchanged, a new wheel is all a release needs."""
    h = hashlib.sha256(f"{kind} requirements\n".encode())
    for path in _requirement_sources(kind):
        h.update(path.read_bytes())
    return h.hexdigest()


def install_package(env: Path, package: Path, wheel: Path, release: str) -> None:
    """Install ``wheel`` (``selfattn``, built from the course files of release ``release``) alone into
    the folder ``package`` with the students' environment ``env``'s pip, byte-compiled and
    world-readable, recording the release; the folder is swapped in whole (a kernel starting meanwhile
    imports the old package or the new one). Nothing of ``env`` changes."""
    new, old = package.with_name(package.name + ".new"), package.with_name(package.name + ".old")
    for stale in (new, old):
        shutil.rmtree(stale, ignore_errors=True)
    package.parent.mkdir(parents=True, exist_ok=True)
    package.parent.chmod(0o755)
    _pip(env, "--no-deps", "--target", str(new), str(wheel))
    atomic.write_text(new / RELEASE, release + "\n")
    subprocess.run(["chmod", "-R", "u=rwX,go=rX", str(new)], check=True)
    if package.exists():
        package.rename(old)
    new.rename(package)
    shutil.rmtree(old, ignore_errors=True)


def _script(name: str):
    """The module ``scripts/<name>.py`` (the scripts folder is not a package)."""
    import importlib

    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    return importlib.import_module(name)


def digest(kind: str) -> str:
    """What an environment of ``kind`` is made of, as one hex digest."""
    h = hashlib.sha256(f"{kind}\n".encode())
    for path in _sources(kind):
        h.update(path.read_bytes())
    return h.hexdigest()


def _pip(env: Path, *args: str) -> None:
    done = subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"pip install into {env}: {done.stderr.strip().splitlines()[-1:]}")


def _requirements(env: Path, *files: Path, log=print) -> None:
    """``files`` installed into ``env`` as ``make setup`` installs (uv, else pip; byte-compiled, the
    compiled files of the project's own environment taken where a source is the same file)."""
    _script("install_requirements").install(env, list(files), log=log, bytecode_from=Path(sys.prefix))


def _student_wheel(out: Path) -> Path:
    return _script("build_student").build_wheel(out)


def build(env: Path, kind: str, log=print) -> bool:
    """Build the ``kind`` (``student`` or ``grader``) environment at ``env`` unless current.

    The stamp is written last: a build that failed or was cut short is made again. Returns whether
    it was built."""
    want = digest(kind)
    if (env / STAMP).exists() and (env / STAMP).read_text() == want:
        if kind == "student" and not (env / RELEASE).exists():  # built before releases were recorded
            atomic.write_text(env / RELEASE, wheel_id(ROOT) + "\n")
        return False
    log(f"building the {kind}s' environment in {env} (a few minutes)")
    shutil.rmtree(env, ignore_errors=True)
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(env)], check=True)
    if kind == "student":
        _requirements(env, ROOT / "student" / "requirements.txt", HUB_REQUIREMENTS, log=log)
        with tempfile.TemporaryDirectory() as tmp:
            _pip(env, "--no-deps", str(_student_wheel(Path(tmp))))
    else:
        _requirements(env, ROOT / "requirements.txt", HUB_REQUIREMENTS, log=log)
    subprocess.run(["chmod", "-R", "a+rX", str(env)], check=True)
    atomic.write_text(env / REQUIREMENTS_STAMP, requirements_digest(kind))
    if kind == "student":
        atomic.write_text(env / RELEASE, wheel_id(ROOT) + "\n")
    atomic.write_text(env / STAMP, want)
    return True

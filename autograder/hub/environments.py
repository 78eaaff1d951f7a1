"""The hub's two Pythons, built from Debian's ``/usr/bin/python3`` and world-readable.

- students': the student bundle's pins (``student/requirements.txt``) and JupyterHub's
  (``requirements-hub.txt``, for ``jupyterhub-singleuser``), and no course code: each course's
  students import ``selfattn`` from that course's own package (:func:`install_package`, built from
  its course copy by ``make hub`` and ``make publish``), so a change of the course rebuilds nothing here;
- graders': the repository's pins (``requirements.txt``) and JupyterHub's; the course code comes
  from the course copy (``PYTHONPATH``, set by the hub's configuration).

An environment is rebuilt only when what it is made of changed (a stamp holds their digest).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.hub.release import ENV_RECORD
from autograder.outputs import atomic
from autograder.workspace import ROOT

SYSTEM_PYTHON = "/usr/bin/python3"
STAMP = ".selfattn-hub-env"
#: the digest of what an environment's packages are made of (its requirements)
REQUIREMENTS_STAMP = ".selfattn-hub-env-requirements"
#: in a course's students' package: the id of the course files its selfattn wheel was built from
#: (:func:`autograder.hub.release.wheel_id`)
RELEASE = ENV_RECORD
HUB_REQUIREMENTS = ROOT / "requirements-hub.txt"
#: the installer's own pin (scripts/install_requirements.py)
SETUP_REQUIREMENTS = ROOT / "requirements-setup.txt"
#: the installer itself (how an environment is made is part of what it is made of)
INSTALLER = ROOT / "scripts" / "install_requirements.py"


def _sources(kind: str) -> list[Path]:
    """What an environment of ``kind`` is made of: its requirements and the installer (never the
    course's code: the students' ``selfattn`` is each course's own package)."""
    first = ROOT / "student" / "requirements.txt" if kind == "student" else ROOT / "requirements.txt"
    return [first, HUB_REQUIREMENTS, SETUP_REQUIREMENTS, INSTALLER]


def requirements_digest(kind: str) -> str:
    """What the packages of an environment of ``kind`` are made of, as one hex digest (the
    environment's requirements: when it is unchanged, a course's new package is all a release needs)."""
    h = hashlib.sha256(f"{kind} requirements\n".encode())
    for path in _sources(kind):
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


def build(env: Path, kind: str, log=print) -> bool:
    """Build the ``kind`` (``student`` or ``grader``) environment at ``env`` unless current.

    The stamp is written last: a build that failed or was cut short is made again. Returns whether
    it was built."""
    want = digest(kind)
    if (env / STAMP).exists() and (env / STAMP).read_text() == want:
        return False
    log(f"building the {kind}s' environment in {env} (a few minutes)")
    shutil.rmtree(env, ignore_errors=True)
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(env)], check=True)
    _requirements(env, *_sources(kind)[:2], log=log)
    subprocess.run(["chmod", "-R", "a+rX", str(env)], check=True)
    atomic.write_text(env / REQUIREMENTS_STAMP, requirements_digest(kind))
    atomic.write_text(env / STAMP, want)
    return True

"""scripts/install_requirements.py, which make setup and the hub's environments install with: uv where
it can, pip (after one line saying why) where it cannot; the pins installed and byte-compiled either way."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import install_requirements  # noqa: E402

#: small pins of the project's own requirements, one per test (each test installs what is not there yet)
_LINES = (ROOT / "requirements.txt").read_text().splitlines()
PINS = {name: next(line for line in _LINES if line.startswith(f"{name}==")) for name in ("six", "packaging")}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """One new environment for the file's tests (made as make setup makes it, by Debian's python3)."""
    venv = tmp_path_factory.mktemp("install") / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    return venv


def _requirements(tmp_path: Path, line: str) -> Path:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(line + "\n")
    return requirements


def _installed(venv: Path, module: str) -> tuple[str, bool]:
    """The version of ``module`` the environment imports, and whether its byte code was written."""
    done = subprocess.run([str(venv / "bin" / "python"), "-c",
                           f"import {module}; print({module}.__version__, {module}.__cached__)"],
                          capture_output=True, text=True, check=True, env={"PYTHONDONTWRITEBYTECODE": "1"})
    version, cached = done.stdout.split()
    return version, Path(cached).exists()


def test_the_pins_are_installed_by_uv_and_byte_compiled(venv, tmp_path):
    said: list[str] = []
    assert install_requirements.install(venv, [_requirements(tmp_path, PINS["six"])], log=said.append) == "uv", said
    assert said == []
    assert _installed(venv, "six") == (PINS["six"].split("==")[1], True)


def test_where_uv_cannot_pip_installs_the_same_pins_after_one_line(venv, tmp_path, monkeypatch):
    # no cache and an index nothing answers: uv cannot install (as behind a proxy it does not trust)
    monkeypatch.setenv("UV_NO_CACHE", "1")
    monkeypatch.setenv("UV_INDEX_URL", "http://127.0.0.1:9/simple/")
    monkeypatch.setenv("UV_OFFLINE", "1")
    said: list[str] = []
    pin = PINS["packaging"]
    assert install_requirements.install(venv, [_requirements(tmp_path, pin)], log=said.append) == "pip"
    assert len(said) == 1 and re.match(r"install_requirements: uv could not install into .*; installing with pip$",
                                       said[0]), said
    assert _installed(venv, "packaging") == (pin.split("==")[1], True)


def test_a_pin_nothing_can_install_is_one_error_naming_it(venv, tmp_path, monkeypatch):
    monkeypatch.setenv("UV_OFFLINE", "1")
    with pytest.raises(RuntimeError, match=r"^pip install into .*: .*no-such-package-selfattn"):
        install_requirements.install(venv, [_requirements(tmp_path, "no-such-package-selfattn==0.0.1")],
                                     log=lambda line: None)

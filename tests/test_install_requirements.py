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

#: one small pin of the project's own requirements, as a requirement file of one line
PIN = next(line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("six=="))


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(PIN + "\n")
    return venv, requirements


def _installed(venv: Path) -> tuple[str, bool]:
    """The version of six the environment imports, and whether its byte code was written."""
    done = subprocess.run([str(venv / "bin" / "python"), "-c", "import six; print(six.__version__, six.__cached__)"],
                          capture_output=True, text=True, check=True, env={"PYTHONDONTWRITEBYTECODE": "1"})
    version, cached = done.stdout.split()
    return version, Path(cached).exists()


def test_the_pins_are_installed_by_uv_and_byte_compiled(tmp_path):
    venv, requirements = _venv(tmp_path)
    said: list[str] = []
    assert install_requirements.install(venv, [requirements], log=said.append) == "uv", said
    assert said == []
    assert _installed(venv) == (PIN.split("==")[1], True)


def test_where_uv_cannot_pip_installs_the_same_pins_after_one_line(tmp_path, monkeypatch):
    venv, requirements = _venv(tmp_path)
    # no cache and an index nothing answers: uv cannot install (as behind a proxy it does not trust)
    monkeypatch.setenv("UV_NO_CACHE", "1")
    monkeypatch.setenv("UV_INDEX_URL", "http://127.0.0.1:9/simple/")
    monkeypatch.setenv("UV_OFFLINE", "1")
    said: list[str] = []
    assert install_requirements.install(venv, [requirements], log=said.append) == "pip"
    assert len(said) == 1 and re.match(r"install_requirements: uv could not install into .*; installing with pip$",
                                       said[0]), said
    assert _installed(venv) == (PIN.split("==")[1], True)


def test_a_pin_nothing_can_install_is_one_error_naming_it(tmp_path, monkeypatch):
    venv, requirements = _venv(tmp_path)
    requirements.write_text("no-such-package-selfattn==0.0.1\n")
    monkeypatch.setenv("UV_OFFLINE", "1")
    with pytest.raises(RuntimeError, match=r"^pip install into .*: .*no-such-package-selfattn"):
        install_requirements.install(venv, [requirements], log=lambda line: None)

"""scripts/install_requirements.py, which make setup and the hub's environments install with: uv where
it can, pip (after one line saying why) where it cannot; the pins installed and byte-compiled either way."""

from __future__ import annotations

import os
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



def _module(root: Path, rel: str, text: str, mtime: int) -> Path:
    path = root / "lib" / "python3.11" / "site-packages" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def test_bytecode_is_copied_only_where_python_would_take_it_as_the_sources(tmp_path):
    """A donor's .pyc is copied where the source here has its size and modification time (what
    Python checks a .pyc against), never where either differs or where there is no source here."""
    import py_compile

    donor, venv = tmp_path / "donor", tmp_path / "venv"
    ours = {"same.py": ("x = 1\n", 100), "pkg/__init__.py": ("x = 1\n", 100), "touched.py": ("x = 1\n", 200),
            "grown.py": ("x = 10\n", 100)}
    for rel in (*ours, "gone.py"):
        py_compile.compile(str(_module(donor, rel, "x = 1\n", 100)), doraise=True)
    for rel, (text, mtime) in ours.items():
        _module(venv, rel, text, mtime)
    assert install_requirements.copy_bytecode(venv, donor) == 2
    site = venv / "lib" / "python3.11" / "site-packages"
    copied = sorted(p.relative_to(site).as_posix().split(".")[0] for p in site.rglob("*.pyc"))
    assert copied == ["__pycache__/same", "pkg/__pycache__/__init__"], copied


def test_an_environment_takes_the_bytecode_of_one_with_the_same_sources(tmp_path):
    """Installed with ``bytecode_from`` (as the hub's environments are), a pin the project's environment
    also has gets that environment's .pyc byte for byte (compiled here, it would name this environment's
    path), and Python imports the module from it."""
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    pin = PINS["six"]
    assert install_requirements.install(venv, [_requirements(tmp_path, pin)], log=lambda line: None,
                                        bytecode_from=Path(sys.prefix)) == "uv"
    version, cached = subprocess.run([str(venv / "bin" / "python"), "-c", "import six; print(six.__version__, "
                                      "six.__cached__)"], capture_output=True, text=True, check=True,
                                     env={"PYTHONDONTWRITEBYTECODE": "1"}).stdout.split()
    import six

    assert version == pin.split("==")[1]
    assert Path(cached).read_bytes() == Path(six.__cached__).read_bytes(), \
        "six was compiled again: uv gave it another size or modification time than the project's copy has"

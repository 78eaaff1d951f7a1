"""The architecture page matches the code: every repository path it cites exists, every file it names
by itself is somewhere in the repository, every function it cites with ``()`` is defined, and every
dotted ``selfattn.``/``autograder.`` name resolves (generated files of the work folder aside)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
#: files and folders the page names that runs make (the work folder, the wheel's table)
GENERATED = {".grading/history/", "exports/canvas.csv", "exports/moodle.csv", "grades.csv", "grading-summary.txt",
             "report/index.html", "roster.csv", "selfattn/withheld.npz", "submitted/", "timestamp.txt"}
CODE_FOLDERS = ("autograder", "selfattn", "scripts", "student", "benchmarks", "tests")


def _cited() -> set[str]:
    return {t for t in re.findall(r"`([^`\n]+)`", PAGE.read_text(encoding="utf-8")) if "<" not in t and "..." not in t}


def _files() -> set[str]:
    return {p.name for p in ROOT.rglob("*") if ".git" not in p.parts and "node_modules" not in p.parts
            and ".venv" not in p.parts and "_build" not in p.parts}


def test_every_path_the_page_cites_exists():
    names = _files()
    missing = []
    for token in _cited():
        if token in GENERATED or not re.fullmatch(r"[\w.\-/]+\.(py|md|j2|json|csv|txt|ipynb|sh|yml|toml|html)|[\w.\-]+/"
                                                  r"[\w.\-/]*", token):
            continue
        if "/" in token.rstrip("/"):
            if not any((base / token.rstrip("/")).exists() for base in (ROOT, ROOT / "autograder")):
                missing.append(token)
        elif token.rstrip("/") not in names:
            missing.append(token)
    assert not missing, f"docs/architecture.md cites what the repository does not have: {sorted(missing)}"


def test_every_function_and_module_the_page_cites_exists():
    code = "\n".join(p.read_text(encoding="utf-8") for d in CODE_FOLDERS for p in (ROOT / d).rglob("*.py"))
    missing = []
    for token in _cited():
        if m := re.fullmatch(r"([A-Za-z_][\w.]*)\(\)", token):
            name = m.group(1).rsplit(".", 1)[-1]
            if not re.search(rf"\bdef {re.escape(name)}\b", code):
                missing.append(token)
        elif re.fullmatch(r"(selfattn|autograder)(\.\w+)+", token):
            module, _, attribute = token.rpartition(".")
            try:
                importlib.import_module(token)
            except ImportError:
                try:
                    getattr(importlib.import_module(module), attribute)
                except (ImportError, AttributeError):
                    missing.append(token)
    assert not missing, f"docs/architecture.md cites names the code does not define: {sorted(missing)}"

"""The verdict key cannot miss a change: its files are derived from the import graph of the code that
decides a verdict, less a list of exclusions that each say why; a change to any included file makes
every stored verdict stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.import_graph import module_file
from autograder.verdicts import decide as verdicts
from autograder.workspace import ROOT

NOTEBOOK = "03-softmax-attention"


def test_every_module_the_decision_imports_is_in_the_key_or_excluded_with_a_reason():
    imported = set(verdicts.imported_modules("autograder.verdicts.decide"))
    files = set(verdicts.verdict_code())
    for module in imported:
        path = module_file(module)
        assert path in files or module in verdicts.KEY_EXCLUDED, f"{module} decides verdicts but is not in the key"
    stale = [m for m in verdicts.KEY_EXCLUDED if m not in imported]
    assert not stale, f"exclusions of modules the decision no longer imports: {stale}"
    assert all(len(reason) > 10 for reason in verdicts.KEY_EXCLUDED.values())
    names = {p.name for p in files}
    # what the issue found missing from the old hand list
    assert {"command.py", "zygote.py", "warm.py", "seccomp.py", "cgroups.py", "oracle.py", "harness.py"} <= names


def _edited(path: Path, edit, monkeypatch) -> None:
    """Every read of ``path`` from now on gets ``edit(its bytes)``."""
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: edit(real(self)) if self == path else real(self))


@pytest.mark.parametrize("path", verdicts.verdict_code(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_change_to_what_any_file_of_the_key_does_changes_it(path, monkeypatch):
    before = verdicts.checks_version("attention", NOTEBOOK, ROOT)
    _edited(path, lambda data: data + b"\nCHANGED = 1\n", monkeypatch)
    assert verdicts.checks_version("attention", NOTEBOOK, ROOT) != before


@pytest.mark.parametrize("path", verdicts.verdict_code(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_comment_a_docstring_or_layout_changes_no_key(path, monkeypatch):
    """Editing what people read (comments, every docstring, blank lines) decides no verdict again."""
    import ast

    before = verdicts.checks_version("attention", NOTEBOOK, ROOT)

    def reworded(data: bytes) -> bytes:
        text = data.decode()
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        docstrings = sorted((n.body[0].lineno, n.body[0].end_lineno) for n in ast.walk(tree)
                            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
                            and isinstance(n.body[0].value.value, str))
        for first, last in reversed(docstrings):  # each docstring's text replaced, on one line as long
            indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
            lines[first - 1 : last] = [f'{indent}"""Reworded."""\n'] + ["\n"] * (last - first)
        return ("# a new comment\n\n" + "".join(lines) + "\n# another\n").encode()

    _edited(path, reworded, monkeypatch)
    assert verdicts.checks_version("attention", NOTEBOOK, ROOT) == before

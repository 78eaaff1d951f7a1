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


@pytest.mark.parametrize("path", verdicts.verdict_code(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_change_to_any_file_of_the_key_changes_it(path, monkeypatch):
    before = verdicts.checks_version("attention", NOTEBOOK, ROOT)
    real = Path.read_bytes

    def changed(self: Path) -> bytes:
        data = real(self)
        return data + b"\n# changed\n" if self == path else data

    monkeypatch.setattr(Path, "read_bytes", changed)
    assert verdicts.checks_version("attention", NOTEBOOK, ROOT) != before

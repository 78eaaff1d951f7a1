"""The course's patches and private reads of nbgrader, nbconvert and traitlets are all listed in
:mod:`autograder.nbgrader_ext.nbgrader_internals` (one module for every reliance on their internals;
``tests/test_nbgrader_internals.py`` checks each still holds). This file scans ``autograder/`` for
such uses and fails on one the module does not list, or on a listed one no longer used.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from autograder.nbgrader_ext.nbgrader_internals import RELIANCES, problem

ROOT = Path(__file__).resolve().parents[1]

#: (module, class, attribute) -> the signature the grader was written against, and who relies on it:
#: the reliances the scan below can find
CONTRACT: dict[tuple[str, str, str], tuple[str | None, str]] = {
    (r.module, r.owner, r.name): (r.signature, f"{r.where}: {r.why}") for r in RELIANCES if r.scanned}


def test_the_patches_keep_nbgrader_s_signature_reachable():
    """After the course's plugins are installed (as nbgrader_config.py does), each replacement
    still leads to nbgrader's original, with the recorded signature."""
    from nbgrader.apps.zipcollectapp import ZipCollectApp
    from nbgrader.converters import Autograde, GenerateFeedback

    from autograder.nbgrader_ext import plugins

    plugins.install()
    for cls, name in ((Autograde, "start"), (GenerateFeedback, "start"), (ZipCollectApp, "process_extracted_files"),
                      (ZipCollectApp, "_transfer_files")):
        patched = getattr(cls, name)
        assert patched is not inspect.unwrap(patched), f"{cls.__name__}.{name} is not the course's replacement"
    assert [problem(r) for r in RELIANCES if problem(r)] == []


#: the packages whose internals the grader leans on
LEANED_ON = ("nbgrader", "traitlets", "nbconvert")


def _nbgrader_names(tree: ast.Module) -> set[str]:
    return {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            and (n.module or "").split(".")[0] in LEANED_ON for a in n.names}


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return None


def leaning(tree: ast.Module) -> set[tuple[str, str, int]]:
    """(owner, attribute, line) of each use of those packages beyond their public interface that a
    module's own names do not show: a function of theirs replaced by assignment through ``import
    nbgrader.api`` (owner: the module's dotted name's last part, ``api``), and in a subclass of one
    of their classes, a private method overridden or a trait's default given (``@default("to")``)."""
    names = _nbgrader_names(tree)
    found = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            for target in n.targets:
                dotted = _dotted(target) if isinstance(target, ast.Attribute) else None
                if dotted and dotted.split(".")[0] in LEANED_ON and dotted.count(".") >= 2:
                    owner, _, attr = dotted.rpartition(".")
                    found.add((owner.rpartition(".")[2], attr, n.lineno))
        if isinstance(n, ast.ClassDef):
            bases = [b.id for b in n.bases if isinstance(b, ast.Name) and b.id in names]
            for f in (x for x in n.body if bases and isinstance(x, ast.FunctionDef)):
                if f.name.startswith("_") and not f.name.startswith("__") and not f.decorator_list:
                    found.add((bases[0], f.name, f.lineno))
                for d in f.decorator_list:
                    if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "default" \
                            and d.args and isinstance(d.args[0], ast.Constant):
                        found.add((bases[0], d.args[0].value, f.lineno))
    return found


def test_the_leaning_check_finds_a_module_patch_an_override_and_a_default():
    code = ("import nbgrader.api\nfrom nbgrader.preprocessors import GetGrades\nfrom traitlets import default\n"
            "nbgrader.api.get_alembic_version = f\n"
            "class Mine(GetGrades):\n    def _get_score(self, c, r):\n        pass\n"
            "    def preprocess(self, nb, r):\n        pass\n"
            "    @default('to')\n    def _default_to(self):\n        pass\n")
    assert leaning(ast.parse(code)) == {("api", "get_alembic_version", 4), ("GetGrades", "_get_score", 6),
                                        ("GetGrades", "to", 11)}


def test_every_patch_and_private_read_of_nbgrader_is_in_the_contract():
    """An assignment to an attribute of a class imported from nbgrader or traitlets (a patch), or a
    read of one of its private attributes, anywhere in autograder/, must be listed in CONTRACT."""
    listed = {(owner, name) for _, owner, name in CONTRACT}
    found = set()
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        if "jupyter_data" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _nbgrader_names(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in names and (
                    isinstance(n.ctx, ast.Store) or n.attr.startswith("_")):
                found.add((n.value.id, n.attr, f"{path.relative_to(ROOT)}:{n.lineno}"))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "setattr") \
                    and len(n.args) >= 2 and isinstance(n.args[0], ast.Name) and n.args[0].id in names \
                    and isinstance(n.args[1], ast.Constant):
                found.add((n.args[0].id, n.args[1].value, f"{path.relative_to(ROOT)}:{n.lineno}"))
            if isinstance(n, ast.Attribute) and n.attr == "_validate":  # a trait's private check
                found.add(("TraitType", "_validate", f"{path.relative_to(ROOT)}:{n.lineno}"))
        found |= {(owner, name, f"{path.relative_to(ROOT)}:{line}") for owner, name, line in leaning(tree)}
    unlisted = sorted(f"{where}: {owner}.{name}" for owner, name, where in found if (owner, name) not in listed)
    assert not unlisted, f"add to RELIANCES in autograder/nbgrader_ext/nbgrader_internals.py: {unlisted}"
    unused = listed - {("GenerateConfigApp", "classes")} - {(o, n) for o, n, _ in found}  # classes: of the app
    assert not unused, f"nbgrader_internals.py lists what autograder/ no longer uses: {sorted(unused)}"


def test_expected_overwrites_keep_other_changes_in_the_log():
    """The autograde log filter drops the checksum warning only for test cells with hidden tests,
    and the missing-cell warning only for compare() cells; every other change is still logged."""
    import logging

    from autograder.nbgrader_ext.plugins import ExpectedOverwrites

    expected = ExpectedOverwrites({"softmax-hidden"})

    def record(msg, *args):
        return logging.LogRecord("AutogradeApp", logging.WARNING, __file__, 1, msg, args, None)

    changed = "Attribute '%s' for cell %s has changed! (should be: %s, got: %s)"
    assert not expected.filter(record(changed, "checksum", "softmax-hidden", "a", "b"))
    assert expected.filter(record(changed, "checksum", "softmax-public", "a", "b"))  # a locked cell edited
    assert expected.filter(record(changed, "points", "softmax-hidden", 2.0, 9.0))
    assert not expected.filter(record("Cell 'compare-softmax' does not exist in the database"))
    assert expected.filter(record("Cell 'softmax' does not exist in the database"))
    assert expected.restored == 1 and expected.compare == 1 and "1 test cells" in expected.summary()

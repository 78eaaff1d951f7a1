"""What the grader takes from nbgrader, nbconvert and traitlets beyond their documented interfaces.

``autograder/nbgrader_ext/plugins.py`` replaces ``Autograde.start``, ``GenerateFeedback.start`` and ``ZipCollectApp``'s
``process_extracted_files`` and private ``_transfer_files`` (each replacement calls the original
with the same arguments) and reads ``GenerateConfigApp._instance``; ``autograder/settings.py`` calls
traitlets' private ``TraitType._validate``; ``gradebook_schema.py`` replaces
``nbgrader.api.get_alembic_version``;
``gradebook_engine.py`` replaces ``create_engine`` and ``Base.metadata.create_all``;
``feedback_html.py`` overrides nbgrader's private
``GetGrades._get_score`` and nbconvert's private ``HTMLExporter._create_environment`` and
``_preprocess``; ``csv_export.py`` gives ``CsvExportPlugin``'s ``to`` trait its default. With the
pinned versions this holds; after an upgrade that renames or re-signs one of them, this test fails
with one line naming it, rather than a run failing later. The signatures are compared without
annotations (names, kinds, defaults).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (module, class, attribute) -> the signature the grader was written against, and who relies on it
CONTRACT: dict[tuple[str, str, str], tuple[str | None, str]] = {
    ("nbgrader.converters", "Autograde", "start"): ("(self)", "plugins.py replaces it (staging first)"),
    ("nbgrader.converters", "GenerateFeedback", "start"): (
        "(self)", "plugins.py replaces it (runs in the workspace its CourseDirectory names)"),
    ("nbgrader.apps.zipcollectapp", "ZipCollectApp", "process_extracted_files"): (
        "(self)", "plugins.py replaces it (collects into submitted/)"),
    ("nbgrader.apps.zipcollectapp", "ZipCollectApp", "_transfer_files"): (
        "(self, collected_data)", "plugins.py replaces it (stages what was collected)"),
    ("nbgrader.apps.generateconfigapp", "GenerateConfigApp", "_instance"): (
        None, "plugins.py reads the running app (adds GradingSettings to its classes)"),
    ("nbgrader.apps.generateconfigapp", "GenerateConfigApp", "classes"): (
        None, "plugins.py appends GradingSettings to the running app's list of classes"),
    ("traitlets", "TraitType", "_validate"): ("(self, obj, value)", "settings.py validates flag values with it"),
    ("nbgrader", "api", "get_alembic_version"): (
        "()", "gradebook_schema.py replaces it (the schema head read once, not per Gradebook)"),
    ("nbgrader.api.Base", "metadata", "create_all"): (
        None, "gradebook_engine.py replaces its create_all (nbgrader's tables made only when one is missing)"),
    ("nbgrader", "api", "create_engine"): (
        None, "gradebook_engine.py replaces it (one SQLAlchemy engine per process and database)"),
    ("nbgrader.preprocessors", "GetGrades", "_get_score"): (
        "(self, cell, resources)", "feedback_html.py's GetGradesWithQueue overrides it"),
    ("nbconvert.exporters", "HTMLExporter", "_create_environment"): (
        "(self)", "feedback_html.py's OfflineFeedbackExporter overrides it and calls nbconvert's"),
    ("nbconvert.exporters", "HTMLExporter", "_preprocess"): (
        "(self, nb, resources)", "feedback_html.py's OfflineFeedbackExporter overrides it and calls nbconvert's"),
    ("nbgrader.plugins.export", "CsvExportPlugin", "to"): (
        None, "csv_export.py's QuotedCsvExportPlugin gives the trait its default (@default('to'))"),
}


def _bare(sig: inspect.Signature) -> str:
    """``sig`` without annotations: "(self, obj, value)"."""
    return str(sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
                           return_annotation=inspect.Signature.empty))


def _resolve(dotted: str):
    """The module ``dotted`` names, or an object in one (``nbgrader.api.Base``)."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        parent, _, attr = dotted.rpartition(".")
        if not parent:
            raise
        return getattr(_resolve(parent), attr)


def broken(module: str, owner: str, name: str, expected: str | None) -> str | None:
    """Why ``module.owner.name`` breaks the contract (one line), or None when it holds."""
    where = f"{module}.{owner}.{name}"
    try:
        home = _resolve(module)
        cls = getattr(home, owner) if hasattr(home, owner) else importlib.import_module(f"{module}.{owner}")
    except (ImportError, AttributeError) as exc:
        return f"{where}: {module}.{owner} is gone ({exc})"
    if name not in dir(cls) and name not in getattr(cls, "class_traits", dict)():
        return f"{where}: no such attribute any more"
    if expected is None:
        return None
    found = _bare(inspect.signature(inspect.unwrap(getattr(cls, name))))  # nbgrader's, under a patch of ours
    return None if found == expected else f"{where}: signature is {found}, the grader was written for {expected}"


@pytest.mark.parametrize("key", CONTRACT, ids=".".join)
def test_what_the_grader_patches_or_reads_still_exists_with_its_signature(key):
    (expected, why) = CONTRACT[key]
    problem = broken(*key, expected)
    assert problem is None, f"{problem} ({why}); see tests/test_nbgrader_contract.py"


def test_the_check_names_a_changed_or_missing_attribute():
    assert broken("traitlets", "TraitType", "_validate", "(self, value)") == (
        "traitlets.TraitType._validate: signature is (self, obj, value), the grader was written for (self, value)")
    assert "no such attribute" in broken("nbgrader.converters", "Autograde", "_gone", None)
    assert "is gone" in broken("nbgrader.converters", "NoSuchConverter", "start", "(self)")


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
    assert all(broken(*key, expected) is None for key, (expected, _) in CONTRACT.items())


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
    assert not unlisted, f"add to CONTRACT in tests/test_nbgrader_contract.py: {unlisted}"
    unused = listed - {("GenerateConfigApp", "classes")} - {(o, n) for o, n, _ in found}  # classes: of the app
    assert not unused, f"CONTRACT lists what autograder/ no longer uses: {sorted(unused)}"


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

"""The grader's errors are one tree (:mod:`autograder.errors`), one name per meaning."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from autograder import errors

ROOT = Path(__file__).resolve().parents[1]

#: Exceptions of the grader outside the tree, each a signal that never leaves its module's caller
#: (it becomes a student's note or a :class:`~autograder.errors.RefusedRequest` there).
SIGNALS = {
    "OracleMemory": "autograder/sandbox/oracle.py",  # oracle_worker turns it into a reply
    "ReplyTooLarge": "autograder/sandbox/oracle.py",  # oracle_worker turns it into a reply
    "NotANotebook": "autograder/intake/untrusted.py",  # staging turns it into an UNREADABLE note
    "TooIntricate": "autograder/intake/stored_outputs.py",  # shipped to students too: no grader import
}


def _exception_classes() -> dict[str, tuple[list[str], set[str]]]:
    """Every class of autograder/ whose bases name an exception: name -> (files defining it, base names)."""
    found: dict[str, tuple[list[str], set[str]]] = {}
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            bases = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                     if isinstance(b, ast.Name | ast.Attribute)} if isinstance(node, ast.ClassDef) else set()
            if any(b.endswith(("Error", "Exception", "Refused", "Verdict", "Account")) or b in vars(errors)
                   for b in bases):
                entry = found.setdefault(node.name, ([], set()))
                entry[0].append(str(path.relative_to(ROOT)))
                entry[1].update(bases)
    return found


def test_every_error_of_the_grader_is_in_the_one_tree():
    classes = _exception_classes()
    tree = {"GradingError"}
    while grown := {n for n, (_, bases) in classes.items() if bases & tree} - tree:
        tree |= grown
    stray = {name: files for name, (files, _) in classes.items()
             if name not in tree and SIGNALS.get(name) not in files}
    assert not stray, f"exception classes outside autograder/errors.py's tree: {stray}"


def test_one_name_per_meaning():
    classes = _exception_classes()
    assert not [n for n, (files, _) in classes.items() if len(files) > 1], "an error class is defined twice"
    assert "Refused" not in classes, "a bare `Refused`: name what is refused (RefusedFile, RefusedZip, ...)"
    for name in set(classes) & {n for n in vars(errors) if not n.startswith("_")}:
        assert classes[name][0] == ["autograder/errors.py"], f"{name} is defined outside autograder/errors.py"


@pytest.mark.parametrize("name", ["RefusedFile", "RefusedHandin", "RefusedZip", "RefusedRequest", "ForeignAccount"])
def test_refusals_are_refused_input_and_exit_2(name, capsys):
    cls = getattr(errors, name)
    assert issubclass(cls, errors.RefusedInput)

    @errors.command_line
    def main() -> None:
        raise cls("the one line")

    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "the one line\n"


def test_the_docstring_table_lists_every_kind():
    table = errors.__doc__ or ""
    for name, cls in vars(errors).items():
        if inspect.isclass(cls) and issubclass(cls, errors.GradingError) and cls.__module__ == errors.__name__:
            assert f":class:`{name}`" in table, f"{name} is missing from the table in autograder/errors.py"

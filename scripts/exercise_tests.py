"""The pytest ``-k`` expression selecting the tests that cover one exercise: ``make test-exercise FN=...``.

A test covers exercise ``FN`` when its id names the function (the checks, hidden draws, float32
answers, compare() examples, notebook/grader agreement are parametrized by it) or names a catalogue
entry whose header replaces its answer cell (``# replace: FN`` in ``tests/catalogue/``), which the
grading tests are parametrized by. An exercise without a record, or one no test names, is one line
on stderr and exit status 1.

Usage: ``python scripts/exercise_tests.py FN`` prints the expression.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "catalogue"


def catalogue_entries(function: str, catalogue: Path = CATALOGUE) -> list[str]:
    """The stems of the catalogue entries (correct and wrong) whose header replaces ``function``'s cell."""
    found = []
    for path in sorted(catalogue.rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("# "):
                break
            if re.fullmatch(rf"# replace:\s*{re.escape(function)}\s*", line):
                found.append(path.stem)
    return found


def expression(function: str) -> str:
    """``function or entry_1 or ...``: the ``-k`` expression of the tests covering ``function``."""
    return " or ".join([function, *catalogue_entries(function)])


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isidentifier():
        print("usage: make test-exercise FN=<function> (an exercise's function name, e.g. softmax)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from selfattn.exercise_checks import EXERCISES

    if argv[0] not in EXERCISES:
        print(f"no exercise {argv[0]!r}: the records define {', '.join(sorted(EXERCISES))}", file=sys.stderr)
        return 1
    print(expression(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

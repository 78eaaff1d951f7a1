"""Start a new exercise: ``python scripts/new_exercise.py NOTEBOOK FUNCTION "title"``.

Writes the places an exercise lives (``docs/contributing.md``, *Adding an exercise*):

- in ``solutions/<assignment>/NOTEBOOK.ipynb``, before the summary cell, the ``## Exercise N:``
  heading (``md-FUNCTION``), the hints cell (``hints-FUNCTION``, two nested ``<details>``) and the
  answer cell (grade id ``FUNCTION``, an nbgrader solution cell with a stub between
  ``### BEGIN SOLUTION`` and ``### END SOLUTION``), each with its nbgrader metadata;
- at the end of the records module, a commented record skeleton (reference, named mistake, public
  check) and at the end of ``autograder/hidden_checks.py`` a commented hidden-check skeleton;
- at the end of ``selfattn/compare.py``, a commented ``compare()`` example (an entry of ``EXAMPLES``
  on the lecture's input, as every other exercise's), from which ``scripts/sync_notebooks.py``
  writes the notebook's ``compare(FUNCTION)`` cell after the exercise's checks.

Then fill in the heading's paragraph, the hints, the solution and the skeletons (uncomment them),
and run ``scripts/sync_notebooks.py`` and ``make release``: ``scripts/validate_exercises.py`` names
each piece still missing in one line. An unknown notebook, a function that is not an identifier or
that the notebook or the records already have is refused in one line, and nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
RECORDS = Path("selfattn/checks/exercises.py")
HIDDEN_CHECKS = Path("autograder/hidden_checks.py")
EXAMPLES = Path("selfattn/compare.py")
#: the line that opens each skeleton (the test that fills them in looks for it)
MARK = "# New exercise {fn} (scripts/new_exercise.py): fill in, then uncomment."


def metadata(grade_id: str, *, solution: bool = False) -> dict:
    """nbgrader's metadata of a heading, hints (locked, ungraded) or answer cell (``solution``)."""
    return {"nbgrader": {"grade": False, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
                         "solution": solution, "task": False}}


def cells(fn: str, title: str) -> list[nbformat.NotebookNode]:
    """The heading, hints and answer cells of exercise ``fn`` (numbered 1: the sync renumbers)."""
    heading = f"## Exercise 1: {title}\n\nWrite `{fn}(X)`: say in one sentence what it returns."
    hints = (f"<details><summary>Stuck? Hint 1 for <code>{fn}</code></summary>\n\nThe first hint.\n\n"
             "<details><summary>Still stuck? Hint 2</summary>\n\nThe second hint.\n\n</details>\n</details>")
    answer = (f'def {fn}(X):\n    """What {fn} returns, with shapes: (T, d) -> (T,)."""\n'
              "    ### BEGIN SOLUTION\n    raise NotImplementedError\n    ### END SOLUTION")
    return [nbformat.v4.new_markdown_cell(heading, metadata=metadata(f"md-{fn}")),
            nbformat.v4.new_markdown_cell(hints, metadata=metadata(f"hints-{fn}")),
            nbformat.v4.new_code_cell(answer, metadata=metadata(fn, solution=True))]


def record_skeleton(fn: str) -> str:
    """The commented record of ``fn`` for the records module."""
    name = fn.upper()
    return "\n".join(["", "", MARK.format(fn=fn),
                      "# from .. import MODULE  # noqa: E402 - the module of the package holding the reference",
                      "#",
                      f'# {name} = Exercise("{fn}", MODULE.{fn}, mistakes=[',
                      '#     Mistake(lambda X: WRONG, "what is wrong: what to do instead", id="short-stable-id"),',
                      "# ])",
                      f'# {name}.check("small", "what the check tries", lambda rng: [Case((rand(rng, 3, 4),))])',
                      f"# EXERCISES[{name}.function] = {name}", ""])


def hidden_skeleton(fn: str) -> str:
    """The commented hidden check of ``fn`` for ``autograder/hidden_checks.py``."""
    return "\n".join(["", "", MARK.format(fn=fn),
                      "# from selfattn.checks.exercises import EXERCISES  # noqa: E402",
                      f'# EXERCISES["{fn}"].hidden("random", "what the hidden check tries",',
                      "#     lambda rng: [Case((rand(rng, int(rng.integers(2, 5)), 4),)) for _ in range(2)])", ""])


def example_skeleton(fn: str) -> str:
    """The commented ``compare()`` example of ``fn`` for ``selfattn/compare.py`` (its ``EXAMPLES``),
    ready for the answer cell's signature: one (T, d) matrix, the lecture's sentence."""
    return "\n".join(["", "", MARK.format(fn=fn),
                      "# from . import MODULE  # noqa: E402 - the module of the package holding the reference",
                      "#",
                      "# # a 2-D result: kind=\"matrix\" with rows, cols, row_name and col_name (see the entries",
                      "# # above); more calls: one Case each, kind=\"table\" with a row label each",
                      f'# EXAMPLES["{fn}"] = Example(',
                      f"#     \"{fn} of the embeddings of 'the cat was hungry' (d = 4)\", MODULE.{fn},",
                      "#     lambda: [Case((_hungry_x(),))], kind=\"table\", cols=_TOK)", ""])


def scaffold(root: Path, notebook: str, fn: str, title: str) -> list[Path]:
    """Write exercise ``fn`` into the course at ``root``; the files written. Raises ``ValueError``
    (one line) for an unknown notebook or a function that is taken or not a name."""
    found = sorted((root / "solutions").glob(f"*/{notebook}.ipynb"))
    if len(found) != 1:
        raise ValueError(f"no source notebook {notebook!r} in solutions/ (one of: "
                         f"{', '.join(sorted(p.stem for p in (root / 'solutions').glob('*/*.ipynb')))})")
    if not fn.isidentifier() or not title.strip():
        raise ValueError(f"FUNCTION must be a Python name and the title not empty, not {fn!r}, {title!r}")
    path = found[0]
    nb = nbformat.read(path, as_version=4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    records, hidden = root / RECORDS, root / HIDDEN_CHECKS
    if fn in ids or f'Exercise("{fn}"' in records.read_text(encoding="utf-8"):
        raise ValueError(f"exercise {fn} exists already ({path.relative_to(root)} or {RECORDS})")
    at = ids.index("summary") if "summary" in ids else len(nb.cells)
    nb.cells[at:at] = cells(fn, title)
    nbformat.write(nb, path)
    examples = root / EXAMPLES
    for target, text in ((records, record_skeleton(fn)), (hidden, hidden_skeleton(fn)),
                         (examples, example_skeleton(fn))):
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text)
    return [path, records, hidden, examples]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print('usage: python scripts/new_exercise.py NOTEBOOK FUNCTION "title"  (e.g. 08-cost row_sums '
              '"row sums")', file=sys.stderr)
        return 2
    try:
        written = scaffold(ROOT, *argv)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    print("wrote " + ", ".join(str(p.relative_to(ROOT)) for p in written)
          + "; fill them in, then run scripts/sync_notebooks.py and make release")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

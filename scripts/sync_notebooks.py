"""Keep the parts of the instructor notebooks that are derived from other records in step.

Run after editing ``_config.yml``, the checks or the points, then ``make release``:

- the link to the chapter in the first cell points at the published site
  (``html: baseurl:`` of ``_config.yml`` + ``book/<chapter>.html``);
- the first line of each hidden-check cell says what those checks try (their descriptions);
- the last cell prints the notebook's summary (:func:`selfattn.checks.notebook.summary`, imported
  from ``selfattn.checking``), with the points and public checks of each exercise read from the
  notebook itself.

``tests/test_release.py`` fails when a notebook is out of step.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import autograder.hidden_checks  # noqa: E402, F401 - registers the hidden checks
import selfattn.checks.exercises  # noqa: E402, F401 - registers the public checks
from autograder.spec import _check_calls, _hidden_region  # noqa: E402
from selfattn.checks.record import REGISTRY  # noqa: E402
from selfattn.compare import EXAMPLES  # noqa: E402

LINK = re.compile(r"\]\((?:\.\./\.\./_build/html/|https?://[^)\s]*?/)(book/[\w.-]+\.html)\)"
                  r"(?: \(build the site with `make book`\))?")
SUMMARY_ID = "summary"

#: The exercise each notebook's comparison widget shows (selfattn.compare.EXAMPLES has its input).
COMPARED = {
    "01-embeddings.ipynb": "embed",
    "02-queries-keys-values.ipynb": "shape_answers",
    "03-softmax-attention.ipynb": "attention",
    "04-scaling.ipynb": "score_stds",
    "05-saturation.ipynb": "softmax_jacobian",
    "06-equivariance.ipynb": "permutation_matrix",
    "07-masking.ipynb": "causal_mask",
    "08-cost.ipynb": "attention_flops",
    "09-problem-20.ipynb": "lookup_table_weights",
}


def site_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return str(config["html"]["baseurl"]).rstrip("/") + "/"


def hidden_line(function: str, check_ids: list[str]) -> str:
    what = "; ".join(REGISTRY[cid].description for cid in check_ids)
    return f"# Hidden checks of {function}, run when the notebook is graded: {what}."


def summary_source(nb) -> str:
    exercises: dict[str, list] = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            hidden = {cid for _, cid in _check_calls(_hidden_region(cell.source), "")}
            for fn, cid in _check_calls(cell.source, ""):
                entry = exercises.setdefault(fn, [0.0, []])
                if cid not in hidden:
                    entry[1].append(cid)
            fns = {fn for fn, _ in _check_calls(cell.source, "")}
            for fn in fns:
                exercises[fn][0] += float(meta.get("points", 0)) / len(fns)
    body = ",\n".join(f"    {fn!r}: ({pts:g}, {ids!r})" for fn, (pts, ids) in exercises.items())
    return ("# Summary: where each exercise stands (run this cell any time; it never stops on an unwritten one).\n"
            "from selfattn.checking import summary\n\n"
            f"summary(globals(), {{\n{body},\n}})")


def compare_cell(function: str):
    """An unlocked, ungraded cell showing the student's ``function`` beside the package's own."""
    # an answer shown only through what it does (Problem 20) has no "course's own" to show
    beside = ("the lookup the exercise asks for, through attention" if EXAMPLES[function].view is not None
              else "the course's own on the lecture's example")
    cell = nbformat.v4.new_code_cell(
        f"# Your {function} beside {beside} (never stops on a mistake).\n"
        f"from selfattn.compare import compare\n\ncompare({function})",
        metadata={"nbgrader": {"grade": False, "grade_id": f"compare-{function}", "locked": False,
                               "schema_version": 3, "solution": False, "task": False}})
    cell["id"] = f"compare-{function}"  # a fixed id: running this again changes nothing
    return cell


def insert_compare(nb, function: str) -> None:
    """Put the comparison cell right after the last graded cell of ``function``'s checks."""
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("compare-")]
    last = max(i for i, c in enumerate(nb.cells)
               if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(f"{function}-"))
    nb.cells.insert(last + 1, compare_cell(function))


def sync(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    base = site_url()
    nb.cells[0].source = LINK.sub(lambda m: f"]({base}{m.group(1)})", nb.cells[0].source)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code" and "BEGIN HIDDEN TESTS" in cell.source:
            calls = _check_calls(_hidden_region(cell.source), path.name)
            lines = cell.source.splitlines()
            if lines[0].startswith("# Hidden checks"):
                lines[0] = hidden_line(calls[0][0], [cid for _, cid in calls])
            cell.source = "\n".join(lines)
    if path.name in COMPARED:
        insert_compare(nb, COMPARED[path.name])
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != SUMMARY_ID]
    nb.cells.append(nbformat.v4.new_code_cell(summary_source(nb), metadata={"nbgrader": {
        "grade": False, "grade_id": SUMMARY_ID, "locked": True, "schema_version": 3, "solution": False,
        "task": False}}))
    nb.cells[-1]["id"] = SUMMARY_ID  # a fixed id: running this again changes nothing
    after = nbformat.writes(nb)
    if after != before:
        nbformat.write(nb, path)
    return after != before


def main() -> int:
    changed = [p.name for p in sorted((ROOT / "solutions").glob("*/*.ipynb")) if sync(p)]
    print(f"updated {len(changed)} notebooks" + (f": {', '.join(changed)}; now run `make release`" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A ✓ in the notebook predicts the grader's public verdict, answer by answer.

Every answer of the catalogues (correct, wrong) and of ``tests/agreement`` (answers that work in a
notebook but not when graded: a helper in another cell, an import of the course package, ...)
goes through both sides: the public test cells executed in a real kernel, as the student runs
them, and the grader's own verdict (sandbox and all). They must agree on every public test cell.

An agreement file may hold several cells separated by a line ``# --- cell ---``: the last one is
the answer cell, the ones before it are extra cells the student added above it. Cells after a line
``# --- cell below ---`` are added below the answer cell (the answer cell is then the part before).

The answer runs in the answer cell itself (its id), added cells in new cells, and the kernel is told
which cell runs (``metadata.cellId``), as JupyterLab, Notebook 7 and VS Code tell it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest
from grading_support import ROOT, SOLUTIONS, Entry, read_entry
from nbclient import NotebookClient

TESTS = Path(__file__).resolve().parent
SEPARATOR = "# --- cell ---"
BELOW = "# --- cell below ---"
ENTRIES = [read_entry(p) for folder in ("catalogue/correct", "catalogue/wrong", "agreement")
           for p in sorted((TESTS / folder).glob("*.py"))]
ENTRIES = [e for e in ENTRIES if e.kind == "cell"]


def _without_header(text: str) -> str:
    """``text`` without the entry's header lines (so that a cell magic can be a cell's first line)."""
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("# ") and ":" in lines[0]:
        lines.pop(0)
    return "".join(lines)


def _cells_of(entry: Entry) -> list[str]:
    text = _without_header(entry.path.read_text().split(BELOW)[0])
    return [part.strip("\n") + "\n" for part in text.split(SEPARATOR)]


def _cells_below(entry: Entry) -> list[str]:
    return [part.strip("\n") + "\n" for part in entry.path.read_text().split(BELOW)[1:]]


def _execute(client: NotebookClient, cell, index: int) -> None:
    """Run ``cell`` as a front end does: the execute request names the cell (``metadata.cellId``)."""
    session = client.kc.session
    make = session.msg

    def with_cell_id(msg_type, content=None, parent=None, header=None, metadata=None):
        if msg_type == "execute_request" and cell.get("id"):
            metadata = {**(metadata or {}), "cellId": cell["id"]}
        return make(msg_type, content, parent, header, metadata)

    session.msg = with_cell_id
    try:
        client.execute_cell(cell, index)
    finally:
        del session.msg


def _released(source: str) -> str:
    """A test cell as released (nbgrader drops its hidden region)."""
    return re.sub(r"(?ms)^[^\n]*BEGIN HIDDEN TESTS.*?END HIDDEN TESTS[^\n]*\n?", "", source)


def _public_cells(nb) -> dict[str, int]:
    """Test cells that check something as released: the public ones, and a public one holding a
    hidden region besides (an answer that is a value, whose hidden check shares its cell)."""
    return {c.metadata["nbgrader"]["grade_id"]: i for i, c in enumerate(nb.cells)
            if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
            and "check(" in _released(c.source)}


def _notebook_side(notebook: str, entries: list[Entry]) -> dict[str, dict[str, bool]]:
    """Student's view: run each answer and then every public test cell in one live kernel."""
    nb = nbformat.read(SOLUTIONS / f"{notebook}.ipynb", as_version=4)
    public = _public_cells(nb)
    answers = {c.metadata["nbgrader"]["grade_id"]: i for i, c in enumerate(nb.cells)
               if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(SOLUTIONS)}})
    results: dict[str, dict[str, bool]] = {}
    nb.cells.append(nbformat.v4.new_code_cell(""))
    scratch = len(nb.cells) - 1  # nbclient stores each executed cell at its index: new cells go here
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells[:scratch]):  # set-up and reference answers, no widgets or hidden checks
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and not meta.get("grade") and "demos." not in cell.source:
                _execute(client, cell, i)
        for entry in entries:
            *above, answer = _cells_of(entry)
            for source in above:
                _execute(client, nbformat.v4.new_code_cell(source), scratch)
            at = answers[entry.replace]
            reference = copy.deepcopy(nb.cells[at])  # nbclient keeps what last ran at an index there
            _execute(client, nbformat.v4.new_code_cell(answer, id=reference.get("id")), at)
            for source in _cells_below(entry):
                _execute(client, nbformat.v4.new_code_cell(source), scratch)
            verdicts = {}
            for gid, i in public.items():
                cell = nbformat.v4.new_code_cell(_released(nb.cells[i].source))
                _execute(client, cell, scratch)
                verdicts[gid] = not any(o.output_type == "error" or o.get("name") == "stderr" for o in cell.outputs)
                if not verdicts[gid] and entry.message and gid == f"{entry.replace}-public":
                    verdicts["message"] = any(entry.message in o.get("evalue", "") for o in cell.outputs)
            results[entry.path.stem] = verdicts
            _execute(client, reference, at)  # back to the reference
            nb.cells[at] = reference
    return results


def _submission(entry: Entry) -> str:
    nb = json.loads((SOLUTIONS / f"{entry.notebook}.ipynb").read_text())
    *extra, answer = _cells_of(entry)
    at = next(i for i, c in enumerate(nb["cells"])
              if c["metadata"].get("nbgrader", {}).get("grade_id") == entry.replace)
    nb["cells"][at]["source"] = answer
    for k, source in enumerate(_cells_below(entry)):
        nb["cells"].insert(at + 1 + k, {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                                        "execution_count": None})
    for k, source in enumerate(extra):
        nb["cells"].insert(at + k, {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                                    "execution_count": None})
    return json.dumps(nb)


GRADE_ALL = """
import json, sys
from autograder.grade import grade_one
from autograder.notes import notes_of
for student, notebook in json.load(sys.stdin):
    v = grade_one(student, "attention", notebook)
    print(json.dumps([student, {g: c["passed"] for g, c in v["cells"].items()}, notes_of(v)]))
"""


def _grader_side(work: Path, entries: list[Entry]) -> dict[str, dict[str, bool]]:
    jobs = []
    for entry in entries:
        folder = work / "submitted" / entry.path.stem / "attention"
        folder.mkdir(parents=True)
        (folder / f"{entry.notebook}.ipynb").write_text(_submission(entry))
        jobs.append([entry.path.stem, entry.notebook])
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    run = subprocess.run([sys.executable, "-c", GRADE_ALL], input=json.dumps(jobs), cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    graded = [json.loads(line) for line in run.stdout.splitlines()]
    return {student: cells for student, cells, _ in graded} | {f"{s}/notes": n for s, _, n in graded}


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    by_notebook = defaultdict(list)
    for entry in ENTRIES:
        by_notebook[entry.notebook].append(entry)
    notebook = {}
    for nb, entries in sorted(by_notebook.items()):
        notebook.update(_notebook_side(nb, entries))
    grader = _grader_side(tmp_path_factory.mktemp("agreement"), ENTRIES)
    return notebook, grader


def test_a_tick_in_the_notebook_predicts_the_graders_public_verdict(both_sides):
    notebook, grader = both_sides
    compared = disagreements = 0
    problems = []
    for entry in ENTRIES:
        seen, graded = notebook[entry.path.stem], grader[entry.path.stem]
        for gid, passed in seen.items():
            if gid == "message":
                continue
            compared += 1
            if graded.get(gid) != passed:
                disagreements += 1
                problems.append(f"{entry.path.name}: {gid}: notebook {'✓' if passed else '✗'}, grader "
                                f"{'✓' if graded.get(gid) else '✗'}")
    print(f"\n{len(ENTRIES)} answers, {compared} public test cells compared, {compared - disagreements} agree")
    assert compared >= 2 * len(ENTRIES) - 20 and not problems, "\n".join(problems)


def test_the_notebook_names_the_mistake_and_the_verdict_is_the_expected_one(both_sides):
    notebook, grader = both_sides
    problems = []
    for entry in ENTRIES:
        seen = notebook[entry.path.stem]
        for fn in entry.fails:
            if seen.get(f"{fn}-public", True) and grader[entry.path.stem].get(f"{fn}-hidden", True):
                problems.append(f"{entry.path.name}: {fn} should fail")
        for fn in entry.full:
            if not seen.get(f"{fn}-public", False):
                problems.append(f"{entry.path.name}: {fn} should pass its public checks")
            if not all(passed for gid, passed in grader[entry.path.stem].items() if gid.startswith(f"{fn}-")):
                problems.append(f"{entry.path.name}: {fn} should keep all its points")
        if entry.full and entry.zero:  # one mistake, one deduction: the feedback names the function to fix
            notes = " ".join(grader[f"{entry.path.stem}/notes"])
            if f"`{entry.full[0]}` is right, but it calls your `{entry.zero[0]}`" not in notes:
                problems.append(f"{entry.path.name}: no blame note in {notes!r}")
        if entry.message and "message" in seen and not seen["message"]:
            problems.append(f"{entry.path.name}: the notebook does not say {entry.message!r}")
    assert not problems, "\n".join(problems)


def test_an_answer_that_passes_its_checks_does_not_break_the_notebooks_own_cells():
    """Answers may return array-likes (a list of rows): the checks accept them, so must the locked
    cells that use them (Restart & Run All must not stop after a ✓)."""
    entry = read_entry(TESTS / "agreement" / "permutation_matrix_returns_a_list.py")
    nb = nbformat.read(ROOT / "notebooks" / "attention" / f"{entry.notebook}.ipynb", as_version=4)
    namespace: dict = {"np": __import__("numpy")}
    exec(_cells_of(entry)[-1], namespace)  # trusted test code
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == entry.replace)
    used = [c for c in nb.cells[at + 1:] if c.cell_type == "code" and entry.replace in c.source
            and c.metadata.get("nbgrader", {}).get("locked") and not c.metadata["nbgrader"].get("grade")
            and "check" not in c.source and "summary" not in c.source]
    assert used, "no locked cell uses the answer"
    for cell in used:
        exec(cell.source, namespace)


def test_an_answer_cell_never_run_is_judged_as_saved(tmp_path):
    """A student who writes the function in a new cell and never runs the answer cell (the stub)
    gets what the grader gives, the saved answer cell's verdict, and is told where answers go."""
    import shutil

    shutil.copy(ROOT / "notebooks" / "attention" / "03-softmax-attention.ipynb", tmp_path)
    client = NotebookClient(nbformat.v4.new_notebook(), timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    cells = ["import numpy as np\nfrom selfattn.checking import check\nimport selfattn.exercise_checks\n",
             "def softmax(S, axis=-1):\n    e = np.exp(S - S.max(axis=axis, keepdims=True))\n"
             "    return e / e.sum(axis=axis, keepdims=True)\n",
             'check(softmax, "softmax/rows-sum-to-one")\n']
    with client.setup_kernel():
        for k, source in enumerate(cells):
            cell = nbformat.v4.new_code_cell(source)
            client.nb.cells.append(cell)
            _execute(client, cell, k)
    errors = [o.get("evalue", "") for o in cell.outputs if o.output_type == "error"]
    assert errors and "your answer must be in the cell marked YOUR CODE HERE" in errors[0], cell.outputs
    assert "not written yet" in errors[0], errors[0]


def test_a_run_of_the_saved_notebook_judges_its_answer_cell(tmp_path):
    """nbgrader validate (and hand_in.py) run the saved notebook in a kernel that is told no cell
    ids: an answer written in a cell added below the stub fails there too, as when graded."""
    nb = nbformat.read(ROOT / "notebooks" / "attention" / "03-softmax-attention.ipynb", as_version=4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    at, public = ids.index("softmax"), ids.index("softmax-public")
    below = nbformat.v4.new_code_cell("def softmax(S, axis=-1):\n    e = np.exp(S - S.max(axis=axis, keepdims=True))\n"
                                      "    return e / e.sum(axis=axis, keepdims=True)")
    nb.cells = [*nb.cells[:at + 1], below, *nb.cells[at + 1:public + 2]]
    nbformat.write(nb, tmp_path / "03-softmax-attention.ipynb")
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[public + 1].outputs
    assert any("your answer must be in the cell marked YOUR CODE HERE" in o.get("evalue", "") for o in outputs), outputs

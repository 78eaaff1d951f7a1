"""A ✓ in the notebook predicts the grader's public verdict, answer by answer, on the package
students actually install.

Every answer of the catalogues (correct, wrong) and of ``tests/agreement`` (answers that work in a
notebook but not when graded: a helper in another cell, an import of the course package, a name
only a kernel has, ...) goes through both sides: the public test cells of the *released* notebook
executed in a kernel of the installed student bundle (``make student``'s zip, installed by
``install.py`` run by ``/usr/bin/python3``: its requirements and the wheel that withholds every
graded function), as the student runs them, and the grader's own verdict (sandbox and all). They
must agree on every public test cell. One state is the notebook's own: a function failing while a
function it calls fails its public checks is told to fix that one first (the notebook runs none of
the course's functions); the grader then judged it with the course's, and says so in a note.

An agreement file may hold several cells separated by a line ``# --- cell ---``: the last one is
the answer cell, the ones before it are extra cells the student added above it. Cells after a line
``# --- cell below ---`` are added below the answer cell (the answer cell is then the part before).
A section after a line ``# --- answer of <function> ---`` (at the end of the file) is the student's
answer cell of that other function (two answers of one student: a wrong attention calling a wrong
softmax).

A function failing while a function it calls fails is judged with the course's version of that
function, in the notebook as when graded: ✓ with a note, or ✗ naming its own mistake; where the
installed bundle cannot (the course's function answers only the inputs a right function gives it),
the notebook gives no verdict ("? attention can't be judged until your softmax passes"), and that
agrees with a grader that judged it with the course's functions or failed it, never with a ✓.

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
from student_support import execute_as_a_front_end, student_kernel

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


#: a line that starts the student's answer cell of another function
OTHER_ANSWER = re.compile(r"^# --- answer of (\w+) ---\n", re.M)


def _own_text(entry: Entry) -> str:
    """The file without the answers of other functions."""
    return OTHER_ANSWER.split(entry.path.read_text())[0]


def _other_answers(entry: Entry) -> dict[str, str]:
    """grade id -> the student's answer cell of another function (``# --- answer of <function> ---``)."""
    parts = OTHER_ANSWER.split(entry.path.read_text())[1:]
    return {gid: source.strip("\n") + "\n" for gid, source in zip(parts[::2], parts[1::2], strict=True)}


def _cells_of(entry: Entry) -> list[str]:
    text = _without_header(_own_text(entry).split(BELOW)[0])
    return [part.strip("\n") + "\n" for part in text.split(SEPARATOR)]


def _cells_below(entry: Entry) -> list[str]:
    return [part.strip("\n") + "\n" for part in _own_text(entry).split(BELOW)[1:]]



def _released(source: str) -> str:
    """A test cell as released (nbgrader drops its hidden region)."""
    return re.sub(r"(?ms)^[^\n]*BEGIN HIDDEN TESTS.*?END HIDDEN TESTS[^\n]*\n?", "", source)


def _public_cells(nb) -> dict[str, int]:
    """Test cells that check something as released: the public ones, and a public one holding a
    hidden region besides (an answer that is a value, whose hidden check shares its cell)."""
    return {c.metadata["nbgrader"]["grade_id"]: i for i, c in enumerate(nb.cells)
            if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
            and "check(" in _released(c.source)}


#: A notebook verdict of its own: no ✓ nor ✗, a function the answer calls fails and the bundle cannot
#: judge the answer with the course's version of it ("? attention can't be judged until ...")
UNJUDGED = "unjudged"


def _shown(cell) -> str:
    """What a cell showed, a failed check's lines (wrapped for ``nbgrader validate``) unwrapped."""
    return " ".join(o.get("evalue", "") + o.get("text", "") for o in cell.outputs).replace("\n    ", " ")


def _verdict(cell) -> bool | str:
    """✓ (True), ✗ (False) of a test cell as nbgrader validate reads it, or :data:`UNJUDGED` (no ✗, and
    a check said "?")."""
    failed = any(o.output_type == "error" or o.get("name") == "stderr" for o in cell.outputs)
    said = " ".join(o.get("text", "") for o in cell.outputs).replace("\n    ", " ")
    if not failed and re.search(r"(^|\n) *\? ", said) and re.search(
            r"\w+ can't be judged until your [\w, ]+ pass(es)?: fix \w+ first", said):
        return UNJUDGED
    return not failed


def _released_with_answers(course: Path, notebook: str, folder: Path) -> Path:
    """The bundle's released notebook with the instructor's answers in its answer cells, in ``folder``."""
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source
               for c in nbformat.read(SOLUTIONS / f"{notebook}.ipynb", as_version=4).cells
               if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}
    nb = nbformat.read(course / "notebooks" / "attention" / f"{notebook}.ipynb", as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and gid in answers:
            cell.source = answers[gid]
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{notebook}.ipynb")
    return folder / f"{notebook}.ipynb"


def _notebook_side(notebook: str, entries: list[Entry], course: Path, kernel: str,
                   folder: Path) -> dict[str, dict[str, bool | str]]:
    """Student's view: run each answer and then every public test cell in one live kernel of the
    installed bundle, on the released notebook (answered by the instructor elsewhere)."""
    public = _public_cells(nbformat.read(SOLUTIONS / f"{notebook}.ipynb", as_version=4))
    path = _released_with_answers(course, notebook, folder)
    nb = nbformat.read(path, as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: i for i, c in enumerate(nb.cells)
               if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}
    ids = {c.metadata.get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(nb.cells)}
    public = {gid: ids[gid] for gid in public}
    client = NotebookClient(nb, timeout=120, kernel_name=kernel, allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    results: dict[str, dict[str, bool | str]] = {}
    nb.cells.append(nbformat.v4.new_code_cell(""))
    scratch = len(nb.cells) - 1  # nbclient stores each executed cell at its index: new cells go here
    with client.setup_kernel():
        probe = nbformat.v4.new_code_cell("import selfattn, selfattn.withheld\nprint(selfattn.__file__)")
        execute_as_a_front_end(client, probe, scratch)
        where = _shown(probe).strip()
        assert where.startswith(str(course / ".venv")), f"the kernel's selfattn is not the installed bundle's: {where}"
        for i, cell in enumerate(nb.cells[:scratch]):  # set-up and reference answers, no widgets or hidden checks
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and not meta.get("grade") and "demos." not in cell.source:
                execute_as_a_front_end(client, cell, i)
        for entry in entries:
            *above, answer = _cells_of(entry)
            others = {answers[gid]: copy.deepcopy(nb.cells[answers[gid]]) for gid in _other_answers(entry)}
            for gid, source in _other_answers(entry).items():
                at = answers[gid]
                execute_as_a_front_end(client, nbformat.v4.new_code_cell(source, id=others[at].get("id")), at)
            for source in above:
                execute_as_a_front_end(client, nbformat.v4.new_code_cell(source), scratch)
            at = answers[entry.replace]
            reference = copy.deepcopy(nb.cells[at])  # nbclient keeps what last ran at an index there
            execute_as_a_front_end(client, nbformat.v4.new_code_cell(answer, id=reference.get("id")), at)
            for source in _cells_below(entry):
                execute_as_a_front_end(client, nbformat.v4.new_code_cell(source), scratch)
            verdicts: dict[str, bool | str] = {}
            for gid, i in public.items():
                cell = nbformat.v4.new_code_cell(_released(nb.cells[i].source))
                execute_as_a_front_end(client, cell, scratch)
                verdicts[gid] = _verdict(cell)
                if verdicts[gid] in (False, UNJUDGED) and entry.message:  # said in a cell that fails or waits
                    verdicts["message"] = bool(verdicts.get("message")) or entry.message in _shown(cell)
                assert "Withheld" not in _shown(cell), f"{entry.path.name}: {gid}: {_shown(cell)}"
            results[entry.path.stem] = verdicts
            execute_as_a_front_end(client, reference, at)  # back to the reference
            nb.cells[at] = reference
            for at, cell in others.items():
                execute_as_a_front_end(client, cell, at)
                nb.cells[at] = cell
    return results


def _submission(entry: Entry) -> str:
    nb = json.loads((SOLUTIONS / f"{entry.notebook}.ipynb").read_text())
    *extra, answer = _cells_of(entry)
    at = next(i for i, c in enumerate(nb["cells"])
              if c["metadata"].get("nbgrader", {}).get("grade_id") == entry.replace)
    nb["cells"][at]["source"] = answer
    for gid, source in _other_answers(entry).items():
        other = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == gid)
        other["source"] = source
    for k, source in enumerate(_cells_below(entry)):
        nb["cells"].insert(at + 1 + k, {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                                        "execution_count": None})
    for k, source in enumerate(extra):
        nb["cells"].insert(at + k, {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                                    "execution_count": None})
    return json.dumps(nb)


GRADE_ALL = """
import json, sys
from autograder.verdicts.decide import grade_one
from autograder.workspace import from_environment
for student, notebook in json.load(sys.stdin):
    v = grade_one(student, "attention", notebook, ws=from_environment())
    print(json.dumps([student, {g: c.passed for g, c in v.cells.items()}, [n.text for n in v.notes],
                      {g: list(c.lines) for g, c in v.cells.items()}]))
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
    return ({student: cells for student, cells, _, _ in graded} | {f"{s}/notes": n for s, _, n, _ in graded}
            | {f"{s}/lines": lines for s, _, _, lines in graded})


@pytest.fixture(scope="module")
def both_sides(installed_student_course, tmp_path_factory):
    course = installed_student_course
    kernel, data = student_kernel(course, tmp_path_factory)
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(data)
    try:
        by_notebook = defaultdict(list)
        for entry in ENTRIES:
            by_notebook[entry.notebook].append(entry)
        notebook = {}
        for nb, entries in sorted(by_notebook.items()):
            notebook.update(_notebook_side(nb, entries, course, kernel, tmp_path_factory.mktemp(nb)))
    finally:
        if saved is None:
            del os.environ["JUPYTER_PATH"]
        else:
            os.environ["JUPYTER_PATH"] = saved
    grader = _grader_side(tmp_path_factory.mktemp("agreement"), ENTRIES)
    return notebook, grader


def _judged_with_the_course(grader: dict, stem: str, function: str) -> bool:
    """Whether the grader judged ``function`` of answer ``stem`` with the course's functions (a note says so)."""
    notes = " ".join(grader[f"{stem}/notes"])
    return (f"`{function}` is right, but it calls your" in notes
            or f"`{function}` was judged with the course's" in notes)


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
            if passed == UNJUDGED:  # no verdict: the grader must not give a ✓ it decided on its own
                if graded.get(gid) and not _judged_with_the_course(grader, entry.path.stem, gid.rsplit("-", 1)[0]):
                    disagreements += 1
                    problems.append(f"{entry.path.name}: {gid}: the notebook gives no verdict (a function it calls "
                                    "fails), the grader a ✓ on its own")
                continue
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
            if seen.get(f"{fn}-public", True) is True and grader[entry.path.stem].get(f"{fn}-hidden", True):
                problems.append(f"{entry.path.name}: {fn} should fail")
        for fn in entry.full:
            if seen.get(f"{fn}-public", False) is not True:  # a ✓, also when a function it calls fails
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


def test_a_name_only_a_kernel_has_is_refused_alike_in_the_notebook_and_the_feedback(both_sides):
    """help, input, breakpoint, exit/quit, display, get_ipython, copyright/credits/license: one answer
    each (``tests/agreement/softmax_calls_<name>.py``), ✗ in the notebook and 0 points when graded,
    both with the one line naming it; reading stdin raises at once on both sides (never a time-out)."""
    from selfattn.checks.calling import PERSON_NAMES

    notebook, grader = both_sides
    stems = [f"softmax_calls_{name}" for name in PERSON_NAMES] + ["softmax_reads_stdin"]
    problems = []
    for stem in stems:
        entry = next(e for e in ENTRIES if e.path.stem == stem)
        feedback = " ".join(" ".join(lines) for gid, lines in grader[f"{stem}/lines"].items()
                            if gid.startswith("softmax-"))
        if notebook[stem].get("softmax-public") is not False or not notebook[stem].get("message"):
            problems.append(f"{stem}: the notebook does not refuse it with {entry.message!r}")
        if any(passed for gid, passed in grader[stem].items() if gid.startswith("softmax-")):
            problems.append(f"{stem}: the grader gave softmax points")
        if entry.message not in " ".join(feedback.split()):
            problems.append(f"{stem}: the feedback does not say {entry.message!r}: {feedback[:300]!r}")
        if "ran out of time" in feedback:
            problems.append(f"{stem}: a time-out")
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
            and not re.search(r"\b(check|summary)\(", c.source)]
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
            execute_as_a_front_end(client, cell, k)
    assert _verdict(cell) is False, cell.outputs
    assert "your answer must be in the cell marked YOUR CODE HERE" in _shown(cell), cell.outputs
    assert "not written yet" in _shown(cell), _shown(cell)


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
    assert _verdict(nb.cells[public + 1]) is False
    assert "your answer must be in the cell marked YOUR CODE HERE" in _shown(nb.cells[public + 1]), nb.cells[public + 1]

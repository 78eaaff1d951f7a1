"""Build sample classes from the catalogues and grade them through the real pipeline."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions" / "attention"
RELEASE = ROOT / "notebooks" / "attention"
TESTS = Path(__file__).resolve().parent


@dataclass
class Entry:
    """One catalogue file: a student's answer cell (or a notebook mutation) and what must happen."""

    path: Path
    notebook: str
    replace: str | None
    kind: str = "cell"
    zero: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    full: list[str] = field(default_factory=list)
    message: str | None = None
    #: For a wrong answer no public check can catch: why not, without revealing the hidden cases.
    hidden_only: str | None = None

    @property
    def student(self) -> str:
        return f"{self.path.parent.name[:1]}-{self.path.stem}"

    @property
    def fails(self) -> list[str]:
        """The functions that lose points: all of them (``zero``) or some (``partial``)."""
        return self.zero + self.partial


#: The header keys of a catalogue entry (``# key: value`` lines at the top of its file): ``zero``
#: names the functions that score 0, ``partial`` those that lose some of their points but not all
#: (a mistake only a hidden check sees), ``full`` those that keep every point; ``hidden_only`` says
#: why no public check can catch a wrong answer.
HEADER_KEYS = frozenset({"notebook", "replace", "kind", "zero", "partial", "full", "message", "hidden_only"})
#: Keys an entry of a folder must have (a wrong answer without ``zero`` or ``partial`` would be
#: silently left out of every test that reads which cells it must fail).
REQUIRED_KEYS = {"catalogue/wrong": {"message"}, "catalogue/correct": {"full"}}
#: Of each group, an entry of the folder must have one key at least.
REQUIRED_ONE_OF = {"catalogue/wrong": ("zero", "partial")}


def read_entry(path: Path) -> Entry:
    """The catalogue entry in ``path``; a header that is malformed raises ``ValueError`` naming the file."""
    head = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, _, value = line[2:].partition(":")
        if not key.strip().isidentifier():  # a comment that holds a colon: the header has ended
            break
        if key.strip() in head:
            raise ValueError(f"{path.name}: header key {key.strip()!r} given twice")
        head[key.strip()] = value.strip()
    unknown = sorted(set(head) - HEADER_KEYS)
    if unknown:
        raise ValueError(f"{path.name}: unknown header keys {unknown} (known: {sorted(HEADER_KEYS)})")
    folder = "/".join(path.parts[-3:-1])  # e.g. catalogue/wrong
    missing = sorted(({"notebook"} | REQUIRED_KEYS.get(folder, set())) - set(head))
    if folder in REQUIRED_ONE_OF and not set(REQUIRED_ONE_OF[folder]) & set(head):
        missing.append(" or ".join(REQUIRED_ONE_OF[folder]))
    kind = head.get("kind", "cell")
    if kind == "cell" and "replace" not in head:
        missing.append("replace")
    if missing:
        raise ValueError(f"{path.name}: header lacks {missing}")
    if kind not in ("cell", "notebook"):
        raise ValueError(f"{path.name}: kind must be 'cell' or 'notebook', not {kind!r}")
    if not (SOLUTIONS / f"{head['notebook']}.ipynb").is_file():
        raise ValueError(f"{path.name}: no notebook {head['notebook']!r} in {SOLUTIONS}")
    split = lambda key: [x.strip() for x in head.get(key, "").split(",") if x.strip()]  # noqa: E731
    return Entry(path, head["notebook"], head.get("replace"), kind, split("zero"), split("partial"),
                 split("full"), head.get("message"), head.get("hidden_only") or None)


def entries(folder: str) -> list[Entry]:
    return [read_entry(p) for p in sorted((TESTS / folder).glob("*.py"))]


def submission_text(entry: Entry) -> str:
    """The notebook this student hands in: the solutions, with the catalogue's change applied."""
    raw = (SOLUTIONS / f"{entry.notebook}.ipynb").read_text()
    if entry.kind == "notebook":
        spec = importlib.util.spec_from_file_location(f"mut_{entry.path.stem}", entry.path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # trusted test code, not a submission
        return module.mutate(raw)
    nb = json.loads(raw)
    hits = 0
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == entry.replace:
            cell["source"] = entry.path.read_text()
            hits += 1
    assert hits == 1, f"{entry.path.name}: no answer cell {entry.replace!r} in {entry.notebook}"
    return json.dumps(nb)


def with_answers(raw: str, answers: dict[str, str]) -> str:
    """The notebook ``raw`` (its JSON text) with the cells of the given grade ids holding the given sources."""
    nb = json.loads(raw)
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell["source"] = answers[gid]
    return json.dumps(nb)


def answer_cell(nb: dict, grade_id: str) -> dict:
    """The cell of ``nb`` (a notebook's parsed JSON) with this nbgrader grade id."""
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def place(work: Path, student: str, notebook: str, text: str) -> None:
    folder = work / "submitted" / student / "attention"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{notebook}.ipynb").write_text(text)


def grade(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    return subprocess.run([sys.executable, "-m", "autograder.grade", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)


def copy_class(work: Path, students: dict[str, Path]) -> None:
    for student, folder in students.items():
        shutil.copytree(folder, work / "submitted" / student / "attention")


PLAIN_CONFIG = """
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "plain"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Autograde.create_student = True
c.ExecutePreprocessor.timeout = 300
"""


class PlainCourse:
    """A course graded by plain nbgrader (student code and tests in one kernel), for comparison."""

    def __init__(self, root: Path, notebooks: list[str]):
        self.root = root
        (root / "source" / "attention").mkdir(parents=True)
        for nb in notebooks:
            shutil.copy(SOLUTIONS / f"{nb}.ipynb", root / "source" / "attention")
        (root / "nbgrader_config.py").write_text(PLAIN_CONFIG.format(root=str(root)))
        result = self.nbgrader("generate_assignment", "attention", "--force")
        assert result.returncode == 0, result.stderr[-2000:]

    def nbgrader(self, *args: str) -> subprocess.CompletedProcess:
        bindir = Path(sys.executable).parent
        env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
        return subprocess.run([str(bindir / "nbgrader"), *args], cwd=self.root, env=env,
                              capture_output=True, text=True, timeout=3600)

    def submit(self, student: str, notebook: str, text: str) -> None:
        folder = self.root / "submitted" / student / "attention"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{notebook}.ipynb").write_text(text)

    def autograde(self) -> subprocess.CompletedProcess:
        return self.nbgrader("autograde", "attention", "--force")


def scores(work: Path, student: str, notebook: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (score, max) of the autograded test cells, from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        nb = gb.find_submission_notebook(notebook, "attention", student)
        return {g.name: (g.score, g.max_score) for g in nb.grades if g.cell_type == "code"}


def function_score(work: Path, student: str, notebook: str, fn: str) -> tuple[float, float]:
    """(score, max) of the public and hidden test cells of ``fn``."""
    s = scores(work, student, notebook)
    cells = [v for k, v in s.items() if k in (f"{fn}-public", f"{fn}-hidden")]
    assert cells, f"no test cells for {fn} in {notebook}"
    return sum(c[0] for c in cells), sum(c[1] for c in cells)


def _graders_words(cell) -> list[str]:
    """What the grader wrote into one cell of an autograded notebook: every output of a code cell
    (verdict lines, CheckFailed, NotGraded) and the markdown cells it inserts (grading notes, the
    line above each added cell). The student's own sources are left out: a submission that prints
    its expected message in a comment must not pass on that echo."""
    if cell.cell_type == "markdown":
        grader_cell = cell.metadata.get("grading_notes") or cell.metadata.get("selfattn_added") == "note"
        return [cell.source] if grader_cell else []
    return [out.get("text", "") + " ".join(out.get("traceback", [])) + " " + out.get("evalue", "")
            for out in cell.get("outputs", [])]


def _autograded(work: Path, student: str, notebook: str):
    import nbformat

    return nbformat.read(work / "autograded" / student / "attention" / f"{notebook}.ipynb", as_version=4)


def _words(parts: list[str]) -> str:
    return " ".join("\n".join(parts).split())  # feedback lines are wrapped; compare words


def feedback_text(work: Path, student: str, notebook: str) -> str:
    """The words the grader wrote into the autograded notebook (outputs and its own notes), as the
    feedback shows them; never the student's sources."""
    return _words([part for cell in _autograded(work, student, notebook).cells for part in _graders_words(cell)])


def function_feedback(work: Path, student: str, notebook: str, fn: str) -> str:
    """The words of the test cells of ``fn`` alone (its ``-public`` and ``-hidden`` outputs), so that
    a message two exercises share is found where it belongs."""
    cells = [c for c in _autograded(work, student, notebook).cells
             if c.metadata.get("nbgrader", {}).get("grade_id") in (f"{fn}-public", f"{fn}-hidden")]
    assert cells, f"no test cells for {fn} in {notebook}"
    return _words([part for cell in cells for part in _graders_words(cell)])


def assert_outcome(work: Path, entry: Entry) -> None:
    """The catalogue entry's header holds: its ``zero`` functions score 0, its ``partial`` ones
    lose some points but not all, its ``full`` ones keep every point, and the feedback says its
    ``message``."""
    text = feedback_text(work, entry.student, entry.notebook)
    for fn in entry.zero:
        assert function_score(work, entry.student, entry.notebook, fn)[0] == 0, f"{fn} earned points:\n{text[-2000:]}"
    for fn in entry.partial:
        score, most = function_score(work, entry.student, entry.notebook, fn)
        assert 0 < score < most, f"{fn} earned {score} of {most}, not some of its points:\n{text[-2000:]}"
    for fn in entry.full:
        score, most = function_score(work, entry.student, entry.notebook, fn)
        assert score == most, f"{fn} lost points it earned:\n{text[-2000:]}"
    if entry.message:
        assert entry.message in text, f"{entry.message!r} not in the feedback:\n{text[-2000:]}"


def help_lines_shown(text: str) -> None:
    """Every option of GradingSettings is in ``text`` (generate_config's format) with its help."""
    flat = re.sub(r"\s*#\s*", " ", text)
    from autograder.settings import GradingSettings

    for name, trait in GradingSettings.class_traits(config=True).items():
        assert f"# c.GradingSettings.{name} = " in text, name
        assert " ".join(trait.help.split()[:4]) in flat, (name, trait.help)

"""The autograder through the real pipeline (staging, sandbox, nbgrader autograde, feedback,
export), on one sample class built from the catalogues:

- ``alice`` hands in the instructor's solutions: full marks on every autograded cell;
- ``bob`` hands in the untouched release: zero;
- ``tests/catalogue/wrong/*``: known-wrong implementations, each losing the points of its
  function with a message naming the mistake;
- ``tests/catalogue/correct/*``: correct but different implementations, keeping full marks;
- ``tests/adversarial/*``: attacks and faults, each with its expected outcome.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest
from grading_support import (
    RELEASE,
    ROOT,
    SOLUTIONS,
    assert_outcome,
    copy_class,
    entries,
    feedback_text,
    function_feedback,
    function_score,
    grade,
    place,
    scores,
    submission_text,
)
from nbgrader.api import Gradebook

WRONG, CORRECT, ADVERSARIAL = entries("catalogue/wrong"), entries("catalogue/correct"), entries("adversarial")
ALL = WRONG + CORRECT + ADVERSARIAL
#: the class's limits: every honest answer needs well under a second of CPU; the infinite loop spends
#: the whole limit in each of its runs (the class's longest job)
LIMITS = ("--cpu-seconds", "4", "--memory-mb", "1024")


def entries_in_play(request) -> list:
    """The entries this session grades: every entry, unless each selected test of this module is one
    entry's (``make test-exercise FN=softmax`` selects the entries replacing softmax's cell): then only
    theirs, so one exercise's run grades its own entries, not the whole catalogue."""
    chosen = set()
    for item in request.session.items:
        if item.module is not request.module:
            continue
        callspec = getattr(item, "callspec", None)
        if callspec is None or "entry" not in callspec.params:
            return ALL
        chosen.add(callspec.params["entry"].path.stem)
    return [e for e in ALL if e.path.stem in chosen]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, request):
    work = tmp_path_factory.mktemp("class")
    copy_class(work, {"alice": SOLUTIONS, "bob": RELEASE})
    for e in entries_in_play(request):
        place(work, e.student, e.notebook, submission_text(e))
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (work / "submitted").rglob("*.ipynb")}
    result = grade(work, "--workers", "2", *LIMITS)
    assert result.returncode == 0, result.stdout + result.stderr
    return work, digests, result


def test_solutions_score_full_marks(graded):
    work, _, _ = graded
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for gid, (score, most) in scores(work, "alice", path.stem).items():
            assert score == most, f"alice lost points on {path.stem}:{gid}"


def test_release_scores_zero(graded):
    work, _, _ = graded
    for path in sorted(RELEASE.glob("*.ipynb")):
        assert all(score == 0 for score, _ in scores(work, "bob", path.stem).values()), path.stem


@pytest.mark.parametrize("entry", WRONG, ids=lambda e: e.path.stem)
def test_wrong_implementation_loses_points_with_the_right_message(graded, entry):
    """What the header says (``zero``, ``partial``, ``full``: :func:`assert_outcome`), and the test
    cells of the answer replaced, not any cell of the notebook (two exercises share "off by one"),
    say the ``message``."""
    work, _, _ = graded
    assert entry.replace in entry.fails, f"{entry.path.name}: a wrong answer must lose points of its own function"
    assert_outcome(work, entry)
    said = function_feedback(work, entry.student, entry.notebook, entry.replace)
    assert entry.message and entry.message in said, f"message {entry.message!r} missing from:\n{said[-3000:]}"


@pytest.mark.parametrize("entry", CORRECT, ids=lambda e: e.path.stem)
def test_correct_variant_keeps_full_marks(graded, entry):
    work, _, _ = graded
    score, most = function_score(work, entry.student, entry.notebook, entry.replace)
    assert score == most, feedback_text(work, entry.student, entry.notebook)[-3000:]


@pytest.mark.parametrize("entry", ADVERSARIAL, ids=lambda e: e.path.stem)
def test_adversarial_outcome(graded, entry):
    work, _, _ = graded
    assert_outcome(work, entry)


#: the entries whose point is a run its time limit stops; any other entry that meets a time limit has
#: not reached what it tests (a walk of the file system, say) and passes on the time-out alone
TIME_OUT_IS_THE_POINT = frozenset({"infinite_loop"})


def test_no_entry_meets_a_time_limit_unless_that_is_its_point(graded):
    work, _, _ = graded
    for e in ALL:
        verdict = json.loads((work / ".grading" / "verdicts" / e.student / "attention" / f"{e.notebook}.json")
                             .read_text())
        timed_out = sorted(c for c, f in verdict["checks"].items() if f and f["kind"] == "TIME_OUT")
        if e.path.stem in TIME_OUT_IS_THE_POINT:
            assert timed_out, f"{e.path.name}: meant to run into its time limit, it did not"
        else:
            assert not timed_out, f"{e.path.name} ran into its time limit in {timed_out}: it never reached its point"


def test_gradebook_and_csv_agree_and_every_student_has_a_row(graded):
    work, _, _ = graded
    rows = {r["student_id"]: r for r in csv.DictReader(open(work / "grades.csv"))}
    expected = {"alice", "bob"} | {e.student for e in ALL}
    assert set(rows) == expected
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        for student, row in rows.items():
            sub = gb.find_submission("attention", student)
            assert float(row["score"]) == pytest.approx(sub.score), student
            assert float(row["max_score"]) == pytest.approx(sub.max_score)


def test_changed_points_do_not_change_the_maximum(graded):
    work, _, _ = graded
    rows = {r["student_id"]: r for r in csv.DictReader(open(work / "grades.csv"))}
    assert len({r["max_score"] for r in rows.values()}) == 1


def test_nobody_wrote_the_gradebook(graded):
    work, _, _ = graded
    db = sqlite3.connect(work / "gradebook.db")
    assert db.execute("SELECT COUNT(*) FROM grade WHERE manual_score = 999").fetchone()[0] == 0


def test_feedback_never_shows_hidden_tests(graded):
    work, _, _ = graded
    for html in (work / "feedback").rglob("*.html"):
        text = html.read_text()
        assert "BEGIN HIDDEN TESTS" not in text and "import autograder.hidden_checks" not in text, html
        assert "/hidden/" not in text, html
    # a student's exception text may echo its inputs: fine for public inputs, never for hidden ones
    v = json.loads((work / ".grading" / "verdicts" / "a-echo_hidden_inputs" / "attention"
                    / "03-softmax-attention.json").read_text())
    assert any("LEAK" in ln for ln in v["cells"]["softmax-public"]["lines"])
    assert not any("LEAK" in ln for ln in v["cells"]["softmax-hidden"]["lines"])
    assert all("ValueError" in ln for ln in v["cells"]["softmax-hidden"]["lines"])


def test_feedback_explains_what_happened(graded):
    """The feedback page (student code and all) says why; the words are the grader's: they are
    not in what the student handed in."""
    work, _, _ = graded
    explained = (("a-notebook_invalid_json", "07-masking", "could not be read as a notebook"),
                 ("w-softmax_axis0", "03-softmax-attention", "normalised along axis 0 (down the columns)"))
    for student, notebook, said in explained:
        handed_in = (work / "submitted" / student / "attention" / f"{notebook}.ipynb").read_bytes()
        assert said.encode() not in handed_in, f"{student} hands in the words {said!r} itself"
        html = (work / "feedback" / student / "attention" / f"{notebook}.html").read_text()
        assert said in html, f"{said!r} not on the feedback page of {student}"


def test_submissions_are_never_modified(graded):
    _, digests, _ = graded
    for path, digest in digests.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path


def test_verdicts_record_the_sandbox(graded):
    work, _, _ = graded
    v = json.loads((work / ".grading" / "verdicts" / "alice" / "attention" / "03-softmax-attention.json").read_text())
    assert v["sandbox"] == "bubblewrap", "bubblewrap should run here (scripts/install-system-deps.sh)"


def test_sandbox_self_test_passes_and_isolates():
    from autograder import sandbox

    sandbox.self_test()
    assert sandbox.mode() == "bubblewrap"


def test_manual_grades_reach_the_csv_after_finishing(graded, tmp_path):
    """Formgrader's hand grading writes manual scores to the gradebook; --finish exports them, and
    the feedback page shows that cell's score where it showed it awaiting hand-grading. On a copy
    of the class (the shared one stays as graded). (Once any "2.5" on the page passed: its CSS has
    "42.5px".)"""
    work = tmp_path / "class"
    shutil.copytree(graded[0], work, symlinks=True)
    given = 1.75
    page = work / "feedback" / "alice" / "attention" / "04-scaling.html"
    # the page's list of graded cells: "Written response: variance-derivation (1.75 / 3.0)"
    shown = re.compile(r'href="#variance-derivation">[^<]*</a> \((?:awaiting hand-grading \(out of (?P<out_of>[\d.]+)\)'
                       r'|(?P<score>[\d.]+) / (?P<most>[\d.]+))\)')
    before = shown.search(page.read_text())
    assert before and before["out_of"], "the page does not list variance-derivation as awaiting hand-grading"
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        grade_ = gb.find_grade("variance-derivation", "04-scaling", "attention", "alice")
        assert grade_.max_score >= given
        grade_.manual_score = given  # what formgrader's grade handler does when a score is entered
        grade_.needs_manual_grade = False
        gb.db.commit()
        expected = gb.find_submission("attention", "alice").score
    result = grade(work, "--finish")
    assert result.returncode == 0, result.stderr
    rows = {r["student_id"]: r for r in csv.DictReader(open(work / "grades.csv"))}
    assert float(rows["alice"]["score"]) == pytest.approx(expected)
    after = shown.search(page.read_text())
    assert after and after["score"], "the page does not list the score given to variance-derivation"
    assert (float(after["score"]), float(after["most"])) == (given, float(before["out_of"])), after[0]


def test_one_notebook_is_an_independent_job(graded):
    """What an external scheduler runs per notebook: stage and decide, print the verdict."""
    work, _, _ = graded
    result = grade(work, "--one", "w-causal_diagonal_masked", "attention", "07-masking")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["cells"]["padding_mask-public"]["passed"] is True
    assert verdict["cells"]["causal_mask-public"]["passed"] is False


def test_shared_warm_sandbox_grades_as_fresh_sandboxes(graded, tmp_path):
    """Each grading worker forks every run of every student from one pre-warmed sandbox (wiped
    after each run; see tests/test_warm_sandbox.py). The whole class, hostile submissions included,
    graded with a newly started sandbox per run gets the same grades and the same kind of finding
    from every check (timings aside: a time-out is a time-out, whichever limit stopped it)."""
    work, _, _ = graded
    # the hostile submissions, and a few honest ones of each kind (a smaller class: a cheaper test)
    students = ["alice", "bob"] + [e.student for e in ADVERSARIAL + WRONG[::6] + CORRECT[::6]]
    for student in students:
        shutil.copytree(work / "submitted" / student, tmp_path / "submitted" / student)
    (tmp_path / ".grading").mkdir()
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(tmp_path), SELFATTN_WARM_SANDBOX="0")
    fresh = subprocess.run([sys.executable, "-m", "autograder.grade", "--workers", "2", *LIMITS],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr

    def rows(folder):  # the automatic score of every test cell
        with Gradebook(f"sqlite:///{folder / 'gradebook.db'}", "self-attention") as gb:
            return sorted((s, nb.name, g.name, g.auto_score) for s in students
                          for nb in gb.find_submission("attention", s).notebooks
                          for g in nb.grades if g.cell_type == "code")

    def decided(folder):  # per test cell its result, per check its finding's kind and name, per note its kind
        out = {}
        for s in students:
            for p in sorted((folder / ".grading" / "verdicts" / s).rglob("*.json")):
                v = json.loads(p.read_text())
                out[str(p.relative_to(folder))] = (
                    {gid: (c["passed"], c.get("failed"), c.get("points")) for gid, c in v["cells"].items()},
                    {cid: f and (f["kind"], f["name"]) for cid, f in v.get("checks", {}).items()},
                    sorted(n["kind"] for n in v.get("notes", [])))
        return out

    # not the lines' words: one time-out reads "CPU limit" or "wall limit" by the machine's load
    assert len(decided(work)) >= 9 * 2 + len(ADVERSARIAL)
    assert rows(tmp_path) == rows(work)
    assert decided(tmp_path) == decided(work)


def test_gradebook_lookups_by_submission_use_an_index(graded):
    """nbgrader finds a submission's grades, comments and notebooks by columns its schema leaves
    unindexed: without the grader's indexes each score it computes scans the whole class."""
    from autograder.nbgrader_ext.gradebook_state import INDEXES

    work, _, _ = graded
    with sqlite3.connect(work / "gradebook.db") as db:
        for table, column in INDEXES:
            plan = " ".join(str(row[-1]) for row in db.execute(
                f"EXPLAIN QUERY PLAN SELECT * FROM {table} WHERE {column} = 'x'"))
            assert "USING INDEX" in plan and "SCAN" not in plan, (table, column, plan)


def test_fallback_sandbox_still_limits_and_answers():
    """Without bubblewrap the grader keeps the limits and the clean interpreter (weaker isolation)."""
    code = (
        "import numpy as np\n"
        "from autograder import sandbox\n"
        "from selfattn.checking import Case\n"
        "assert sandbox.mode() == 'fallback'\n"
        "sandbox.self_test()\n"
        "loop = [('f', 'def f(x):\\n    while True: pass')]\n"
        "r = sandbox.run(loop, 'f', [Case((1,))], sandbox.Limits(cpu_seconds=2))\n"
        "assert r.outcomes is None and 'CPU' in r.failure.text, r.failure\n"
        "r = sandbox.run([('f', 'import selfattn\\nf = selfattn.softmax')], 'f', [Case((1,))])\n"
        "assert r.outcomes is None and 'selfattn' in r.failure.text, r.failure\n"
        "print('fallback ok')\n"
    )
    env = dict(os.environ, SELFATTN_SANDBOX="fallback")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "fallback ok" in result.stdout, result.stderr

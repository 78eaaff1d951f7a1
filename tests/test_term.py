"""A whole term, through the project's own commands, in a copy of the course (one notebook,
``04-scaling``: the graded function ``score_stds``, 1 public and 2 hidden points, and a written
answer worth 3), graded once and shared by every test below:

1. ``make release`` (``scripts/release.py``), ``./nbgrader release_assignment``, a due date
   (``make due-date``); five students: ann on time, ben late, cat late with an extension granted
   after grading (``make extension``), dan resubmitting twice, all four through nbgrader's exchange
   (``fetch_assignment``, ``submit``, ``collect``), and eve handing in ``eve.zip`` (``make intake``);
2. ``make grade`` (``autograder.grade``), the written answers graded in formgrader's grading page
   in headless Chromium (a score typed into its box, as an instructor does), ``make grades-final``;
3. mid-term: the hidden check of ``score_stds``, which the term began with a bug in (it tried
   ``d_k = 1`` only, where dividing by ``d_k`` and by ``√d_k`` agree, so ben's mistake passed it),
   is fixed in ``autograder/hidden_checks.py``; then the hidden points go from 2 to 4
   (``solutions/``, ``sync_notebooks.py``, ``make release``); each followed by ``make grade``;
4. a new exercise (test_new_exercise's ``row_sums``) added the way the guide says, as a new
   assignment, ``extra``: released, handed in by ann and ben through the exchange, graded;
5. ``make grades-final``.

The test computes every final score itself, from the late policy (10 % per started day, at most
30 %) and the points each answer earns, and grades.csv, the Canvas and Moodle files, the feedback
pages and the class report must all hold it. The course has no ``roster.csv``: the summary names the
students Canvas cannot match.
"""

from __future__ import annotations

import csv
import math
import re
import shutil
import sys
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest
from grading_support import with_answers
from test_hand_grading_loop import NB, STDS, HandLoop, _enter_score, _formgrader_session
from test_instructor_loop import BIN, WRITTEN, _answer
from test_late_work import _verdict_times
from test_new_exercise import (
    ANSWER,
    HEADING,
    HIDDEN,
    HIDDEN_CHECKS,
    HINTS,
    RECORD,
    RECORDS,
    REFERENCE,
    WRONG,
    _meta,
    copy_course,
)

NAMES = {"ann": ("Ann", "Ames"), "ben": ("Ben", "Brown"), "cat": ("Cat", "Cho"), "dan": ("Dan", "Diaz"),
         "eve": ("Eve", "Evans")}
EXCHANGE_STUDENTS = ("ann", "ben", "cat", "dan")
#: the due date: a week from now, so that a hand-in through the exchange (stamped now) is on time
DUE = (datetime.now(timezone.utc) + timedelta(days=7)).replace(microsecond=0, second=0)
#: how late the late ones are; their timestamp.txt is set after collect (the exchange stamps now)
LATE = {"ben": timedelta(days=2, hours=1), "cat": timedelta(days=1, hours=2)}
EXTENDED = DUE + timedelta(days=3)  # cat's extension, granted after grading: she is then on time
HAND = {"ann": 3.0, "ben": 2.0, "cat": 3.0, "dan": 1.0, "eve": 2.0}  # the written answer, out of 3
POLICY = ("c.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 10\n"
          "c.LateSubmissionPlugin.per = 'day'\nc.LateSubmissionPlugin.cap = 30\n")
#: ben's answer: the second value divided by d_k, not √d_k (a named mistake; the same at d_k = 1)
BY_DK = ("def score_stds(q, k):\n    dots = (q * k).sum(axis=1)\n"
         "    return float(dots.std()), float((dots / q.shape[1]).std())")
#: dan's second hand-in: the two values swapped (also the same as the right answer at d_k = 1)
SWAPPED = ("def score_stds(q, k):\n    dots = (q * k).sum(axis=1)\n"
           "    return float((dots / np.sqrt(q.shape[1])).std()), float(dots.std())")
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
#: the new exercise's assignment and notebook, and who hands it in with what
NEW_ASSIGNMENT, NEW_NB = "extra", "10-rows"
NEW_ANSWERS = {"ann": "\n".join(ln for ln in ANSWER.splitlines() if "SOLUTION" not in ln), "ben": WRONG}
NEW_POINTS = {"ann": 3.0, "ben": 0.0}  # the sync's default points: 1 public, 2 hidden
NEW_HIDDEN_POINTS = 4.0  # the hidden checks of score_stds after the mid-term change (2 before)
#: the hidden check as the term began (its bug) and as fixed mid-term (the repository's)
FIXED_CHECK = "for d in (64, 1)])"
BUGGY_CHECK = "for d in (1,)])"


def fraction_taken(late: timedelta) -> float:
    """The policy, read by the test: 10 % per started day late, at most 30 %."""
    seconds = late.total_seconds()
    return 0.0 if seconds <= 0 else min(30, 10 * math.ceil(seconds / 86400)) / 100


def expected(auto: dict[str, float], late: dict[str, timedelta]) -> dict[str, float]:
    """student -> the final score: (auto-graded points + hand grade) less the late penalty."""
    return {s: round((auto[s] + HAND[s]) * (1 - fraction_taken(late.get(s, timedelta()))), 6) for s in HAND}


class Term(HandLoop):
    """The hand-grading loop's one-notebook course, but in a copy of the repository's tracked files,
    whose own ``autograder/`` grades (so that its hidden checks can be edited mid-term)."""

    def __init__(self, tmp):
        super().__init__(tmp)
        shutil.rmtree(self.course)
        copy_course(self.course)
        for folder in ("solutions", "notebooks"):
            for p in (self.course / folder / "attention").glob("*.ipynb"):
                if p.stem != NB:
                    p.unlink()
        self.env["PYTHONPATH"] = str(self.course)
        (self.instructor_cfg / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.Exchange.root = {str(self.exchange)!r}\n" + POLICY)

    def run(self, *args: str, cwd=None, env=None, ok: bool = True):
        return super().run(*args, cwd=cwd or self.course / "autograder", env=env, ok=ok)

    def nbgrader(self, *args: str, **kw):  # the copy's ./nbgrader
        return self.run(str(self.course / "nbgrader"), *args, **kw)

    def python(self, *args: str, **kw):
        return self.run(sys.executable, *args, cwd=self.course, **kw)

    def make_grade(self, *args: str):
        return self.python("-m", "autograder.grade", "--workers", "2", *args)

    def student(self, student: str, *args: str):
        """nbgrader's own command, run by a student in their home folder (the student config)."""
        env = self.student_env(student)
        return self.run(str(BIN / "nbgrader"), *args, f"--student={student}", cwd=env["HOME"], env=env)

    def stamp(self, student: str, when: datetime) -> None:
        (self.work / "submitted" / student / "attention" / "timestamp.txt").write_text(
            f"{when:%Y-%m-%d %H:%M:%S}.000000 UTC\n")

    def scores(self, assignment: str = "attention", notebook: str = NB) -> dict[str, dict[str, float]]:
        """student -> the final score of ``assignment`` (of one notebook) where each output holds
        it: grades.csv, moodle.csv, canvas.csv, the feedback page (of those who handed it in) and
        the class report's students.csv."""
        out: dict[str, dict[str, float]] = {s: {} for s in HAND}
        for s in HAND:
            page = self.work / "feedback" / s / assignment / f"{notebook}.html"
            if page.exists():
                found = re.findall(rf"{notebook} \(Score: ([0-9.]+) / [0-9.]+\)", page.read_text())
                assert len(found) == 1, (s, found)
                out[s]["feedback"] = float(found[0])
        with open(self.work / "report" / "students.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                out[row["student"]]["report"] = float(row[notebook] or 0)
        with open(self.work / "grades.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                if row["assignment"] == assignment:
                    out[row["student_id"]]["grades.csv"] = float(row["score"])
        with open(self.work / "exports" / "moodle.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                out[row["username"]]["moodle"] = float(row[f"{assignment} (total)"])
        by_name = {f"{last} {first}": s for s, (first, last) in NAMES.items()}  # as Canvas lists them
        with open(self.work / "exports" / "canvas.csv", newline="") as fh:
            for row in list(csv.DictReader(fh))[1:]:  # after the Points Possible row
                out[by_name[row["Student"]]]["canvas"] = float(row[f"{assignment} (total)"])
        return out


def agree(value: float) -> dict[str, float]:
    """The same final score in every output :meth:`Term.scores` reads."""
    return dict.fromkeys(("feedback", "report", "grades.csv", "moodle", "canvas"), value)


def _hand_grade(page, base, out, lp: Term) -> None:
    """Formgrader's grading page of each student's notebook: the written answer's score typed in."""
    with lp.db() as gb:
        ids = {s: gb.find_submission_notebook(NB, "attention", s).id for s in HAND}
    for s, points in HAND.items():
        page.goto(f"{base}/formgrader/submissions/{ids[s]}/?index=0", wait_until="networkidle")
        _enter_score(page, WRITTEN, points)
    out["hand_graded"] = {s: lp.grade_of(s)[:2] for s in HAND}


def _resubmit(lp: Term, student: str, answer: str) -> str:
    lp.edit(student, NB, {STDS: answer})
    lp.student(student, "submit", "attention")
    lp.nbgrader("collect", "attention", "--update", "--student", student)
    return lp.make_grade().stdout


def add_new_exercise(course: Path) -> None:
    """The toy exercise of test_new_exercise added to the course at ``course`` as the guide says: its
    reference, record and hidden check in their places, and a new notebook ``NEW_NB`` of a new
    assignment ``NEW_ASSIGNMENT`` (the title and set-up cells of 04-scaling, the exercise, the summary
    cell), before ``scripts/sync_notebooks.py``."""
    (course / "selfattn" / "rows.py").write_text(REFERENCE)
    for name, addition in ((RECORDS, RECORD), (HIDDEN_CHECKS, HIDDEN)):
        with open(course / name, "a") as fh:
            fh.write(addition)
    scaling = nbformat.read(course / "solutions" / "attention" / f"{NB}.ipynb", as_version=4)
    keep = {c.metadata.nbgrader.grade_id: c for c in scaling.cells}
    nb = nbformat.v4.new_notebook(metadata=scaling.metadata)
    nb.cells = [keep["md-20"], keep["code-21"],
                nbformat.v4.new_markdown_cell(HEADING, metadata=_meta("md-row_sums")),
                nbformat.v4.new_markdown_cell(HINTS, metadata=_meta("hints-row_sums")),
                nbformat.v4.new_code_cell(ANSWER, metadata=_meta("row_sums", locked=False, solution=True)),
                keep["summary"]]
    (course / "solutions" / NEW_ASSIGNMENT).mkdir()
    nbformat.write(nb, course / "solutions" / NEW_ASSIGNMENT / f"{NEW_NB}.ipynb")


def _new_assignment(lp: Term) -> tuple[str, str]:
    """The toy exercise of test_new_exercise in its places (reference, record, hidden check) and in
    a new notebook of a new assignment (the title and set-up cells of 04-scaling, the exercise,
    the summary cell); sync, release, due date; ann and ben fetch, answer and submit; collect;
    make grade. Returns make grade's output and the summary it wrote."""
    add_new_exercise(lp.course)
    lp.python("scripts/sync_notebooks.py")
    lp.python("scripts/release.py")
    lp.nbgrader("release_assignment", NEW_ASSIGNMENT, "--force")
    lp.python("-m", "autograder.extension", "due-date", "--assignment", NEW_ASSIGNMENT, "--until",
              f"{DUE:%Y-%m-%d %H:%M} UTC")
    for s, answer in NEW_ANSWERS.items():
        lp.student(s, "fetch_assignment", NEW_ASSIGNMENT)
        path = lp.tmp / "home" / s / NEW_ASSIGNMENT / f"{NEW_NB}.ipynb"
        path.write_text(with_answers(path.read_text(), {"row_sums": answer}))
        lp.student(s, "submit", NEW_ASSIGNMENT)
    lp.nbgrader("collect", NEW_ASSIGNMENT)
    out = lp.make_grade().stdout
    return out, (lp.work / "grading-summary.txt").read_text()


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    lp = Term(tmp_path_factory.mktemp("term"))
    seen: dict[str, object] = {}
    hidden_checks = lp.course / "autograder" / "hidden_checks.py"
    text = hidden_checks.read_text()
    assert text.count(FIXED_CHECK) == 1, "the hidden check of score_stds has moved: update this test"
    hidden_checks.write_text(text.replace(FIXED_CHECK, BUGGY_CHECK))  # the term begins with its bug

    # 1. release, the due date, five students
    people = lp.tmp / "people.csv"  # names for the gradebook; no roster.csv (no LMS identities)
    people.write_text("id,first_name,last_name\n" + "".join(f"{s},{f},{la}\n" for s, (f, la) in NAMES.items()))
    lp.nbgrader("db", "student", "import", str(people))
    lp.python("scripts/release.py")
    lp.nbgrader("release_assignment", "attention", "--force")
    lp.python("-m", "autograder.extension", "due-date", "--assignment", "attention", "--until",
              f"{DUE:%Y-%m-%d %H:%M} UTC")
    model = {STDS: _answer(NB, STDS), WRITTEN: _answer(NB, WRITTEN)}
    answers = {"ann": model, "ben": {**model, STDS: BY_DK}, "cat": model, "dan": {**model, STDS: STUB}}
    for s in EXCHANGE_STUDENTS:
        lp.student(s, "fetch_assignment", "attention")
        lp.edit(s, NB, answers[s])
        lp.student(s, "submit", "attention")
    lp.nbgrader("collect", "attention")
    for s, late in LATE.items():
        lp.stamp(s, DUE + late)
    downloads = lp.tmp / "downloads"
    downloads.mkdir()
    with zipfile.ZipFile(downloads / "eve.zip", "w") as z:  # hand_in.py's layout: LOGIN/attention/<nb>
        z.writestr(f"eve/attention/{NB}.ipynb", nbformat.writes(lp.answered(model)))
    seen["intake"] = lp.python("-m", "autograder.intake.zips", str(downloads)).stdout

    # 2. make grade, hand grades in formgrader, make grades-final
    seen["first_run"] = lp.make_grade().stdout
    seen["first_summary"] = (lp.work / "grading-summary.txt").read_text()
    with open(lp.work / "report" / "fixed-mistakes.csv", newline="") as fh:
        seen["first_fixed_mistakes"] = list(csv.reader(fh))
    seen.update(_formgrader_session(lp, lambda page, base, out: _hand_grade(page, base, out, lp)))
    seen["first_final"] = lp.python("-m", "autograder.grade", "--finish").stdout
    seen["first_scores"] = lp.scores()

    # cat's extension, granted after grading: the penalty again, not the sandbox
    verdicts = _verdict_times(lp)
    seen["extension"] = lp.python("-m", "autograder.extension", "extension", "--assignment", "attention",
                                  "--student", "cat", "--until", f"{EXTENDED:%Y-%m-%d %H:%M} UTC").stdout
    seen["extension_scores"] = lp.scores()
    seen["extension_decided_nothing"] = _verdict_times(lp) == verdicts
    seen["cat_feedback"] = (lp.work / "feedback" / "cat" / "attention" / f"{NB}.html").read_text()

    # dan hands in twice more through the exchange: a named mistake, then the right answer
    seen["dan_second"] = _resubmit(lp, "dan", SWAPPED)
    seen["dan_second_scores"] = lp.scores()
    seen["dan_third"] = _resubmit(lp, "dan", _answer(NB, STDS))
    seen["dan_third_scores"] = lp.scores()

    # 3. mid-term: the hidden check's bug fixed (autograder/hidden_checks.py), then make grade
    hidden_checks.write_text(text)
    seen["check_fixed"] = lp.make_grade().stdout
    seen["check_fixed_scores"] = lp.scores()
    # ... then the hidden checks worth 4 points instead of 2 (solutions/, sync_notebooks, release)
    source = lp.course / "solutions" / "attention" / f"{NB}.ipynb"
    nb = nbformat.read(source, as_version=4)
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{STDS}-hidden"
         ).metadata.nbgrader["points"] = int(NEW_HIDDEN_POINTS)
    nbformat.write(nb, source)
    lp.python("scripts/sync_notebooks.py")
    lp.python("scripts/release.py")
    seen["points_changed"] = lp.make_grade().stdout
    seen["points_summary"] = (lp.work / "grading-summary.txt").read_text()
    with open(lp.work / "report" / "grade-changes.csv", newline="") as fh:
        seen["points_report_changes"] = list(csv.DictReader(fh))

    # 4. a new exercise, the supported way: a new assignment (docs/instructors.md, mid-term table)
    seen["new_assignment_run"], seen["new_assignment_summary"] = _new_assignment(lp)
    seen["new_assignment_scores"] = lp.scores(NEW_ASSIGNMENT, NEW_NB)

    # 5. final grades
    seen["final"] = lp.python("-m", "autograder.grade", "--finish").stdout
    seen["final_scores"] = lp.scores()
    seen["ben_feedback"] = (lp.work / "feedback" / "ben" / "attention" / f"{NB}.html").read_text()
    with open(lp.work / "report" / "fixed-mistakes.csv", newline="") as fh:
        seen["fixed_mistakes"] = list(csv.DictReader(fh))
    with open(lp.work / "exports" / "canvas.csv", newline="") as fh:
        head, possible, *_ = list(csv.reader(fh))
        seen["points_possible"] = dict(zip(head, possible, strict=True))
    return lp, seen


def test_every_student_is_in_and_the_hand_grades_were_saved_from_formgrader(term):
    _, seen = term
    assert "eve.zip: taken" in seen["intake"], seen["intake"]
    assert seen["hand_graded"] == {s: (points, False) for s, points in HAND.items()}, seen["hand_graded"]


def test_first_grades_follow_the_policy_everywhere(term):
    _, seen = term
    # ben's mistake passes the buggy hidden check (d_k = 1 only); dan handed in the stub
    auto = {"ann": 3.0, "ben": 2.0, "cat": 3.0, "dan": 0.0, "eve": 3.0}
    want = expected(auto, LATE)
    for s in HAND:
        assert seen["first_scores"][s] == agree(want[s]), (s, seen["first_scores"], seen["first_final"][-3000:])


def test_the_summary_names_the_students_canvas_cannot_match(term):
    lp, seen = term
    summary = seen["first_summary"]
    assert "students with no LMS identity (empty ID and SIS columns: Canvas cannot match their rows): 5" in summary
    for s in HAND:
        assert f"    - {s}: {lp.work / 'roster.csv'} does not exist" in summary, summary


def test_before_any_resubmission_the_reports_table_of_them_is_its_header(term):
    _, seen = term
    assert seen["first_fixed_mistakes"] == [["student", "name", "notebook", "exercise", "mistake before", "now"]]


def shown(page: str) -> str:
    """A feedback page's text as a reader sees it: tags dropped, every run of white space (the no-break
    spaces that keep a number with its unit among them) one space."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_an_extension_after_grading_recomputes_the_penalty_and_runs_nothing(term):
    _, seen = term
    auto = {"ann": 3.0, "ben": 2.0, "cat": 3.0, "dan": 0.0, "eve": 3.0}
    before, after = expected(auto, LATE), expected(auto, {"ben": LATE["ben"]})
    assert f"cat/attention: {before['cat']:g} -> {after['cat']:g}" in seen["extension"], seen["extension"][-2000:]
    assert seen["extension_decided_nothing"]
    for s in HAND:
        assert seen["extension_scores"][s] == agree(after[s]), (s, seen["extension_scores"])
    assert f"Due: {EXTENDED:%Y-%m-%d %H:%M} UTC" in shown(seen["cat_feedback"]), seen["cat_feedback"][-3000:]


def test_each_resubmission_is_graded_and_only_real_ones_count_as_resubmissions(term):
    _, seen = term
    late = {"ben": LATE["ben"]}
    # the swapped values fail the public check; at d_k = 1 (the buggy hidden check) they are right
    second = expected({"ann": 3.0, "ben": 2.0, "cat": 3.0, "dan": 2.0, "eve": 3.0}, late)
    third = expected({"ann": 3.0, "ben": 2.0, "cat": 3.0, "dan": 3.0, "eve": 3.0}, late)
    assert "notebooks graded now: 1," in seen["dan_second"] and "notebooks graded now: 1," in seen["dan_third"]
    for s in HAND:
        assert seen["dan_second_scores"][s] == agree(second[s]), (s, seen["dan_second_scores"])
        assert seen["dan_third_scores"][s] == agree(third[s]), (s, seen["dan_third_scores"])
    assert f"dan/attention: {second['dan']:g} -> {third['dan']:g}" in seen["dan_third"]
    # after two regrades of everyone (the fixed check, the new points), the report's "Mistakes
    # before a resubmission" still names dan alone, with the mistake his last hand-in fixed
    rows = seen["fixed_mistakes"]
    assert {r["student"] for r in rows} == {"dan"}, rows
    assert any("swapped" in r["mistake before"] for r in rows), rows


def test_the_fixed_hidden_check_regrades_everyone_and_changes_only_bens_grade(term):
    _, seen = term
    late = {"ben": LATE["ben"]}
    before = expected({"ann": 3.0, "ben": 2.0, "cat": 3.0, "dan": 3.0, "eve": 3.0}, late)
    after = expected({"ann": 3.0, "ben": 0.0, "cat": 3.0, "dan": 3.0, "eve": 3.0}, late)  # ben's mistake caught
    out = seen["check_fixed"]
    assert f"notebooks graded now: {len(HAND)}," in out, out[-3000:]
    # the summary says why everyone was decided again, and names nothing else
    because = [ln.strip() for ln in out.splitlines() if "decided again because" in ln]
    assert because and all(ln.endswith("the grader's code changed in hidden_checks.py: every notebook is "
                                       "decided again") for ln in because), because
    assert "final grades changed since the last export: 1" in out, out[-3000:]
    assert f"ben/attention: {before['ben']:g} -> {after['ben']:g}" in out, out[-3000:]
    for s in HAND:
        assert seen["check_fixed_scores"][s] == agree(after[s]), (s, seen["check_fixed_scores"])


def test_a_change_of_points_lists_every_grade_it_changed_old_and_new(term):
    _, seen = term
    late = {"ben": LATE["ben"]}
    before = expected({"ann": 3.0, "ben": 0.0, "cat": 3.0, "dan": 3.0, "eve": 3.0}, late)
    gain = NEW_HIDDEN_POINTS - 2
    after = expected({"ann": 3 + gain, "ben": 0.0, "cat": 3 + gain, "dan": 3 + gain, "eve": 3 + gain}, late)
    changed = {s for s in HAND if before[s] != after[s]}
    assert changed == {"ann", "cat", "dan", "eve"}
    out = seen["points_changed"]
    assert f"notebooks graded now: {len(HAND)}," in out, out[-3000:]
    assert "decided again because the checks of attention/04-scaling changed" in out, out[-3000:]
    assert "the grader's code changed" not in out, out[-3000:]
    assert f"final grades changed since the last export: {len(changed)}" in out, out[-3000:]
    for s in changed:
        assert f"{s}/attention: {before[s]:g} -> {after[s]:g}" in out, out[-3000:]
    rows = {r["student"]: (float(r["old"]), float(r["new"])) for r in seen["points_report_changes"]}
    assert rows == {s: (before[s], after[s]) for s in changed}, seen["points_report_changes"]


def test_final_grades_are_the_policys_everywhere(term):
    _, seen = term
    gain = NEW_HIDDEN_POINTS - 2
    final = expected({"ann": 3 + gain, "ben": 0.0, "cat": 3 + gain, "dan": 3 + gain, "eve": 3 + gain},
                     {"ben": LATE["ben"]})
    for s in HAND:
        assert seen["final_scores"][s] == agree(final[s]), (s, seen["final_scores"], seen["final"][-3000:])
    assert seen["points_possible"]["attention (total)"] == f"{1 + NEW_HIDDEN_POINTS + 3:g}", seen["points_possible"]
    assert "grades changed since the last export: 0" in seen["final"], seen["final"][-3000:]
    # the late student's feedback says how late and what it cost, from his final score (hand grade included)
    taken = round((0.0 + HAND["ben"]) * fraction_taken(LATE["ben"]), 6)
    assert f"handed in 2 d 1 h late; 10% of the score per started day late, at most 30%: {taken:g} points taken" \
        in shown(seen["ben_feedback"]), seen["ben_feedback"][-3000:]


def test_a_new_exercise_as_a_new_assignment_is_graded_and_regrades_nothing_else(term):
    _, seen = term
    out, summary = seen["new_assignment_run"], seen["new_assignment_summary"]
    # every notebook is decided again (the records and hidden checks gained the exercise's), and
    # no grade already given changes
    assert "final grades changed since the last export: 0" in summary, summary
    assert f"submissions: {len(HAND) + len(NEW_ANSWERS)};" in summary, summary
    scores = seen["new_assignment_scores"]
    for s in HAND:
        want = NEW_POINTS.get(s, 0.0)
        where = agree(want) if s in NEW_ANSWERS else {k: v for k, v in agree(want).items() if k != "feedback"}
        assert scores[s] == where, (s, scores, out[-3000:])

"""Hand grades stay put and nothing waits unseen, driven as an instructor drives them.

One notebook (``04-scaling``: a function and a written answer), submissions put in ``submitted/``
by hand (as from an e-mail or an LMS zip), nbgrader's commands through ``./nbgrader`` and
formgrader's pages and buttons in headless Chromium:

1. ``make grade``; formgrader's grading page: hand-grade alice, bob and carol (carol's answer has a
   pasted image); then formgrader's *Autograde* button on alice: her hand grade stays settled;
2. bob's hand grade is put back in the queue as an earlier version's button left it; ``make grade``
   settles it again, and ``make grade --force`` keeps everything settled (the Canvas file reads
   "final");
3. bob changes only his written answer, carol only her pasted image (files replaced in place,
   same ``timestamp.txt``); ``make grade``: both are autograded again (formgrader and the feedback
   show the new answer) and wait for a new hand grade, the old one shown as the previous one in
   the answer's comment (formgrader's comment box, read in Chromium);
4. the grading summary, ``make grades-final`` and ``./nbgrader release_feedback`` name what waits;
5. dave's submission is put in ``submitted/`` by hand and autograded with
   ``./nbgrader autograde attention --student dave``: he gets a row; eve's comes in an LMS zip,
   through ``./nbgrader zip_collect`` into ``submitted/``, then the same autograde.
"""

from __future__ import annotations

import base64
import csv
import zipfile

import nbformat
import pytest
from grading_support import ROOT
from test_instructor_loop import WRITTEN, Loop, _answer

NB = "04-scaling"
STDS = "score_stds"
HAND = {"alice": 3.0, "bob": 1.0, "carol": 2.0}
PNG_A = base64.b64encode(b"\x89PNG\r\n\x1a\n first image").decode()
PNG_B = base64.b64encode(b"\x89PNG\r\n\x1a\n second image").decode()
STAMP = "2026-01-10 12:00:00.000000 UTC"


class HandLoop(Loop):
    """The instructor loop's course with one notebook, submissions handed in by hand."""

    def __init__(self, tmp):
        super().__init__(tmp)
        for p in (self.course / "solutions" / "attention").glob("*.ipynb"):
            if p.stem != NB:
                p.unlink()

    def nbgrader(self, *args: str, **kw):  # ./nbgrader, as the README writes it
        return self.run(str(ROOT / "nbgrader"), *args, **kw)

    def answered(self, answers: dict[str, str], attachments: dict | None = None) -> nbformat.NotebookNode:
        """The released notebook with these answers (and pasted images in the written answer)."""
        nb = nbformat.read(self.course / "notebooks" / "attention" / f"{NB}.ipynb", as_version=4)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                cell.source = answers[gid]
                if gid == WRITTEN and attachments is not None:
                    cell["attachments"] = attachments
        return nb

    def hand_in(self, student: str, answers: dict[str, str], attachments: dict | None = None) -> None:
        """Write ``submitted/<student>/attention/04-scaling.ipynb`` (replaced in place if there)."""
        folder = self.work / "submitted" / student / "attention"
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(self.answered(answers, attachments), folder / f"{NB}.ipynb")
        (folder / "timestamp.txt").write_text(STAMP + "\n")

    def grades_of(self, student: str) -> dict[str, tuple[float, bool]] | str:
        """grade id -> (score, needs manual grading) of a student's notebook, or why there is none."""
        with self.db() as gb:
            try:
                sub = gb.find_submission_notebook(NB, "attention", student)
            except Exception as exc:
                return f"no row: {exc}"
            return {g.name: (g.score, bool(g.needs_manual_grade)) for g in sub.grades}

    def grade_of(self, student: str) -> tuple[float | None, bool, str]:
        """(manual score, needs manual grading, manual comment) of the written answer."""
        with self.db() as gb:
            nb = gb.find_submission_notebook(NB, "attention", student)
            g = next(g for g in nb.grades if g.name == WRITTEN)
            c = next(c for c in nb.comments if c.name == WRITTEN)
            return g.manual_score, bool(g.needs_manual_grade), c.manual_comment or ""

    def canvas_status(self) -> dict[str, str]:
        with open(self.work / "exports" / "canvas.csv", newline="") as fh:
            head, _possible, *rows = list(csv.reader(fh))
        # Canvas knows a student by name here (no SIS ids in this roster: those columns stay empty)
        by_name = {f"Doe {s.title()}": s for s in (*HAND, "dave")}  # last name first, as the column holds it
        return {by_name[r[0]]: dict(zip(head, r, strict=True))["attention status"] for r in rows}


def _written(text: str, image: bool = False) -> str:
    return text + ("\n\n![my derivation](attachment:derivation.png)" if image else "")


def _formgrader_session(lp: HandLoop, actions) -> dict:
    """Start formgrader on 127.0.0.1 and run ``actions(page, base, out)`` in headless Chromium."""
    from browser_support import CHROMIUM_ARGS, chromium_path, driver, formgrader_server

    token = "hand-grading-token"
    out: dict[str, object] = {}
    with formgrader_server(lp.tmp, lp.env, lp.tmp / f"jupyter-{len(list(lp.tmp.glob('jupyter-*')))}.log",
                           token) as base:
        with driver() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_page(extra_http_headers={"Authorization": f"token {token}"})
            try:
                actions(page, base, out)
            except Exception:
                page.screenshot(path=str(lp.tmp / "formgrader-failure.png"))
                raise
            finally:
                browser.close()
    return out


def _submission_ids(lp: HandLoop) -> dict[str, str]:
    with lp.db() as gb:
        return {s: gb.find_submission_notebook(NB, "attention", s).id for s in HAND}


def _enter_score(page, grade_id: str, points: float) -> None:
    """Type a score into formgrader's box, as a grader does, until formgrader saves it (the page
    binds its boxes only once it has fetched the grades, a moment after the network settles)."""
    box = page.locator(f"input#{grade_id}")
    for attempt in range(4):
        try:
            with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT",
                                      timeout=15_000):
                box.fill(str(points))
                box.press("Enter")
            return
        except Exception:
            if attempt == 3:
                raise
            box.fill("")


def _hand_grade_then_autograde(page, base, out, lp: HandLoop) -> None:
    ids = _submission_ids(lp)
    for s, points in HAND.items():
        page.goto(f"{base}/formgrader/submissions/{ids[s]}/?index=0", wait_until="networkidle")
        _enter_score(page, WRITTEN, points)
    out["hand_graded"] = {s: lp.grade_of(s) for s in HAND}
    page.goto(f"{base}/formgrader/manage_submissions/attention", wait_until="networkidle")
    page.locator("tr", has_text="alice").first.locator("td.autograde a").click(timeout=120_000)
    modal = page.locator("#success-modal, #error-modal").first
    modal.wait_for(timeout=300_000)
    out["autograde_modal"] = modal.inner_text()


def _read_comment_boxes(page, base, out, lp: HandLoop) -> None:
    ids = _submission_ids(lp)
    for s in ("bob", "carol"):
        page.goto(f"{base}/formgrader/submissions/{ids[s]}/?index=0", wait_until="networkidle")
        box = f"{WRITTEN}-comment"
        try:  # the page fills the box once its comments are fetched
            page.wait_for_function(f"document.getElementById('{box}').value.length > 0", timeout=30_000)
        except Exception:
            pass
        out[f"{s}_comment_box"] = page.locator(f"textarea#{box}").input_value()


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    lp = HandLoop(tmp_path_factory.mktemp("hand"))
    seen: dict[str, object] = {}
    roster = lp.tmp / "roster.csv"
    roster.write_text("id,first_name,last_name,email\n"
                      + "".join(f"{s},{s.title()},Doe,{s}@example.org\n" for s in (*HAND, "dave")))
    lp.nbgrader("db", "student", "import", str(roster))
    lp.nbgrader("generate_assignment", "attention", "--force")
    model = {STDS: _answer(NB, STDS)}
    lp.hand_in("alice", {**model, WRITTEN: _answer(NB, WRITTEN)})
    lp.hand_in("bob", {**model, WRITTEN: "Variances add over the d_k terms."})
    lp.hand_in("carol", {**model, WRITTEN: _written("Each term has variance 1.", image=True)},
               {"derivation.png": {"image/png": PNG_A}})

    # 1. make grade, hand-grading in formgrader, then the Autograde button on alice
    seen["first_run"] = lp.make_grade().stdout
    seen["first_summary"] = (lp.work / "grading-summary.txt").read_text()
    seen.update(_formgrader_session(lp, lambda page, base, out: _hand_grade_then_autograde(page, base, out, lp)))
    seen["after_button"] = {s: lp.grade_of(s) for s in HAND}

    # 2. bob's grade back in the queue, as an earlier version's Autograde button left it
    with lp.db() as gb:
        g = gb.find_grade(WRITTEN, NB, "attention", "bob")
        g.needs_manual_grade = True
        gb.db.commit()
    seen["legacy_bob"] = lp.grade_of("bob")
    lp.make_grade()
    seen["after_make_grade"] = {s: lp.grade_of(s) for s in HAND}
    lp.make_grade("--force")
    seen["after_force"] = {s: lp.grade_of(s) for s in HAND}
    seen["canvas_after_force"] = lp.canvas_status()

    # 3. bob changes only his written answer, carol only her pasted image (same timestamp.txt)
    lp.hand_in("bob", {**model, WRITTEN: "Each of the d_k products has variance 1; they are independent."})
    lp.hand_in("carol", {**model, WRITTEN: _written("Each term has variance 1.", image=True)},
               {"derivation.png": {"image/png": PNG_B}})
    seen["resubmitted_run"] = lp.make_grade().stdout
    seen["after_resubmission"] = {s: lp.grade_of(s) for s in HAND}
    seen["canvas_after_resubmission"] = lp.canvas_status()
    seen["summary_pending"] = (lp.work / "grading-summary.txt").read_text()
    seen["autograded"] = {s: nbformat.read(lp.work / "autograded" / s / "attention" / f"{NB}.ipynb", as_version=4)
                          for s in ("bob", "carol")}
    seen["feedback_bob"] = (lp.work / "feedback" / "bob" / "attention" / f"{NB}.html").read_text()
    seen.update(_formgrader_session(lp, lambda page, base, out: _read_comment_boxes(page, base, out, lp)))

    # 4. what waits is named by grades-final and release_feedback
    seen["grades_final"] = lp.run(str(ROOT / ".venv" / "bin" / "python"), "-m", "autograder.grade", "--finish",
                                  cwd=ROOT)
    seen["release_feedback"] = lp.nbgrader("release_feedback", "attention")

    # 5. dave, put in submitted/ by hand, autograded with nbgrader's own command
    lp.hand_in("dave", {**model, WRITTEN: "The variance is d_k."})
    seen["dave_autograde"] = lp.nbgrader("autograde", "attention", "--student", "dave", ok=False)
    seen["dave"] = lp.grades_of("dave")
    # eve's comes in an LMS download: ./nbgrader zip_collect, then nbgrader's autograde
    archive = lp.course / "downloaded" / "attention" / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "lms.zip", "w") as z:
        z.writestr(f"eve__{NB}.ipynb", nbformat.writes(lp.answered({**model, WRITTEN: "Sums of variances."})))
    seen["zip_collect"] = lp.nbgrader("zip_collect", "attention",
                                      "--FileNameCollectorPlugin.named_regexp=.*/(?P<student_id>[a-z]+)__(?P<file_id>[^/]+)",
                                      ok=False)
    seen["eve_in_submitted"] = sorted(p.name for p in (lp.work / "submitted" / "eve").rglob("*"))
    seen["eve_autograde"] = lp.nbgrader("autograde", "attention", "--student", "eve", ok=False)
    seen["eve"] = lp.grades_of("eve")
    return lp, seen


def test_autograde_button_keeps_hand_grades_settled(loop):
    _, seen = loop
    assert "Success" in seen["autograde_modal"], seen["autograde_modal"]
    for s, points in HAND.items():
        assert seen["hand_graded"][s][:2] == (points, False), s
    assert seen["after_button"]["alice"][:2] == (3.0, False), seen["after_button"]


def test_make_grade_settles_unchanged_answers_that_hold_their_scores(loop):
    _, seen = loop
    assert seen["legacy_bob"][:2] == (1.0, True)  # the queue as an earlier button left it
    for s, points in HAND.items():
        assert seen["after_make_grade"][s][:2] == (points, False), (s, seen["after_make_grade"])
        assert seen["after_force"][s][:2] == (points, False), (s, seen["after_force"])
    assert all(seen["canvas_after_force"][s] == "final" for s in HAND), seen["canvas_after_force"]


def _written_cell(nb):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN)


def test_changed_written_answer_is_autograded_again_and_waits_for_a_new_grade(loop):
    _, seen = loop
    assert "they are independent" in _written_cell(seen["autograded"]["bob"]).source
    assert "they are independent" in seen["feedback_bob"]
    score, waiting, comment = seen["after_resubmission"]["bob"]
    assert (score, waiting) == (None, True), seen["after_resubmission"]["bob"]
    assert "Previous hand grade" in comment and "1 / 3" in comment, comment
    assert seen["canvas_after_resubmission"]["bob"].startswith("PENDING"), seen["canvas_after_resubmission"]
    assert seen["after_resubmission"]["alice"][:2] == (3.0, False)  # unchanged: stays final
    # what the instructor sees in formgrader's grading page: the previous grade in the comment box
    assert "Previous hand grade" in seen["bob_comment_box"] and "1 / 3" in seen["bob_comment_box"]


def test_changed_pasted_image_alone_sends_the_answer_back_to_the_queue(loop):
    _, seen = loop
    cell = _written_cell(seen["autograded"]["carol"])
    assert cell.attachments["derivation.png"]["image/png"] == PNG_B
    score, waiting, comment = seen["after_resubmission"]["carol"]
    assert (score, waiting) == (None, True), seen["after_resubmission"]["carol"]
    assert "2 / 3" in comment and "2 / 3" in seen["carol_comment_box"]
    assert seen["canvas_after_resubmission"]["carol"].startswith("PENDING")


def test_answers_awaiting_hand_grading_are_named_everywhere(loop):
    _, seen = loop
    first = seen["first_summary"]
    assert "written answers awaiting hand-grading (not final; PENDING in the LMS files): 3" in first, first
    assert f"alice/attention/{NB}: {WRITTEN}" in first
    pending = seen["summary_pending"]
    assert "written answers awaiting hand-grading (not final; PENDING in the LMS files): 2" in pending, pending
    assert f"bob/attention/{NB}: {WRITTEN}" in pending and f"carol/attention/{NB}: {WRITTEN}" in pending
    printed = seen["resubmitted_run"]  # the summary make grade prints
    assert "written answers awaiting hand-grading (not final; PENDING in the LMS files): 2" in printed
    assert f"bob/attention/{NB}: {WRITTEN}" in printed and f"carol/attention/{NB}: {WRITTEN}" in printed
    line = "written answers awaiting hand-grading: 2 — bob: 04; carol: 04"
    final = seen["grades_final"]
    assert final.returncode == 0 and f"warning: {line}" in final.stdout, final.stdout
    released = seen["release_feedback"]
    assert line in released.stdout + released.stderr, released.stderr[-2000:]


def test_awaiting_hand_grading_returns_sorted_records(loop):
    from autograder.nbgrader_ext.gradebook_state import awaiting_hand_grading

    lp, _ = loop
    waiting = awaiting_hand_grading(str(lp.work / "gradebook.db"))
    assert [tuple(w) for w in waiting] == [(s, "attention", NB, WRITTEN) for s in ("bob", "carol", "dave", "eve")]
    assert awaiting_hand_grading(f"sqlite:///{lp.work / 'gradebook.db'}") == waiting
    assert waiting[0].student == "bob" and waiting[0].grade_id == WRITTEN
    assert awaiting_hand_grading(str(lp.tmp / "none.db")) == [] and not (lp.tmp / "none.db").exists()


def test_hand_placed_submission_is_autograded_by_nbgraders_own_command(loop):
    _, seen = loop
    result = seen["dave_autograde"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert isinstance(seen["dave"], dict), seen["dave"]
    assert seen["dave"][f"{STDS}-public"] == (1, False) and seen["dave"][f"{STDS}-hidden"] == (2, False)
    assert seen["dave"][WRITTEN][1] is True
    # nbgrader's warnings for what every notebook of the course does (hidden tests put back, compare()
    # cells not graded) read as corruption: they are kept out and said once, as what they are
    log = result.stdout + result.stderr
    assert "has changed!" not in log and "does not exist in the database" not in log, log[-3000:]
    assert "nbgrader put back the hidden tests of" in log, log[-3000:]


def test_zip_collected_submission_lands_in_submitted_and_is_autograded(loop):
    _, seen = loop
    assert seen["zip_collect"].returncode == 0, seen["zip_collect"].stderr[-3000:]
    assert f"{NB}.ipynb" in seen["eve_in_submitted"], seen["eve_in_submitted"]  # where make grade reads
    assert seen["eve_autograde"].returncode == 0, seen["eve_autograde"].stderr[-3000:]
    assert isinstance(seen["eve"], dict), seen["eve"]
    assert seen["eve"][f"{STDS}-public"] == (1, False) and seen["eve"][f"{STDS}-hidden"] == (2, False)

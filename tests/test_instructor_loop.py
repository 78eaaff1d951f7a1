"""The instructor's loop, end to end, with nbgrader's own tools on a temporary exchange.

A two-notebook course (``01-embeddings``: one function; ``04-scaling``: one function and a written
answer) keeps it cheap. Three students with a roster; the instructor's *user* nbgrader config sets
the exchange and a late penalty (``zero``), the course config is ``autograder/nbgrader_config.py``.

1. ``nbgrader db student import`` (roster), ``generate_assignment``, ``release_assignment``;
2. alice, bob and carol ``fetch_assignment`` and ``submit`` as themselves (``--student``): alice
   the model answers, bob a wrong ``embed``, carol the stubs plus a helper cell of her own;
3. ``nbgrader collect`` -> ``submitted/`` (plus dave, handed in by other means, on no roster)
   -> ``make grade`` (``python -m autograder.grade``);
4. the due date passes, carol resubmits a correct ``embed``, ``collect --update``;
5. formgrader (``jupyter server`` on 127.0.0.1, headless Chromium, network cut): a real click on
   carol's *Autograde* button (fresh verdict, late penalty), hand-grading of the three written
   answers in formgrader's grading page (a real score input), then the assignment's *Generate
   Feedback* and *Release Feedback* buttons;
6. students ``fetch_feedback``;
7. ``make grade`` again: nothing graded again, nothing hand-graded back in the queue;
8. nbgrader's ``grades.csv`` and the Canvas / Moodle exports.

Each step's grades are asserted from the gradebook; ``LOOP_TIMINGS`` records each step's seconds
(printed with ``pytest -s``).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from grading_support import ROOT, SOLUTIONS, TESTS
from nbgrader.api import Gradebook

NOTEBOOKS = ("01-embeddings", "04-scaling")
STUDENTS = ("alice", "bob", "carol")
BIN = Path(sys.executable).parent
COURSE_ID = "self-attention"
LOOP_TIMINGS: dict[str, float] = {}


def _answer(notebook: str, grade_id: str) -> str:
    """The model answer of one cell, without nbgrader's solution markers (what a student writes)."""
    nb = nbformat.read(SOLUTIONS / f"{notebook}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return "\n".join(ln for ln in cell.source.splitlines() if "SOLUTION" not in ln)


def _catalogue_body(name: str) -> str:
    text = (TESTS / "catalogue" / "wrong" / f"{name}.py").read_text()
    return "\n".join(ln for ln in text.splitlines() if not re.match(r"# \w+:", ln))


class Loop:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.course, self.work, self.exchange = tmp / "course", tmp / "work", tmp / "exchange"
        for nb in NOTEBOOKS:
            (self.course / "solutions" / "attention").mkdir(parents=True, exist_ok=True)
            shutil.copy(SOLUTIONS / f"{nb}.ipynb", self.course / "solutions" / "attention")
        self.exchange.mkdir(mode=0o777)
        self.work.mkdir()
        self.instructor_cfg, self.student_cfg = tmp / "instructor-config", tmp / "student-config"
        self.instructor_cfg.mkdir()
        self.student_cfg.mkdir()
        (self.instructor_cfg / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.Exchange.root = {str(self.exchange)!r}\n"
            "c.LateSubmissionPlugin.penalty_method = 'zero'\n")
        (self.student_cfg / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.Exchange.root = {str(self.exchange)!r}\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n")
        self.env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
                        AUTOGRADER_COURSE=str(self.course), AUTOGRADER_WORKDIR=str(self.work),
                        JUPYTER_CONFIG_DIR=str(self.instructor_cfg), PYDEVD_DISABLE_FILE_VALIDATION="1")

    # --- running things -------------------------------------------------------------------
    def run(self, *args: str, cwd: Path | None = None, env: dict | None = None, ok: bool = True):
        result = subprocess.run(list(args), cwd=cwd or ROOT / "autograder", env=env or self.env,
                                capture_output=True, text=True, timeout=900)
        if ok:
            assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        return result

    def nbgrader(self, *args: str, **kw):
        return self.run(str(BIN / "nbgrader"), *args, **kw)

    def student_env(self, student: str) -> dict:
        home = self.tmp / "home" / student
        home.mkdir(parents=True, exist_ok=True)
        return dict(self.env, JUPYTER_CONFIG_DIR=str(self.student_cfg), HOME=str(home))

    def as_student(self, student: str, *args: str):
        env = self.student_env(student)
        return self.nbgrader(*args, f"--student={student}", cwd=Path(env["HOME"]), env=env)

    def as_students(self, *args: str) -> None:
        """Every student runs the same nbgrader command, at the same time (as a class would)."""
        procs = {}
        for s in STUDENTS:
            env = self.student_env(s)
            procs[s] = subprocess.Popen([str(BIN / "nbgrader"), *args, f"--student={s}"], cwd=env["HOME"], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for s, p in procs.items():
            out, _ = p.communicate(timeout=600)
            assert p.returncode == 0, f"{s}: nbgrader {' '.join(args)} failed:\n{out[-3000:]}"

    def make_grade(self, *args: str):
        return self.run(sys.executable, "-m", "autograder.grade", "--workers", "2", *args, cwd=ROOT)

    def timed(self, step: str, fn, *args, **kw):
        t = time.perf_counter()
        out = fn(*args, **kw)
        LOOP_TIMINGS[step] = LOOP_TIMINGS.get(step, 0.0) + time.perf_counter() - t
        return out

    # --- students -------------------------------------------------------------------------
    def edit(self, student: str, notebook: str, answers: dict[str, str], added: str | None = None) -> None:
        path = self.tmp / "home" / student / "attention" / f"{notebook}.ipynb"
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(list(nb.cells)):
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                cell.source = answers[gid]
                if added is not None:
                    nb.cells.insert(i + 1, nbformat.v4.new_code_cell(added))
                    added = None
        nbformat.write(nb, path)

    # --- the gradebook --------------------------------------------------------------------
    def db(self) -> Gradebook:
        return Gradebook(f"sqlite:///{self.work / 'gradebook.db'}", COURSE_ID)

    def grades(self) -> dict[tuple[str, str, str], tuple[float, bool]]:
        """(student, notebook, grade id) -> (score, needs manual grading)."""
        out = {}
        with self.db() as gb:
            for s in (*STUDENTS, "dave"):
                for nb in NOTEBOOKS:
                    try:
                        sub = gb.find_submission_notebook(nb, "attention", s)
                    except Exception:
                        continue
                    for g in sub.grades:
                        out[s, nb, g.name] = (g.score, bool(g.needs_manual_grade))
        return out


EMBED, STDS, WRITTEN = "embed", "score_stds", "variance-derivation"
#: auto-scores after the first `make grade`: (student, notebook, grade id) -> points
FIRST = {
    ("alice", "01-embeddings", "embed-public"): 1, ("alice", "01-embeddings", "embed-hidden"): 2,
    ("alice", "04-scaling", "score_stds-public"): 1, ("alice", "04-scaling", "score_stds-hidden"): 2,
    ("bob", "01-embeddings", "embed-public"): 0, ("bob", "01-embeddings", "embed-hidden"): 0,
    ("bob", "04-scaling", "score_stds-public"): 1, ("bob", "04-scaling", "score_stds-hidden"): 2,
    ("carol", "01-embeddings", "embed-public"): 0, ("carol", "01-embeddings", "embed-hidden"): 0,
    ("carol", "04-scaling", "score_stds-public"): 0, ("carol", "04-scaling", "score_stds-hidden"): 0,
}
HAND = {"alice": 3.0, "bob": 1.0, "carol": 0.0}
COMMENTS = {"alice": r"Right: $\operatorname{Var}(q^\top k) = d_k$, so divide by $\sqrt{d_k}$."}


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """Run the whole loop once; each test below asserts what one step left behind."""
    lp = Loop(tmp_path_factory.mktemp("loop"))
    seen: dict[str, object] = {}
    names = {"alice": ("Alice", "Ames"), "bob": ("Bob", "Brown"), "carol": ("Carol", "Cho")}

    # 1. roster, generate, release
    roster = lp.tmp / "roster.csv"
    roster.write_text("id,first_name,last_name,email\n"
                      + "".join(f"{s},{first},{last},{s}@example.org\n" for s, (first, last) in names.items()))
    lp.timed("1 roster", lp.nbgrader, "db", "student", "import", str(roster))
    lp.timed("1 generate_assignment", lp.nbgrader, "generate_assignment", "attention", "--force")
    lp.timed("1 release_assignment", lp.nbgrader, "release_assignment", "attention", "--force")

    # 2. students fetch, answer, submit
    lp.timed("2 fetch_assignment", lp.as_students, "fetch_assignment", "attention")
    lp.edit("alice", "01-embeddings", {EMBED: _answer("01-embeddings", EMBED)})
    lp.edit("alice", "04-scaling", {STDS: _answer("04-scaling", STDS), WRITTEN: _answer("04-scaling", WRITTEN)})
    lp.edit("bob", "01-embeddings", {EMBED: _catalogue_body("embed_first_rows")})
    lp.edit("bob", "04-scaling", {STDS: _answer("04-scaling", STDS), WRITTEN: "Variances add over the d_k terms."})
    lp.edit("carol", "01-embeddings", {EMBED: "# YOUR CODE HERE\nraise NotImplementedError()"},
            added="def helper(E):\n    return E * 2")
    lp.timed("2 submit", lp.as_students, "submit", "attention")

    # 3. collect -> submitted/ -> make grade
    lp.timed("3 collect", lp.nbgrader, "collect", "attention")
    # dave is on no roster and handed in by e-mail: the instructor puts his notebooks (bob's) in submitted/
    (lp.work / "submitted" / "dave" / "attention").mkdir(parents=True)
    for nb in NOTEBOOKS:
        shutil.copy(lp.work / "submitted" / "bob" / "attention" / f"{nb}.ipynb",
                    lp.work / "submitted" / "dave" / "attention")
    seen["collected"] = sorted(str(p.relative_to(lp.work)) for p in (lp.work / "submitted").rglob("*") if p.is_file())
    seen["first_run"] = lp.timed("3 make grade (first run)", lp.make_grade).stdout
    seen["first"] = lp.grades()
    seen["first_summary"] = (lp.work / "grading-summary.txt").read_text()

    # 4. the due date passes; carol resubmits a correct embed; collect the newer submission
    due = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    lp.nbgrader("db", "assignment", "add", "attention", f"--duedate={due}")
    time.sleep(1.5)
    lp.edit("carol", "01-embeddings", {EMBED: _answer("01-embeddings", EMBED)})
    lp.timed("4 resubmit", lp.as_student, "carol", "submit", "attention")
    lp.timed("4 collect --update", lp.nbgrader, "collect", "attention", "--update")
    seen["before_button"] = lp.grades()

    # 5. formgrader in headless Chromium: Autograde button, hand-grading
    seen.update(lp.timed("5 formgrader (Chromium)", _formgrader, lp))
    seen["after_formgrader"] = lp.grades()

    # 6. feedback was generated and released with formgrader's buttons (step 5); students fetch it
    lp.timed("6 fetch_feedback", lp.as_students, "fetch_feedback", "attention")
    seen["feedback"] = {s: {p.stem: p.read_text()
                            for p in (lp.tmp / "home" / s / "attention" / "feedback").rglob("*.html")}
                        for s in STUDENTS}

    # 7. make grade again: nothing changed
    seen["second_run"] = lp.timed("7 make grade (again)", lp.make_grade).stdout
    seen["second"] = lp.grades()
    seen["second_summary"] = (lp.work / "grading-summary.txt").read_text()
    lp.timed("7 make grade STUDENT=bob", lp.make_grade, "--student", "bob")
    seen["one_student_summary"] = (lp.work / "grading-summary.txt").read_text()

    seen["still_there"] = sorted(str(p.relative_to(lp.work)) for p in (lp.work / "submitted").rglob("*")
                                 if p.is_file())
    # 8. exports
    with open(lp.work / "grades.csv") as fh:
        seen["grades_csv"] = {r["student_id"]: r for r in csv.DictReader(fh)}
    for name in ("canvas", "moodle"):
        with open(lp.work / "exports" / f"{name}.csv") as fh:
            seen[name] = list(csv.reader(fh))
    print("\ninstructor loop timings (s):", json.dumps({k: round(v, 1) for k, v in LOOP_TIMINGS.items()}, indent=1))
    return lp, seen


def _formgrader(lp: Loop) -> dict:
    """Start formgrader on 127.0.0.1, click carol's Autograde button, hand-grade the written answers,
    then click the assignment's Generate Feedback and Release Feedback buttons."""
    from browser_support import CHROMIUM_ARGS, chromium_path, driver, formgrader_server

    token = "loop-test-token"
    out: dict[str, object] = {"outside": []}
    with formgrader_server(lp.tmp, lp.env, lp.tmp / "jupyter-server.log", token) as base:
        with driver() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            # token auth on every request (the formgrader pages' own API calls included)
            page = browser.new_page(extra_http_headers={"Authorization": f"token {token}"})

            def route(r):
                if r.request.url.startswith(base) or r.request.url.startswith("data:"):
                    r.continue_()
                else:
                    out["outside"].append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(f"{base}/formgrader/manage_submissions/attention")
            row = page.locator("tr", has_text="carol").first
            try:
                row.locator("td.autograde a").click(timeout=120_000)
            except Exception:
                page.screenshot(path=str(lp.tmp / "formgrader.png"))
                raise
            modal = page.locator("#success-modal, #error-modal").first
            modal.wait_for(timeout=300_000)
            out["autograde_modal"] = modal.inner_text()
            # hand-grade the written answer of each student in formgrader's grading page
            with lp.db() as gb:
                ids = {s: gb.find_submission_notebook("04-scaling", "attention", s).id for s in STUDENTS}
            for s, points in HAND.items():
                # the page binds its inputs once its grades are fetched: wait for the network to settle
                page.goto(f"{base}/formgrader/submissions/{ids[s]}/?index=0", wait_until="networkidle")
                try:  # the page's formulas, typeset by MathJax from the server itself
                    page.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=30_000)
                except Exception:
                    pass
                out.setdefault("typeset", []).append(page.locator("mjx-container").count())
                if s in COMMENTS:  # typed in formgrader's comment box ("supports Markdown and MathJax")
                    comment = page.locator(f"textarea#{WRITTEN}-comment")
                    comment.fill(COMMENTS[s])
                    with page.expect_response(lambda r: "/formgrader/api/comment/" in r.url
                                              and r.request.method == "PUT", timeout=60_000):
                        comment.dispatch_event("change")
                box = page.locator(f"input#{WRITTEN}")
                box.fill(str(points))
                with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT",
                                          timeout=60_000):
                    box.press("Enter")
            # the assignment's feedback buttons, as an instructor clicks them after hand-grading
            for step in ("generate", "release"):
                page.goto(f"{base}/formgrader/manage_assignments", wait_until="networkidle")
                page.locator("tr", has_text="attention").first.locator(f"td.{step}-feedback a").click(timeout=60_000)
                modal = page.locator("#success-modal, #error-modal").first
                modal.wait_for(timeout=300_000)
                out[f"{step}_feedback_modal"] = modal.inner_text()
            browser.close()
    return out


# --- each step's expected grades ------------------------------------------------------------

def test_collect_lands_where_make_grade_reads(loop):
    _, seen = loop
    for s in STUDENTS:
        for name in ("01-embeddings.ipynb", "04-scaling.ipynb", "timestamp.txt", "submission_secret.txt"):
            assert f"submitted/{s}/attention/{name}" in seen["collected"], (s, name)
    assert "4 submissions, 8 notebooks: 8 to grade" in seen["first_run"], seen["first_run"]
    # make grade and formgrader never delete or rewrite what collect put there
    assert set(seen["collected"]) <= set(seen["still_there"])


def test_first_make_grade_scores_every_collected_student(loop):
    _, seen = loop
    for key, points in FIRST.items():
        assert seen["first"][key][0] == points, key
    for s in ("alice", "bob"):  # written answers wait for a human
        assert seen["first"][s, "04-scaling", WRITTEN][1] is True
    assert seen["first"]["carol", "04-scaling", WRITTEN] == (0, False)  # nbgrader: "No response"
    for (s, nb, gid), points in FIRST.items():  # dave handed in bob's notebooks by other means
        if s == "bob":
            assert seen["first"]["dave", nb, gid][0] == points
    assert "students not on the roster (no name in the gradebook): 1" in seen["first_summary"]
    assert "    - dave" in seen["first_summary"]


def test_added_cell_is_shown_not_run_and_explained(loop):
    lp, _ = loop
    nb = nbformat.read(lp.work / "autograded" / "carol" / "attention" / "01-embeddings.ipynb", as_version=4)
    texts = [c.source for c in nb.cells]
    helper = next(i for i, t in enumerate(texts) if "def helper(E)" in t)
    assert "was not run" in texts[helper - 1]
    assert not nb.cells[helper].get("outputs")
    assert "1 cell(s) you added" in texts[0]  # the grading notes at the top


def test_autograde_button_grades_the_resubmission_freshly(loop):
    _, seen = loop
    assert seen["before_button"]["carol", "01-embeddings", "embed-public"][0] == 0
    assert "Success" in seen["autograde_modal"], seen["autograde_modal"]
    after = seen["after_formgrader"]
    assert after["carol", "01-embeddings", "embed-public"][0] == 1
    assert after["carol", "01-embeddings", "embed-hidden"][0] == 2
    # the network is cut, and formgrader's pages ask nothing of it
    assert not seen["outside"], seen["outside"]


def test_formgraders_grading_page_typesets_math_offline(loop):
    _, seen = loop
    assert seen["typeset"] and all(n > 0 for n in seen["typeset"]), seen["typeset"]


def test_feedback_buttons_generate_and_release(loop):
    _, seen = loop
    assert "Successfully generated feedback of 'attention'" in seen["generate_feedback_modal"], \
        seen["generate_feedback_modal"]
    assert "Successfully released feedback of 'attention'" in seen["release_feedback_modal"], \
        seen["release_feedback_modal"]


def test_hand_grades_are_saved_and_survive_make_grade(loop):
    _, seen = loop
    for s, points in HAND.items():
        assert seen["after_formgrader"][s, "04-scaling", WRITTEN] == (points, False), s
        assert seen["second"][s, "04-scaling", WRITTEN] == (points, False), s


def test_second_make_grade_redoes_nothing(loop):
    _, seen = loop
    assert "notebooks graded now: 0" in seen["second_summary"], seen["second_summary"]
    assert "students put through nbgrader autograde: 0" in seen["second_summary"]
    assert seen["second"] == seen["after_formgrader"]
    assert "submissions: 1; notebooks graded now: 0, unchanged since the last run: 2" in seen["one_student_summary"]


def test_students_fetch_their_feedback(loop):
    _, seen = loop
    for s in STUDENTS:
        assert set(seen["feedback"][s]) >= set(NOTEBOOKS), (s, seen["feedback"][s].keys())
    alice = seen["feedback"]["alice"]["04-scaling"]
    assert "6.0 / 6.0" in alice or "6 / 6" in alice
    assert "first len(ids) rows" in " ".join(seen["feedback"]["bob"]["01-embeddings"].split())


def test_feedback_loads_nothing_from_outside_and_shows_math(loop):
    """A student's fetched feedback page in Chromium with the network cut: no outside request,
    formulas drawn (MathML rendered at export, not raw TeX)."""
    from browser_support import CHROMIUM_ARGS, chromium_path, driver

    lp, _ = loop
    page_file = next((lp.tmp / "home" / "alice" / "attention" / "feedback").rglob("04-scaling.html"))
    outside = []
    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page()

        def route(r):
            if r.request.url.startswith("file://") or r.request.url.startswith("data:"):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.goto(page_file.as_uri())
        maths = page.locator("math")
        assert maths.count() > 5
        box = maths.first.bounding_box()
        text = page.inner_text("body")
        browser.close()
    assert outside == [], outside
    assert "data-selfattn-mathjax" not in page_file.read_text()  # formgrader's loader is not kept
    assert box and box["height"] > 5 and box["width"] > 5
    assert "\\mathbb" not in text and "$d_k$" not in text


def test_fetched_feedback_draws_the_comments_math_and_names_each_exercise(loop):
    """alice's fetched feedback in Chromium: the TeX of the comment typed in formgrader is drawn as
    MathML (a superscript, a subscript), and the test-cell links name their exercise."""
    from browser_support import CHROMIUM_ARGS, chromium_path, driver

    lp, _ = loop
    page_file = next((lp.tmp / "home" / "alice" / "attention" / "feedback").rglob("04-scaling.html"))
    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page.goto(page_file.as_uri())
        footer = page.locator(".panel-footer").all_inner_texts()
        math = page.eval_on_selector_all(".panel-footer math", "ms => ms.map(m => [m.namespaceURI, "
                                         "m.querySelectorAll('msup').length, m.querySelectorAll('msub').length])")
        toc = page.locator("#toc li").all_inner_texts()
        browser.close()
    assert any("Right:" in t for t in footer) and not any("$" in t or "\\sqrt" in t for t in footer), footer
    assert len(math) == 2 and all(ns == "http://www.w3.org/1998/Math/MathML" for ns, _, _ in math), math
    assert math[0][1] == 1 and math[0][2] >= 1, math
    assert any(t.startswith("score_stds: hidden checks") for t in toc) and not any("Test cell" in t for t in toc), toc


def test_late_penalty_from_the_user_config_is_honoured(loop):
    _, seen = loop
    rows = seen["grades_csv"]
    assert float(rows["alice"]["score"]) == 9.0
    assert float(rows["bob"]["score"]) == 4.0
    assert float(rows["carol"]["raw_score"]) == 3.0
    assert float(rows["carol"]["score"]) == 0.0  # penalty_method = 'zero', set in the user config only
    assert "late submissions: 1" in seen["second_summary"]


def test_lms_exports(loop):
    _, seen = loop
    head, possible, *rows = seen["canvas"]
    assert head[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert possible[0] == "Points Possible"
    # no SIS ids in this roster: those columns are empty, rows are told apart by the student's name
    assert {r[2] for r in rows} == {""} and {r[3] for r in rows} == {""}
    names = {"Ames Alice": "alice", "Brown Bob": "bob", "Cho Carol": "carol", "dave": "dave"}
    by_id = {names[r[0]]: dict(zip(head, r, strict=True)) for r in rows}
    assert by_id["alice"]["attention (total)"] == "9"
    assert by_id["bob"]["attention: 01-embeddings: embed"] == "0"
    assert by_id["bob"]["attention: 04-scaling: variance-derivation"] == "1"
    assert by_id["carol"]["attention late"] == "late"
    assert by_id["carol"]["attention (total)"] == "0"
    assert all(by_id[s]["attention status"] == "final" for s in STUDENTS)
    assert by_id["dave"]["attention status"] == "PENDING: 1 answers to hand-grade"  # nobody graded his answer
    mhead, *mrows = seen["moodle"]
    assert mhead[:3] == ["username", "ID number", "Email address"]
    assert {r[0]: r[2] for r in mrows}["bob"] == "bob@example.org"

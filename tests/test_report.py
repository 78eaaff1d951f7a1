"""The class report (``make report``) of a small graded class, opened in headless Chromium with
every outside request aborted: it loads nothing from outside, its counts are the verdicts', the
similarity section finds a planted copy (renamed variables, new comments and layout) and not
independent correct answers, and hostile text in answers stays text.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter

import pytest
from browser_support import CHROMIUM_ARGS, PageReport, attach_recorders, chromium_path, serve
from grading_support import RELEASE, SOLUTIONS, entries, grade, place, submission_text, with_answers
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.nbgrader_ext import gradebook_schema
from autograder.notes import NoteKind, notes_of
from autograder.reporting.similarity import fingerprints, normalise, similar_pairs

NOTEBOOKS = ["03-softmax-attention", "07-masking"]
PWN = "<img src=x onerror=\"window.__pwned=1\"></pre><script>window.__pwned=1</script>"

ORIGINAL = f'''def attention(Q, K, V, mask=None):
    # {PWN}
    d_k = Q.shape[1]
    scores = np.dot(Q, K.T) / d_k ** 0.5
    if mask is not None:
        scores = scores + mask
    peak = np.amax(scores, axis=1)[:, None]
    weights = np.exp(scores - peak)
    totals = np.sum(weights, axis=1)[:, None]
    return np.dot(weights / totals, V)
'''
COPY = '''def attention(q, k, v, mask=None):
    """my own work"""
    width = q.shape[1]
    s = np.dot(q, k.T)/width**0.5
    if mask is not None: s = s + mask
    m = np.amax(s, axis=1)[:, None]
    e = np.exp(s - m)
    z = np.sum(e, axis=1)[:, None]   # normaliser
    return np.dot(e/z, v)
'''
NAMES = {"alice": ("Alice", "Ames"), "fixer": ("Fay", "Fix")}
UNNAMED = "def attention(Q, K, V, mask=None):\n    return softmax(scaled_scores(Q, K)) @ V + 1.0\n"


def _with_answer(notebook: str, grade_id: str, source: str) -> str:
    return with_answers((SOLUTIONS / f"{notebook}.ipynb").read_text(), {grade_id: source})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    work = tmp_path_factory.mktemp("reportclass")
    by_name = {e.path.stem: e for e in entries("catalogue/wrong") + entries("catalogue/correct")
               + entries("adversarial")}
    for nb in NOTEBOOKS:
        place(work, "alice", nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
        place(work, "bob", nb, (RELEASE / f"{nb}.ipynb").read_text())
    for student in ("axis-1", "axis-2", "axis-3"):
        place(work, student, NOTEBOOKS[0], submission_text(by_name["attention_softmax_over_queries"]))
    for stem in ("attention_unscaled", "attention_einsum_large_negative", "attention_loops", "attention_noisy",
                 "infinite_loop", "notebook_invalid_json", "causal_lower_triangle", "softmax_not_normalised"):
        place(work, stem.replace("_", "-"), by_name[stem].notebook, submission_text(by_name[stem]))
    place(work, "original", NOTEBOOKS[0], _with_answer(NOTEBOOKS[0], "attention", ORIGINAL))
    place(work, "copier", NOTEBOOKS[0], _with_answer(NOTEBOOKS[0], "attention", COPY))
    place(work, "guess", NOTEBOOKS[0], _with_answer(NOTEBOOKS[0], "attention", UNNAMED))
    # a due date in the gradebook, and one student who handed in a day after it
    from nbgrader.api import Gradebook

    # a written answer nobody has graded yet
    place(work, "writer", "04-scaling", (SOLUTIONS / "04-scaling.ipynb").read_text())
    # fixer hands in an unscaled attention first, and the model answer after it was graded
    place(work, "fixer", NOTEBOOKS[0], submission_text(by_name["attention_unscaled"]))
    gradebook_schema.install()  # as the course configuration does: no `alembic` command needed
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        gb.update_or_create_assignment("attention", duedate="2026-11-01 12:00:00 UTC")
        for sid, (first, last) in NAMES.items():
            gb.update_or_create_student(sid, first_name=first, last_name=last)
    (work / "submitted" / "guess" / "attention" / "timestamp.txt").write_text("2026-11-02 12:00:00 UTC")
    result = grade(work, "--workers", "2", "--cpu-seconds", "3", "--memory-mb", "1024")
    assert result.returncode == 0, result.stdout + result.stderr
    place(work, "fixer", NOTEBOOKS[0], (SOLUTIONS / f"{NOTEBOOKS[0]}.ipynb").read_text())
    result = grade(work, "--workers", "2", "--cpu-seconds", "3", "--memory-mb", "1024")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "class report in" in result.stdout, result.stdout
    verdicts = {(p.parent.parent.name, p.stem): json.loads(p.read_text())
                for p in (work / ".grading" / "verdicts").glob("*/*/*.json")}
    return work, verdicts


@pytest.fixture(scope="module")
def page(graded):
    from browser_support import driver

    work, _ = graded
    with serve(work / "report") as base, driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page()
            report = PageReport(base)
            attach_recorders(pg, base, report)
            pg.goto(base + "index.html", wait_until="load")
            yield pg, report
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_axe_finds_no_violation_at_any_impact_in_the_report_and_feedback(site_browser, graded, dark):
    """axe-core on the class report and on the feedback of a student who passes and of one who fails,
    light and dark, finds nothing at any impact (the grader writes these pages: every part of them in a
    landmark, one main): self-contained files, opened from disk as an instructor or a student opens them."""
    from browser_support import EVERY_IMPACT, audit

    work, _ = graded
    pages = ["report/index.html", *(f"feedback/{s}/attention/{NOTEBOOKS[0]}.html" for s in ("alice", "bob"))]
    found = {rel: audit(work.as_uri() + "/", site_browser[1], rel, dark, EVERY_IMPACT) for rel in pages}
    theme = "dark" if dark else "light"
    assert {rel: bad for rel, (_, bad) in found.items() if bad} == {}, f"axe-core ({theme}): {found}"


def _rows(pg, section: str, nth: int = 0) -> list[list[str]]:
    return pg.eval_on_selector_all(
        f"#{section} table >> nth={nth} >> tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")


@pytest.mark.browser
def test_report_loads_nothing_from_outside_and_runs_no_student_text(page):
    pg, report = page
    assert report.outside_requests == []
    assert report.console_errors == [] and report.failed_requests == []
    assert pg.evaluate("window.__pwned") is None
    assert pg.locator("script").count() == 1
    assert "onerror" in pg.text_content("#similarity")  # shown as text, side by side


@pytest.mark.browser
def test_every_figure_has_alt_text(page):
    pg, _ = page
    labels = pg.eval_on_selector_all("svg", "s => s.map(x => [x.getAttribute('role'), x.getAttribute('aria-label'),"
                                            " x.querySelector('title') && x.querySelector('title').textContent])")
    assert len(labels) >= 2 * len(NOTEBOOKS)
    for role, label, title in labels:
        assert role == "img" and label and "Histogram of" in label and title == label


@pytest.mark.browser
def test_check_counts_match_the_verdicts(page, graded):
    pg, _ = page
    _, verdicts = graded
    passed, total = Counter(), Counter()
    for v in verdicts.values():
        for cid, msg in v.get("checks", {}).items():
            total[cid] += 1
            passed[cid] += msg is None
    rows = {r[1]: r for r in _rows(pg, "checks")}
    assert set(rows) == set(total)
    for cid, row in rows.items():
        _nb, _cid, _desc, ok, bad, unanswered, _rate = row
        assert int(ok) == passed[cid], cid
        assert int(ok) + int(bad) + int(unanswered) == total[cid], cid


@pytest.mark.browser
def test_named_mistakes_are_counted_with_who(page):
    pg, _ = page
    named = {r[1].split(":")[0]: r for r in _rows(pg, "mistakes", 0)}
    row = named["softmax taken over the queries (axis 0)"]
    assert row[2] == "3" and row[3] == "axis-1, axis-2, axis-3"
    assert named["missing the 1/√d_k scaling of the scores"][3] == "attention-unscaled"
    unnamed = _rows(pg, "mistakes", 1)
    assert any("guess" in r[3] and r[0] == "attention" for r in unnamed)
    assert "softmax taken over the queries (axis 0): 3 students" in pg.inner_text("#mistakes ul")


@pytest.mark.browser
def test_faults_and_anomalies_are_listed(page):
    pg, _ = page
    kinds = {(r[0], r[3]) for r in _rows(pg, "faults")}
    assert ("infinite-loop", "time-out") in kinds
    assert ("notebook-invalid-json", "unreadable notebook") in kinds
    assert ("axis-1", "missing notebook") in kinds  # handed in 03 only
    assert ("bob", "blank notebook") in kinds
    # one row per student and anomaly, naming the notebooks (not one row per notebook)
    bob = [r for r in _rows(pg, "faults") if r[0] == "bob" and r[3] == "blank notebook"]
    assert len(bob) == 1 and all(nb in bob[0][2] for nb in NOTEBOOKS), bob
    assert ("guess", "late") in kinds and ("alice", "late") not in kinds


@pytest.mark.browser
def test_messages_show_their_code_as_code_not_as_markdown(page):
    """Grading notes are Markdown ("fix `softmax`"); the report shows their code spans as code and
    never a backtick."""
    pg, _ = page
    blamed = [r for r in _rows(pg, "faults") if r[3] == "dependency blamed"]
    assert any("calls your softmax" in r[4] for r in blamed), blamed
    shown = pg.eval_on_selector_all("td, li", "els => els.map(e => e.textContent)")
    assert not [text for text in shown if "`" in text]
    assert pg.locator("#faults td code").count() >= 2


@pytest.mark.browser
def test_similarity_finds_the_planted_copy_only(page):
    pg, _ = page
    pairs = {(r[2], r[3], r[4]) for r in _rows(pg, "similarity")}
    assert ("attention", "copier", "original") in pairs
    # three identical wrong answers are one cluster; nothing else: correct variants, the
    # reference (alice) and the stubs (bob) are not pairs
    others = {p for p in pairs if p[0] != "attention" or {"copier", "original"} != set(p[1:])}
    assert all(set(p[1:]) <= {"axis-1", "axis-2", "axis-3"} for p in others), others


@pytest.mark.browser
def test_tables_sort_when_a_header_is_clicked(page):
    pg, _ = page
    header = pg.locator("#checks th", has_text="passed")
    header.click()
    up = [int(r[3]) for r in _rows(pg, "checks")]
    header.click()
    down = [int(r[3]) for r in _rows(pg, "checks")]
    assert up == sorted(up) and down == sorted(up, reverse=True) and up != down


def test_fingerprints_ignore_names_comments_and_layout():
    assert "d_k" not in normalise(ORIGINAL) and "#" not in " ".join(normalise(ORIGINAL))
    a, b = fingerprints(ORIGINAL), fingerprints(COPY)
    assert len(a & b) / min(len(a), len(b)) >= 0.7
    solution = "def f(x):\n    return np.exp(x) / np.exp(x).sum()\n"
    independent = {"s1": solution, "s2": "def f(y):\n    e = np.exp(y)\n    return e / e.sum()\n",
                   "s3": solution.replace("x", "z")}
    assert similar_pairs("f", independent, [solution, "raise NotImplementedError()"]) == []


@pytest.mark.browser
def test_on_a_phone_nothing_is_wider_than_the_screen(page):
    """At 390 px the page does not scroll sideways (wide tables scroll inside their own box) and the
    similar answers stack; in dark mode the text stays light on dark."""
    pg, _ = page
    pg.set_viewport_size({"width": 390, "height": 844})
    try:
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
        # no table needs scrolling sideways either: its rows become labelled blocks
        wide = pg.eval_on_selector_all("table", "ts => ts.filter(t => t.parentElement.scrollWidth > "
                                                "t.parentElement.clientWidth + 1).length")
        assert wide == 0
        pg.emulate_media(color_scheme="dark")
        body = "getComputedStyle(document.body)"
        colours = pg.evaluate(f"[{body}.color, {body}.backgroundColor]")
        assert colours == ["rgb(227, 227, 227)", "rgb(27, 29, 33)"], colours
    finally:
        pg.emulate_media(color_scheme="light")
        pg.set_viewport_size({"width": 1280, "height": 720})


def _all_pairs(exercise, answers, excluded):
    """The definition similar_pairs implements, comparing every two answers (slow, for the test)."""
    from autograder.reporting import similarity as sim

    base = set().union(*(fingerprints(s) for s in excluded))
    skip = {s.strip() for s in excluded}
    prints = {s: fingerprints(src) - base for s, src in answers.items() if src.strip() not in skip}
    counts = Counter(f for fp in prints.values() for f in fp)
    limit = max(3, int(sim.COMMON * len(prints)))
    prints = {s: {f for f in fp if counts[f] <= limit} for s, fp in prints.items()}
    students = sorted(s for s, fp in prints.items() if len(fp) >= sim.MIN_FINGERPRINTS)
    out = []
    for i, a in enumerate(students):
        for b in students[i + 1 :]:
            shared = len(prints[a] & prints[b])
            score = shared / min(len(prints[a]), len(prints[b]))
            if shared >= sim.MIN_SHARED and score >= sim.THRESHOLD:
                out.append(sim.Pair(exercise, a, b, round(score, 3), shared))
    return sorted(out, key=lambda p: (-p.score, p.a, p.b))


_LINES = ["s = q @ k.T / np.sqrt(q.shape[-1])", "s = s - s.max(axis=-1, keepdims=True)", "w = np.exp(s)",
          "w = w / w.sum(axis=-1, keepdims=True)", "for i in range(len(w)):\n        w[i] = w[i] / w[i].sum()",
          "m = np.triu(np.ones((3, 3)), 1) * -1e9", "s = s + m", "out = w @ v", "t = s.T", "u = t * 2 + 1"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_LINES), min_size=1, max_size=7), min_size=2, max_size=14))
def test_similar_pairs_are_those_of_comparing_every_two_answers(bodies):
    """The index from fingerprints to answers finds exactly the pairs all-pairs comparison finds."""
    answers = {f"s{i:02d}": "def f(q, k, v):\n    " + "\n    ".join(body) + "\n    return out\n"
               for i, body in enumerate(bodies)}
    excluded = ["def f(q, k, v):\n    raise NotImplementedError()\n"]
    assert similar_pairs("f", answers, excluded) == _all_pairs("f", answers, excluded)


# --- the first screen, the new sections, the CSV files, the phone --------------------------------

def _exercise_counts(verdicts) -> dict[tuple[str, str], tuple[int, int, Counter]]:
    """(notebook, function) -> (passed, answered, named mistake -> students), from the verdicts."""
    import autograder.hidden_checks  # noqa: F401
    from selfattn.checks.findings import Finding, Kind
    from selfattn.checks.record import REGISTRY

    out: dict[tuple[str, str], list] = {}
    for (_s, nb), v in verdicts.items():
        by_fn: dict[str, list] = {}
        for cid, msg in v.get("checks", {}).items():
            by_fn.setdefault(REGISTRY[cid].function, []).append(msg)
        for fn, msgs in by_fn.items():
            acc = out.setdefault((nb, fn), [0, 0, Counter()])
            found = [Finding.from_json(m) for m in msgs if m is not None]
            if not found:
                acc[0] += 1
                acc[1] += 1
            elif any(f.kind is not Kind.NOT_ANSWERED for f in found) or len(found) < len(msgs):
                acc[1] += 1
                acc[2].update({f.name for f in found if f.kind is Kind.MISTAKE and f.name})
    return {k: tuple(v) for k, v in out.items()}


def _awaiting(work) -> list[tuple[str, str, str, str]]:
    """(student, assignment, notebook, grade id) of every grade in the gradebook's manual queue."""
    import sqlite3

    db = sqlite3.connect(work / "gradebook.db")
    try:
        return sorted(tuple(r) for r in db.execute(
            "SELECT st.id, a.name, nb.name, gc.name FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id"
            " JOIN submitted_assignment sa ON sn.assignment_id = sa.id JOIN student st ON sa.student_id = st.id"
            " JOIN assignment a ON sa.assignment_id = a.id JOIN notebook nb ON sn.notebook_id = nb.id"
            " JOIN base_cell gc ON g.cell_id = gc.id WHERE g.needs_manual_grade").fetchall())
    finally:
        db.close()


@pytest.mark.browser
def test_first_screen_answers_the_three_questions(page, graded):
    """Before any histogram or detail table, at a laptop's first screen: how the class did per
    notebook, the hardest exercises with their commonest named mistake, and what waits for me."""
    pg, _ = page
    _, verdicts = graded
    pg.set_viewport_size({"width": 1280, "height": 800})
    pg.evaluate("window.scrollTo(0, 0)")
    first_detail = pg.locator("svg.hist").first.bounding_box()["y"]
    for anchor in ("#how", "#reteach", "#now"):
        box = pg.locator(anchor).bounding_box()
        assert box["y"] + box["height"] <= 800 and box["y"] < first_detail, (anchor, box)
    clipped = pg.eval_on_selector_all("#glance .scroll", "ds => ds.filter(d => d.scrollWidth > d.clientWidth + 1)"
                                                        ".length")
    assert clipped == 0  # the first screen's table is whole, not scrolled inside its card
    # how did the class do: the notebook rows hold the gradebook's mean and median
    rows = {r[0]: r for r in _rows(pg, "glance")}
    assert set(NOTEBOOKS) <= set(rows), rows
    assert (graded[0] / "report" / "notebooks.csv").is_file()
    size = len(_rows(pg, "students"))
    for nb in NOTEBOOKS:
        handed = sum(1 for (_s, n), v in verdicts.items() if n == nb
                     and not any(n.kind is NoteKind.MISSING for n in notes_of(v)))
        assert re.fullmatch(rf"\d+/{size} \(\d+%\)", rows[nb][3]) and rows[nb][4] == str(handed), rows[nb]
    # what to reteach: each item's counts are the verdicts', hardest first, with its commonest mistake
    counts = _exercise_counts(verdicts)
    items = pg.locator("#glance li", has_text="passed").all_inner_texts()
    assert items, pg.inner_text("#glance")
    rates = []
    for item in items:
        fn, rest = item.split(" (", 1)
        nb = rest.split(")", 1)[0]
        passed, answered, mistakes = counts[nb, fn]
        assert f"{passed} of {answered} passed" in item, (item, counts[nb, fn])
        rates.append(passed / answered)
        if mistakes:
            top = max(mistakes.values())
            assert any(f"most common mistake: {m.split(':')[0]} ({top} student" in item
                       for m, c in mistakes.items() if c == top), (item, mistakes)
    assert rates == sorted(rates) and rates[0] == min(p / a for p, a, _ in counts.values() if a)
    # what needs me now: writer's written answer, the faults, the planted copy
    now = pg.inner_text("#glance")
    waiting = _awaiting(graded[0])
    assert any(s == "writer" and nb == "04-scaling" for s, _, nb, _ in waiting), waiting
    assert f"written answers awaiting hand-grading: {len(waiting)} — " in " ".join(now.split()), now
    assert "writer: 04" in now
    pairs = len(_rows(pg, "similarity"))
    assert f"suspiciously similar answers: {pairs} pair" in " ".join(now.split()) and pairs >= 1
    assert "time-out: 1" in now


@pytest.mark.browser
def test_difficulty_ranking_and_hand_grading_queue(page, graded):
    pg, _ = page
    _, verdicts = graded
    counts = _exercise_counts(verdicts)
    ranked = _rows(pg, "difficulty")
    assert {(r[0], r[1]) for r in ranked} == {k for k, v in counts.items() if v[1]}
    rates = [int(r[3]) / (int(r[3]) + int(r[4])) for r in ranked]
    assert rates == sorted(rates)
    for nb, fn, _rate, ok, bad, mistake, n in ranked:
        passed, answered, mistakes = counts[nb, fn]
        assert (int(ok), int(ok) + int(bad)) == (passed, answered), (nb, fn)
        assert (mistake, int(n)) == ((mistake, mistakes[mistake]) if mistakes else ("", 0)), (nb, fn)
        if mistakes:
            assert mistakes[mistake] == max(mistakes.values())
    assert _rows(pg, "queue") == [[s, NAMES.get(s, ("", ""))[0] and " ".join(NAMES[s]), a, nb, gid]
                                  for s, a, nb, gid in _awaiting(graded[0])]


@pytest.mark.browser
def test_the_mistake_before_a_resubmission_is_kept(page):
    pg, _ = page
    rows = _rows(pg, "history")
    assert ["fixer", "Fay Fix", NOTEBOOKS[0], "attention", "missing the 1/√d_k scaling of the scores", "fixed"] \
        in rows, rows


@pytest.mark.browser
def test_names_beside_ids_and_every_student_links_to_their_feedback(page, graded):
    from pathlib import Path

    pg, _ = page
    work, _ = graded
    rows = {r[0]: r for r in _rows(pg, "students")}
    assert rows["alice"][1] == "Alice Ames" and rows["bob"][1] == ""
    links = pg.eval_on_selector_all("#students tbody tr", "rows => rows.map(r => [r.cells[0].textContent, "
                                    "Array.from(r.querySelectorAll('a')).map(a => a.getAttribute('href'))])")
    assert {s for s, _ in links} == set(rows)
    for student, hrefs in links:
        if student == "notebook-invalid-json":
            continue  # its feedback is there too, but say so only for those that have one
        assert hrefs, student
        for href in hrefs:
            target = (work / "report" / Path(href)).resolve()
            assert target.is_file() and target.parent.parent.name == student, (student, href)
            assert f"<title>{target.stem}</title>" in target.read_text()


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.browser
def test_tables_are_csv_files_next_to_the_report(page, graded):
    import csv

    pg, _ = page
    work, _ = graded
    for name, table_id in (("students.csv", "students"), ("exercises.csv", "difficulty"), ("checks.csv", "checks"),
                           ("hand-grading.csv", "queue"), ("fixed-mistakes.csv", "history")):
        with open(work / "report" / name, newline="", encoding="utf-8") as fh:
            head, *rows = list(csv.reader(fh))
        shown = _rows(pg, table_id)
        # the same cells; text a spreadsheet would run as a formula is kept as text with a leading '
        # (in any order: a header clicked by an earlier test may have sorted the page's table)
        assert sorted(rows) == sorted(["'" + c if c[:1] in ("=", "+", "-", "@") and not _number(c) else c
                                       for c in r] for r in shown), name
        assert head == pg.eval_on_selector_all(f"#{table_id} thead th", "hs => hs.map(h => h.textContent)")
    links = pg.eval_on_selector_all("a[href$='.csv']", "as => as.map(a => a.getAttribute('href'))")
    assert "students.csv" in links and all((work / "report" / h).is_file() for h in links)


@pytest.mark.browser
def test_pass_rate_and_total_columns_are_readable_on_a_phone(page):
    """At 390 px every cell of the checks' pass rate and the students' total lies inside the
    screen, is not clipped (its text fits its box) and overlaps no other cell of its row."""
    pg, _ = page
    pg.set_viewport_size({"width": 390, "height": 844})
    try:
        for section, column in (("checks", "pass rate"), ("students", "total"), ("difficulty", "pass rate")):
            found = pg.evaluate("""([section, column]) => {
                const t = document.querySelector('#' + section + ' table');
                const col = [...t.tHead.rows[0].cells].findIndex(h => h.textContent === column);
                return [...t.tBodies[0].rows].map(r => {
                    const c = r.cells[col], b = c.getBoundingClientRect();
                    const others = [...r.cells].filter(o => o !== c).map(o => o.getBoundingClientRect())
                        .filter(o => o.width && o.height && o.left < b.right - 0.5 && b.left < o.right - 0.5
                                     && o.top < b.bottom - 0.5 && b.top < o.bottom - 0.5);
                    return {left: b.left, right: b.right, clipped: c.scrollWidth > c.clientWidth + 1,
                            overlaps: others.length, visible: getComputedStyle(c).display !== 'none'};
                });
            }""", [section, column])
            assert found, section
            for cell in found:
                assert cell["visible"] and cell["left"] >= 0 and cell["right"] <= 390, (section, cell)
                assert not cell["clipped"] and cell["overlaps"] == 0, (section, cell)
            # the column's name is shown beside each value
            label = pg.evaluate(f"getComputedStyle(document.querySelector('#{section} td[data-label=\"{column}\"]'),"
                                f" '::before').content")
            assert column in label, label
    finally:
        pg.set_viewport_size({"width": 1280, "height": 720})


@pytest.mark.browser
def test_histogram_labels_never_overlap(page):
    """Scores out of any maximum (fractional bins included), drawn in Chromium: no two axis labels
    of one histogram overlap, and each lies inside the figure."""
    from autograder.reporting.histogram import histogram
    from autograder.reporting.report_html import STYLE, render_part

    cases = [(top, values) for top in (1, 2.5, 3, 7, 9.5, 12, 13, 17, 24, 33.3, 90, 100, 0.75)
             for values in ([0.0, top / 3, top], [float(int(top))] * 4, [top * k / 7 for k in range(8)])]
    pg = page[0].context.browser.new_page()
    try:
        figures = "".join(f"<div>{render_part('histogram', histogram(v, t, f'case {i}'))}</div>"
                          for i, (t, v) in enumerate(cases))
        pg.set_content(f"<style>{STYLE}</style>{figures}")
        # the axis labels: the texts below the axis line
        boxes = pg.eval_on_selector_all("svg.hist", """svgs => svgs.map(s => {
            const o = s.getBoundingClientRect(), axis = +s.querySelector('line').getAttribute('y1');
            return [o.left, o.right, [...s.querySelectorAll('text')].filter(t => +t.getAttribute('y') > axis).map(t => {
                const b = t.getBoundingClientRect(); return [b.left, b.right, t.textContent]; })]; })""")
    finally:
        pg.close()
    assert len(boxes) == len(cases)
    for (left, right, ticks), (top, values) in zip(boxes, cases, strict=True):
        assert len(ticks) >= 2, (top, values, ticks)
        for a, b in itertools.pairwise(ticks):
            assert a[1] <= b[0], (top, values, a, b)  # left to right, apart
        assert ticks[0][0] >= left and ticks[-1][1] <= right, (top, ticks)

"""The class report (``make report``) of a small graded class, opened in headless Chromium with
every outside request aborted: it loads nothing from outside, its counts are the verdicts', the
similarity section finds a planted copy (renamed variables, new comments and layout) and not
independent correct answers, and hostile text in answers stays text.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from browser_support import CHROMIUM_ARGS, PageReport, attach_recorders, chromium_path, serve
from grading_support import RELEASE, SOLUTIONS, entries, grade, place, submission_text, with_answers
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import gradebook_schema
from autograder.similarity import fingerprints, normalise, similar_pairs

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

    gradebook_schema.install()  # as the course configuration does: no `alembic` command needed
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        gb.update_or_create_assignment("attention", duedate="2026-11-01 12:00:00 UTC")
    (work / "submitted" / "guess" / "attention" / "timestamp.txt").write_text("2026-11-02 12:00:00 UTC")
    result = grade(work, "--workers", "2", "--cpu-seconds", "3", "--memory-mb", "1024")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "class report in" in result.stdout, result.stdout
    verdicts = {(p.parent.parent.name, p.stem): json.loads(p.read_text())
                for p in (work / ".grading" / "verdicts").glob("*/*/*.json")}
    return work, verdicts


@pytest.fixture(scope="module")
def page(graded):
    from playwright.sync_api import sync_playwright

    work, _ = graded
    with serve(work / "report") as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page()
            report = PageReport(base)
            attach_recorders(pg, base, report)
            pg.goto(base + "index.html", wait_until="load")
            yield pg, report
        finally:
            browser.close()


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
    assert blamed and "calls your softmax" in blamed[0][4], blamed
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
        wide = pg.eval_on_selector_all("table", "ts => ts.filter(t => t.parentElement.scrollWidth > 390).length")
        assert wide > 0  # the premise: some table is wider than the phone, and it scrolls in its box
        pg.emulate_media(color_scheme="dark")
        body = "getComputedStyle(document.body)"
        colours = pg.evaluate(f"[{body}.color, {body}.backgroundColor]")
        assert colours == ["rgb(227, 227, 227)", "rgb(27, 29, 33)"], colours
    finally:
        pg.emulate_media(color_scheme="light")
        pg.set_viewport_size({"width": 1280, "height": 720})


def _all_pairs(exercise, answers, excluded):
    """The definition similar_pairs implements, comparing every two answers (slow, for the test)."""
    from autograder import similarity as sim

    base = set().union(*(fingerprints(s) for s in excluded))
    skip = {s.strip() for s in excluded}
    prints = {s: fingerprints(src) - base for s, src in answers.items() if src.strip() not in skip}
    counts = Counter(f for fp in prints.values() for f in fp)
    limit = max(3, int(sim.COMMON * len(prints)))
    prints = {s: {f for f in fp if counts[f] <= limit} for s, fp in prints.items()}
    students = sorted(s for s, fp in prints.items() if len(fp) >= sim.MIN_SHARED)
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

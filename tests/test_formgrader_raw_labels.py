"""Formgrader's own pages say which score is final and which parts are raw.

A class of two hands in ``04-scaling`` (a graded function and a written answer) under a late policy
(10 % per started day): amos on time, cleo 2 days and 1 hour late. After ``make grade``, formgrader
(the local one, headless Chromium) is opened on every page that shows the code, written or task
score beside the overall one: a notebook's averages, a notebook's submissions, a student's
assignments and a student's notebooks. Each heads the overall score "(final)" and each part
"(raw)", with a title saying so; and on cleo's rows the numbers bear the labels out: the parts add
up to her raw score, the final one is that less 30 % (three days started).
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from test_hand_grading_loop import NB, HandLoop, _formgrader_session
from test_late_work import hand_in_late_class

DUE = datetime(2026, 1, 10, 12, 0, 0)
STAMPS = {"amos": "2026-01-10 11:00:00.000000 UTC", "cleo": "2026-01-12 13:00:00.000000 UTC"}
POLICY = ("c.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 10\n"
          "c.LateSubmissionPlugin.per = 'day'\n")
PARTS = ("Code", "Written", "Task")


def fraction(seconds: float) -> float:
    """The test's own reading of POLICY: the part of the score taken for this lateness."""
    import math

    return 0.0 if seconds <= 0 else 10 * math.ceil(seconds / 86400) / 100


def _number(text: str) -> float:
    found = re.search(r"-?\d+(?:\.\d+)?", text)
    assert found, f"no number in {text!r}"
    return float(found.group())


def _table(page, url: str) -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    """The page's table once filled: its headers (text, title) and each row's cells by its first
    cell's text."""
    page.goto(url, wait_until="networkidle")
    page.wait_for_function("() => document.querySelectorAll('tbody tr td').length > 1 && "
                           "!document.body.innerText.includes('Loading, please wait')", timeout=60_000)
    heads = [(th.inner_text().strip(), th.get_attribute("title") or "") for th in page.locator("thead th").all()]
    rows = {}
    for tr in page.locator("tbody tr").all():
        cells = [td.inner_text().strip() for td in tr.locator("td").all()]
        rows[next((c for c in cells if c), "")] = cells
    return heads, rows


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    lp = HandLoop(tmp_path_factory.mktemp("raw-labels"))
    hand_in_late_class(lp, DUE, STAMPS)
    (lp.instructor_cfg / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(lp.exchange)!r}\n" + POLICY)
    lp.make_grade()

    def actions(page, base: str, out: dict) -> None:
        fg = f"{base}/formgrader"
        for place, url in (("a notebook's averages", f"{fg}/gradebook/attention"),
                           ("a notebook's submissions", f"{fg}/gradebook/attention/{NB}"),
                           ("a student's assignments", f"{fg}/manage_students/cleo"),
                           ("a student's notebooks", f"{fg}/manage_students/cleo/attention")):
            out[place] = _table(page, url)

    return _formgrader_session(lp, actions)


def test_every_page_with_raw_parts_labels_them_raw_beside_the_final_score(pages):
    seen = pages
    for place, (heads, _) in seen.items():
        scores = [(text, title) for text, title in heads if "Score" in text]
        assert len(scores) == 4, (place, heads)
        overall, *parts = scores
        assert overall[0].endswith("(final)") and "late penalty taken" in overall[1], (place, overall)
        for (text, title), part in zip(parts, PARTS, strict=True):
            assert part in text and text.endswith("(raw)") and "before the late penalty" in title, (place, text)


def test_the_numbers_bear_the_labels_out_for_a_late_student(pages):
    seen = pages
    heads, rows = seen["a student's notebooks"]
    names = [text for text, _ in heads]
    cells = rows[NB]
    overall = _number(cells[names.index("Overall Score (final)")])
    raw = sum(_number(cells[names.index(f"{part} Score (raw)")]) for part in PARTS)
    kept = 1 - fraction(2 * 86400 + 3600)
    assert raw > 0 and overall == pytest.approx(round(raw * kept, 2)), (overall, raw, cells)

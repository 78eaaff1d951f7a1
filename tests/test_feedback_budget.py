"""Student text handled outside the sandbox is bounded per notebook: a huge formula, deeply nested
Markdown and a 100,000-line answer each come out as plain text with a note saying why (the work is
not done), a spent time budget stops the rest of that notebook only, the next student's page is
rendered in full, and similarity leaves over-long answers out, saying so."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_markdown_cell, new_notebook

from autograder.nbgrader_ext import feedback_text as ft
from autograder.nbgrader_ext.feedback_html import annotate
from autograder.reporting import similarity

_EXPORTER = HTMLExporter()


def _to_html(text: str) -> str:
    return _EXPORTER.markdown2html({"cell": {}}, text)


def _notebook(*answers: str):
    meta = {"nbgrader": {"solution": True, "grade": True, "grade_id": "why", "points": 1}}
    return new_notebook(cells=[new_markdown_cell("Course text $\\sqrt{d_k}$")]
                        + [new_markdown_cell(a, metadata=meta) for a in answers])


def _pages(*notebooks):
    """Each notebook's Markdown cells as its feedback page shows them (annotate, one run)."""
    out = []
    for nb in notebooks:
        annotate(nb, {"nbgrader": {}}, course=None)
        out.append([c.metadata["selfattn_html"] for c in nb.cells])
    return out


def test_a_huge_formula_is_shown_as_tex_with_a_note_and_the_next_student_is_intact():
    huge = "$" + "x^2+" * 49_000 + "y$"  # 196,003 characters: one formula, under the cell's cap
    hostile, fine = _pages(_notebook(huge, "and $a_b$"), _notebook("I say $q_i k_j$"))
    assert "shown as TeX: a formula of 196,001 characters" in hostile[1], hostile[1][:300]
    assert "<math" not in hostile[1]
    assert "<msub>" in hostile[2], hostile[2]  # the same notebook's next cell still has its math
    assert "<math" in fine[0] and "<msub>" in fine[1] and "Feedback page:" not in fine[1]


def test_a_formula_over_the_cap_is_left_as_tex_and_the_note_names_its_size():
    page = ft.render_student("see $" + "a+" * ft.MAX_FORMULA_CHARS + "b$ here", _to_html, ft.Budget())
    assert f"more than {ft.MAX_FORMULA_CHARS:,}" in page and "<math" not in page and "<code>" in page


def test_deeply_nested_markdown_is_shown_as_plain_text():
    quotes = "> " * 5000 + "deep"
    lists = "".join("  " * i + "- item\n" for i in range(300))  # 300 levels, 90,000 characters
    for text in (quotes, lists):
        page = ft.render_student(text, _to_html, ft.Budget())
        assert "shown as plain text" in page and f"more than {ft.MAX_MARKDOWN_DEPTH}" in page, page[:200]
        assert "<blockquote>" not in page and "<li>" not in page and "<pre>" in page


def test_a_100000_line_answer_is_shown_as_plain_text_with_a_note():
    answer = "".join(f"line {i} $x_{{{i}}}$\n" for i in range(100_000))
    page = ft.render_student(answer, _to_html, ft.Budget())
    assert f"more than the {ft.MAX_MARKDOWN_CHARS:,}" in page and "<math" not in page
    assert "line 99999" in page  # shown, escaped, as typed


def test_a_spent_budget_stops_this_notebook_only():
    now = [0.0]
    budget = ft.Budget(clock=lambda: now[0])
    first = ft.render_student("a $x_1$", _to_html, budget)
    now[0] = ft.RENDER_SECONDS + 1
    later = ft.render_student("b $x_2$", _to_html, budget)
    assert "<msub>" in first and "<math" not in later and "were spent" in later
    fresh = ft.render_student("c $x_3$", _to_html, ft.Budget(clock=lambda: now[0]))
    assert "<msub>" in fresh and "Feedback page:" not in fresh


def test_the_notebooks_tex_cap_leaves_later_formulas_as_tex():
    budget = ft.Budget(math_chars=10)
    page = ft.render_student("$abcdefgh$ then $ijklmnop$", _to_html, budget)
    assert page.count("<math") == 1 and "ijklmnop" in page and "characters of TeX in this notebook" in page


_SPEC = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?![\s$])(.+?)(?<![\\\s])\$(?!\d)|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.S)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="$\\[]() a1\n", max_size=40))
def test_the_linear_formula_scan_finds_what_the_delimiters_regex_finds(text):
    want = [(m.start(), m.end(), next(g for g in m.groups() if g is not None)) for m in _SPEC.finditer(text)]
    assert [(a, b, tex) for a, b, tex, _block in ft._formulas(text)] == want


def test_many_unclosed_dollars_are_scanned_once():
    text = "$a " * 300_000  # a lazy regular expression reads to the end from each "$"
    assert list(ft._formulas(text)) == []


def test_similarity_leaves_over_long_answers_out_and_names_them():
    body = "def f(x):\n    y = x * 2\n    z = y + 1\n    return [z for _ in range(3)]\n"
    long = body + "#" * similarity.MAX_COMPARED_CHARS
    answers = {"ann": body, "bob": body, "cy": long, "dee": long}
    assert similarity.too_long(answers) == ["cy", "dee"]
    pairs = similarity.similar_pairs("f", answers, [])
    assert [(p.a, p.b) for p in pairs] == [("ann", "bob")]

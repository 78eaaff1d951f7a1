"""Hostile TeX as the instructor's and the student's browsers show it (headless Chromium, every
outside request aborted): a feedback page made by the course's exporter from a written answer and a
comment full of TeX that makes links, styles, classes and ids, and formgrader's grading page with
the course's MathJax loader (autograder/jupyter_data) typesetting the same TeX. Neither page holds
a link, style, class or id the student chose, runs script or fetches anything, and no box in the
feedback page's answer covers the page (MathJax's ``\\rule`` in formgrader can still draw a large
box in the flow of the text, covering nothing).

Sizes nest: a property test draws random nestings of size, space, phantom, rule, box and shift
commands (``\\Huge`` in ``\\Huge``, ``\\smash``, ``\\raise``, ``\\moveleft``, negative ``\\hspace``)
into a written answer, and checks in Chromium that no formula paints outside its own box (a
screenshot of the page against one with every formula hidden, which keeps the layout: every pixel
that differs lies in a formula's box) and that the score stays visible. The lecture's own formulas
are drawn as they were before the clip."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import jinja2
import nbgrader
import numpy as np
import pytest
from browser_support import CHROMIUM_ARGS, axe_violations, chromium_path
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_markdown_cell, new_notebook
from PIL import Image
from traitlets.config import Config

from autograder.formgrader import STATIC, TEMPLATES
from autograder.nbgrader_ext.feedback_html import OfflineFeedbackExporter
from autograder.nbgrader_ext.feedback_text import _formulas

HOSTILE = (r"Answer $\href{javascript:window.PWNED=1}{click}$ and $\style{position:fixed;inset:0;"
           r"background:url(https://evil.example/p.png)}{\text{Score: 100 / 100}}$ and $\class{panel-heading}{c}$ "
           r"and $\cssId{top}{i}$ and $\bbox[position:fixed;inset:0]{b}$ and $\unicode[Arial]{x41}$ "
           r"and $\require{html}\href{javascript:window.PWNED=2}{r}$ and $\rule{999em}{999em}$ end.")
_FORMGRADER = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"

# what the page shows: any element with a link, style, class or id a student chose, script that ran,
# and the largest box drawn inside the answer
PROBE = """() => {
  const inAnswer = [...document.querySelectorAll('.hostile, .hostile *, .rendered_html *')];
  const marked = inAnswer.filter(e => e.closest('.hostile, .nbgrader_cell .panel-body, .panel-footer'))
    .filter(e => e.hasAttribute('href') || e.hasAttribute('style') && /fixed|url|inset/.test(e.getAttribute('style'))
                 || e.id === 'top' || e.classList.contains('panel-heading'))
    .map(e => e.outerHTML.slice(0, 120));
  const big = Math.max(0, ...inAnswer.map(e => { const r = e.getBoundingClientRect(); return r.width * r.height; }));
  return {marked, pwned: window.PWNED || 0, big, area: innerWidth * innerHeight,
          text: document.body.innerText};
}"""


def _browse(url: str, wait_for: str | None = None) -> tuple[dict, list[str]]:
    from browser_support import driver

    outside: list[str] = []
    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page()

        def route(r):
            if r.request.url.startswith(("file://", "data:")):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.goto(url)
        if wait_for:
            page.wait_for_function(wait_for, timeout=30_000)
        for link in page.locator(".hostile a, .rendered_html a").all():
            link.click(timeout=2_000, no_wait_after=True)  # a link that ran script would set PWNED
        seen = page.evaluate(PROBE)
        browser.close()
    return seen, outside


def feedback_page(answer: str, comment: str | None = None) -> str:
    """The feedback page the course's exporter makes (nbgrader's feedback template, extended) of a
    notebook whose one cell is the written answer ``answer``, graded 0 of 1, commented ``comment``."""
    c = Config()
    c.HTMLExporter.template_name = "feedback"
    c.HTMLExporter.extra_template_basedirs = [str(_FORMGRADER / "templates")]
    c.HTMLExporter.extra_template_paths = [str(_FORMGRADER / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    meta = {"nbgrader": {"solution": True, "grade": True, "grade_id": "why", "points": 1, "score": 0.0}}
    if comment is not None:
        meta["nbgrader"]["comment"] = comment
    nb = new_notebook(cells=[new_markdown_cell(answer, metadata=meta)])
    resources = {"nbgrader": {"notebook": "nb", "assignment": "a", "score": 0, "max_score": 1, "late_penalty": 0}}
    html, _ = OfflineFeedbackExporter(config=c).from_notebook_node(nb, resources=resources)
    return html


def test_a_feedback_page_of_hostile_tex_holds_nothing_live(tmp_path):
    page = tmp_path / "feedback.html"
    page.write_text(feedback_page(HOSTILE, HOSTILE))
    seen, outside = _browse(page.as_uri())
    assert outside == [], outside
    assert "Answer" in seen["text"] and "end." in seen["text"], seen["text"][:500]
    assert seen["marked"] == [] and seen["pwned"] == 0, seen["marked"]
    assert seen["big"] < seen["area"] / 4, seen  # nothing in the answer covers the page


def test_formgraders_mathjax_typesets_hostile_tex_into_nothing_live(tmp_path):
    if not (STATIC / "mathjax" / "ui" / "safe.js").exists():
        pytest.fail(f"{STATIC / 'mathjax' / 'ui' / 'safe.js'} is missing: run `make setup`")
    shutil.copytree(STATIC / "mathjax", tmp_path / "static" / "mathjax")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES / "nbconvert" / "templates")))
    loader = env.from_string("{% from 'base/mathjax.html.j2' import mathjax %}{{ mathjax() }}").render()
    page = tmp_path / "formgrader" / "submission.html"  # the loader acts only under /formgrader/
    page.parent.mkdir()
    page.write_text(f"<!DOCTYPE html><html><head>{loader}</head><body><div class='hostile'>{HOSTILE}</div>"
                    "</body></html>")
    seen, outside = _browse(page.as_uri(), "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
                                           " && document.querySelectorAll('mjx-container').length >= 8")
    assert outside == [], outside
    assert seen["marked"] == [] and seen["pwned"] == 0, seen["marked"]
    assert "Answer" in seen["text"] and "end." in seen["text"], seen["text"][:500]


# ---- nested sizes: no formula paints outside its own box ----------------------------------------

_LENGTH = st.sampled_from(["20em", "9em", "2em", "0.5em", "-0.5em", "-2em", "-9em", "-20em", "320px", "-320px"])
_SIZE = st.sampled_from([r"\tiny", r"\small", r"\large", r"\Large", r"\LARGE", r"\huge", r"\Huge",
                         r"\displaystyle", r"\textstyle", r"\scriptstyle"])
_ONE_ARGUMENT = st.sampled_from([r"\smash", r"\phantom", r"\hphantom", r"\vphantom", r"\boxed", r"\mathllap",
                                 r"\mathrlap", r"\mathclap", r"\cancel", r"\sqrt", r"\overline", r"\underbrace"])
_SHIFT = st.sampled_from([r"\raise", r"\lower", r"\moveleft", r"\moveright"])
_LEAF = st.one_of(
    st.sampled_from(["x", r"\sum_{i=1}^{n} a_i", r"\fbox{box}"]),
    st.builds(r"\rule{{{}}}{{{}}}".format, _LENGTH, _LENGTH),
    st.builds(r"\hspace{{{}}}".format, _LENGTH),
    st.builds(r"\mkern{}mu".format, st.sampled_from(["-360", "-18", "18", "360"])),
)
#: random nestings of size, space, phantom, rule, box and shift commands
NESTED_TEX = st.recursive(_LEAF, lambda inner: st.one_of(
    st.builds("{{{} {}}}".format, _SIZE, inner),
    st.builds("{}{{{}}}".format, _ONE_ARGUMENT, inner),
    st.builds("{}{{{}}}{{{}}}".format, _SHIFT, _LENGTH, inner),
    st.builds(r"\frac{{{}}}{{{}}}".format, inner, inner),
    st.builds("{{{}}}^{{{}}}".format, inner, inner),
    st.builds("{} {}".format, inner, inner),
), max_leaves=8)
#: the written answer drawn on the page in which the issue's black box covered the score
COVERING = r"{\Huge {\Huge {\Huge \smash{\rule{20em}{20em}}}}}"
#: a formula wider than the page: rules side by side
WIDE = r"{\Huge \rule{20em}{1em}\hspace{20em}\rule{20em}{1em}}"

#: every formula's box and its font size (the page's stylesheet leaves a quarter em around it for glyph overhang)
_CELLS = """() => [...document.querySelectorAll('math')].map(m => {
  const r = m.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom, parseFloat(getComputedStyle(m).fontSize)];
})"""
#: the page's score and the answer's score: their boxes and whether they are what a click on them reaches
_SCORES = """() => [...document.querySelectorAll('header.panel-heading h4, .nbgrader_cell .panel-heading .pull-right')]
  .map(e => { const r = e.getBoundingClientRect();
              const hit = document.elementFromPoint(r.left + 4, r.top + r.height / 2);
              return {text: e.innerText, on_top: !!hit && e.contains(hit),
                      box: [r.left, r.top, r.right, r.bottom]}; })"""
#: the written answer's box (its panel's text, from left to right)
_ANSWER = """() => { const r = document.querySelector('.nbgrader_cell .text_cell_render').getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom]; }"""
_HIDE_MATH = "math, math * { visibility: hidden !important; }"
_NO_CLIP = "math, math[display] { overflow: visible !important; max-width: none !important; }"


def _shot(page) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"))


@pytest.fixture(scope="module")
def tab():
    """One headless Chromium tab (1280 × 1024) for the module's pages; outside requests are aborted."""
    from browser_support import driver

    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1024})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file://", "data:")) else r.abort())
        yield page
        browser.close()


def _ink_outside_formulas(page, url: str) -> dict:
    """What the page at ``url`` paints outside its formulas' boxes: the pixels (in the window) that
    differ from the same page with every formula hidden (``visibility: hidden`` keeps the layout),
    outside every formula's box; and the scores, whether each is on top where it is drawn."""
    page.set_viewport_size({"width": 1280, "height": 1024})
    page.goto(url)
    shown, boxes, scores = _shot(page), page.evaluate(_CELLS), page.evaluate(_SCORES)
    cells = [(left - em / 4, top - em / 4, right + em / 4, bottom + em / 4) for left, top, right, bottom, em in boxes]
    page.add_style_tag(content=_HIDE_MATH)
    differs = (_shot(page) != shown).any(axis=2)
    for left, top, right, bottom in cells:  # (a pixel more around each box: the edge's anti-aliasing)
        y0, y1 = max(0, int(np.floor(top)) - 1), max(0, int(np.ceil(bottom)) + 1)
        x0, x1 = max(0, int(np.floor(left)) - 1), max(0, int(np.ceil(right)) + 1)
        differs[y0:y1, x0:x1] = False
    ys, xs = np.nonzero(differs)
    box = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else None
    overlap = [s["text"] for s in scores for c in cells
               if c[0] < s["box"][2] and s["box"][0] < c[2] and c[1] < s["box"][3] and s["box"][1] < c[3]]
    answer = page.evaluate(_ANSWER)
    wider = [[round(v) for v in c] for c in boxes if c[0] < answer[0] - 1 or c[2] > answer[2] + 1]
    return {"pixels": int(differs.sum()), "box": box, "scores": scores, "cells_over_a_score": overlap,
            "cells_wider_than_the_answer": wider}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(a=COVERING, b="x", c=r"\moveleft{20em}{{\Huge {\Huge \rule{20em}{20em}}}}")
@example(a="x", b=WIDE, c=WIDE)
@given(a=NESTED_TEX, b=NESTED_TEX, c=NESTED_TEX)
def test_no_nesting_of_sizes_paints_outside_its_formula(tab, tmp_path_factory, a, b, c):
    """Random nestings of size, space, phantom, rule, box and shift commands, two inline formulas and
    one displayed in a written answer, never paint outside their formulas' boxes, no formula's box
    is wider than the answer, and both scores stay on top and uncovered."""
    answer = f"Before ${a}$ and ${b}$ after.\n\n$${c}$$\n\nEnd."
    page = tmp_path_factory.mktemp("nested") / "feedback.html"
    page.write_text(feedback_page(answer))
    seen = _ink_outside_formulas(tab, page.as_uri())
    assert seen["pixels"] == 0, f"{answer!r} paints {seen['pixels']} px outside its formulas, in {seen['box']}"
    assert len(seen["scores"]) == 2 and all(s["on_top"] for s in seen["scores"]), seen["scores"]
    assert seen["cells_over_a_score"] == [], seen["cells_over_a_score"]
    assert seen["cells_wider_than_the_answer"] == [], (answer, seen["cells_wider_than_the_answer"])


def _lecture_formulas() -> list[tuple[str, bool]]:
    book = Path(__file__).resolve().parents[1] / "book"
    found = [(tex.strip(), block) for md in sorted(book.glob("*.md"))
             for _s, _e, tex, block in _formulas(md.read_text())]
    return list(dict.fromkeys(found))


def test_the_lectures_formulas_are_drawn_as_without_the_clip(tab, tmp_path):
    """Every formula of the lecture, inline and displayed, in a written answer: the page with the
    formulas clipped to their boxes has the same layout as without the clip (every formula's box in
    the same place), and the same pixels but for the anti-aliased edge (a pixel row) at the top or
    bottom of a displayed formula, which scrolls sideways and so cannot leave its overhang. At 800 px,
    where some displayed formulas are wider than the text and scroll, axe-core finds nothing serious
    (a keyboard can scroll them)."""
    formulas = _lecture_formulas()
    assert len(formulas) > 100 and any(block for _tex, block in formulas), len(formulas)
    answer = "\n\n".join(f"$${tex}$$" if block else f"Text ${tex}$ more text." for tex, block in formulas)
    page = tmp_path / "feedback.html"
    page.write_text(feedback_page(answer))
    tab.set_viewport_size({"width": 1280, "height": 1024})
    tab.goto(page.as_uri())
    boxes = """() => [...document.querySelectorAll('math')].map(m => {
      const r = m.getBoundingClientRect(); return [r.left, r.top, r.width, r.height, m.getAttribute('display')]; })"""
    clipped_shot, clipped = np.asarray(Image.open(io.BytesIO(tab.screenshot(full_page=True))).convert("RGB")), \
        tab.evaluate(boxes)
    tab.add_style_tag(content=_NO_CLIP)
    free_shot, free = np.asarray(Image.open(io.BytesIO(tab.screenshot(full_page=True))).convert("RGB")), \
        tab.evaluate(boxes)
    assert clipped == free, json.dumps([(c, f) for c, f in zip(clipped, free, strict=True) if c != f][:5])
    assert clipped_shot.shape == free_shot.shape
    differs = (clipped_shot != free_shot).any(axis=2)
    for left, top, width, height, display in clipped:
        if display == "block":  # the edge rows of a displayed formula
            x0, x1 = max(0, int(left)), int(np.ceil(left + width))
            for edge in (top, top + height):
                differs[max(0, int(edge) - 1):int(np.ceil(edge)) + 1, x0:x1] = False
    ys, xs = np.nonzero(differs)
    assert not len(ys), f"{len(ys)} px differ, first at {(int(xs[0]), int(ys[0])) if len(ys) else None}"
    tab.set_viewport_size({"width": 800, "height": 1024})  # some displayed formulas are wider than the text
    tab.goto(page.as_uri())
    scrolled = tab.evaluate("""() => [...document.querySelectorAll('math[display=block]')]
      .filter(m => m.scrollWidth > m.clientWidth).length""")
    assert scrolled, "no displayed formula scrolls at 800 px: the check below checks nothing"
    assert axe_violations(tab) == []  # a keyboard can scroll them (scrollable-region-focusable)

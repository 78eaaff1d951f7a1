"""Hostile TeX as the instructor's and the student's browsers show it (headless Chromium, every
outside request aborted): a feedback page made by the course's exporter from a written answer and a
comment full of TeX that makes links, styles, classes and ids, and formgrader's grading page with
the course's MathJax loader (autograder/jupyter_data) typesetting the same TeX. Neither page holds
a link, style, class or id the student chose, runs script or fetches anything, and no box in the
feedback page's answer covers the page (MathJax's ``\\rule`` in formgrader can still draw a large
box in the flow of the text, covering nothing)."""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
import nbgrader
import pytest
from browser_support import CHROMIUM_ARGS, chromium_path
from nbformat.v4 import new_markdown_cell, new_notebook
from traitlets.config import Config

from autograder.formgrader import STATIC, TEMPLATES
from autograder.nbgrader_ext.feedback_html import OfflineFeedbackExporter

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


def test_a_feedback_page_of_hostile_tex_holds_nothing_live(tmp_path):
    c = Config()
    c.HTMLExporter.template_name = "feedback"
    c.HTMLExporter.extra_template_basedirs = [str(_FORMGRADER / "templates")]
    c.HTMLExporter.extra_template_paths = [str(_FORMGRADER / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    meta = {"nbgrader": {"solution": True, "grade": True, "grade_id": "why", "points": 1, "score": 0.0,
                         "comment": HOSTILE}}
    nb = new_notebook(cells=[new_markdown_cell(HOSTILE, metadata=meta)])
    resources = {"nbgrader": {"notebook": "nb", "assignment": "a", "score": 0, "max_score": 1, "late_penalty": 0}}
    html, _ = OfflineFeedbackExporter(config=c).from_notebook_node(nb, resources=resources)
    page = tmp_path / "feedback.html"
    page.write_text(html)
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

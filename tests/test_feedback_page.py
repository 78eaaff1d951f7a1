"""A student's feedback page as it is displayed (headless Chromium, every outside request aborted),
after ``make grade`` and an instructor's comment with TeX written in the gradebook (as formgrader
saves it) followed by ``make grades-final`` (``--finish``): the comment's math and a heading's math
are drawn as MathML with their sub- and superscripts, test-cell links name their exercise, and a
written answer nobody has graded yet reads "awaiting hand-grading", not a score of 0.
"""

from __future__ import annotations

import pytest
from browser_support import CHROMIUM_ARGS, chromium_path
from grading_support import SOLUTIONS, grade, place

MATHML = "http://www.w3.org/1998/Math/MathML"
PHONE = 390

# On the page as a phone shows it: every graded cell's heading (its label, score and "(Top)" link) and
# how wide its code or text is drawn beside the width its panel offers.
PANELS_JS = """() => [...document.querySelectorAll('.nbgrader_cell')].map(cell => {
  const head = cell.querySelector(':scope > .panel-heading'), body = cell.querySelector(':scope > .panel-body');
  const h = head.getBoundingClientRect(), b = body.getBoundingClientRect(), s = getComputedStyle(body);
  const room = b.width - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  const content = body.querySelector('.input_area, .text_cell_render');
  return {label: head.innerText.replace(/\\s+/g, ' ').trim(),
          outside: [...head.querySelectorAll('*')].filter(e => e.getClientRects().length)
                     .map(e => e.getBoundingClientRect())
                     .filter(r => r.top < h.top - 0.5 || r.bottom > h.bottom + 0.5 ||
                                  r.left < h.left - 0.5 || r.right > h.right + 0.5).length,
          drawn: content ? content.getBoundingClientRect().width / room : 1,
          screen: content ? content.getBoundingClientRect().width / innerWidth : 1};
})"""
COMMENT = r"Good. Note that $XX^\top$ is symmetric, and $\operatorname{Var}(q_i k_i) = 1$."


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A work folder where alice's two notebooks are graded, with a comment holding TeX, and
    ``make grades-final`` run after it."""
    from nbgrader.api import Gradebook

    work = tmp_path_factory.mktemp("feedbackpage")
    for nb in ("02-queries-keys-values", "04-scaling"):
        place(work, "alice", nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
    result = grade(work, "--workers", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        gb.find_comment("variance-derivation", "04-scaling", "attention", "alice").manual_comment = COMMENT
        gb.db.commit()
    result = grade(work, "--finish")
    assert result.returncode == 0, result.stdout + result.stderr
    return work


@pytest.fixture(scope="module")
def pages(graded):
    from browser_support import driver

    work = graded
    out, outside = {}, []
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
        for nb in ("02-queries-keys-values", "04-scaling"):
            page.goto((work / "feedback" / "alice" / "attention" / f"{nb}.html").as_uri())
            out[nb] = {
                "text": page.inner_text("body"),
                "toc": page.locator("#toc li").all_inner_texts(),
                # every heading's math: its namespace, and whether a subscript sits below its base
                "heading_math": page.evaluate("""() => [...document.querySelectorAll('h1 math, h2 math, h3 math')]
                    .map(m => ({ns: m.namespaceURI, subs: [...m.querySelectorAll('msub')].map(s => {
                        const [b, i] = s.children; const bb = b.getBoundingClientRect(), ib = i.getBoundingClientRect();
                        return {below: ib.bottom > bb.bottom + 1, smaller: ib.height < bb.height};})}))"""),
                "comment_math": page.evaluate("""() => [...document.querySelectorAll('.panel-footer math')]
                    .map(m => ({ns: m.namespaceURI, sup: m.querySelectorAll('msup').length,
                                h: m.getBoundingClientRect().height}))"""),
                "comment": page.locator(".panel-footer").all_inner_texts(),
            }
        phone = browser.new_page(viewport={"width": PHONE, "height": 844})
        phone.route("**/*", route)
        for nb in ("02-queries-keys-values", "04-scaling"):
            phone.goto((work / "feedback" / "alice" / "attention" / f"{nb}.html").as_uri())
            out[nb]["phone"] = phone.evaluate(PANELS_JS)
        browser.close()
    assert outside == [], outside
    return out


def test_math_in_a_heading_is_drawn_with_its_subscripts(pages):
    page = pages["02-queries-keys-values"]
    assert "ns0:" not in page["text"] and "mathbf" not in page["text"]
    math = page["heading_math"]
    assert math, "no MathML in any heading"
    assert all(m["ns"] == MATHML for m in math), math
    subs = [s for m in math for s in m["subs"]]
    assert subs and all(s["below"] and s["smaller"] for s in subs), subs


def test_tex_in_the_instructors_comment_is_drawn(pages):
    page = pages["04-scaling"]
    assert any("Good. Note that" in c for c in page["comment"]), page["comment"]
    assert "$XX" not in page["text"] and "\\top" not in page["text"], page["comment"]
    math = page["comment_math"]
    assert len(math) == 2 and all(m["ns"] == MATHML and m["h"] > 5 for m in math), math
    assert math[0]["sup"] == 1


@pytest.mark.parametrize("nb", ["02-queries-keys-values", "04-scaling"])
def test_on_a_phone_each_graded_cell_keeps_its_score_in_its_heading_and_its_full_width(pages, nb):
    """At 390 px a graded cell's score and "(Top)" link sit in its coloured heading (they had dropped
    below it, white on the panel, and squeezed the cell's code into a column a few letters wide)."""
    panels = pages[nb]["phone"]
    assert panels, f"{nb}: no graded cells on the page"
    spilled = [p["label"] for p in panels if p["outside"]]
    assert spilled == [], f"{nb} at {PHONE} px: headings whose score or link lies outside them: {spilled[:4]}"
    squeezed = [(p["label"], round(p["drawn"], 2)) for p in panels if p["drawn"] < 0.95]
    assert squeezed == [], f"{nb} at {PHONE} px: cells drawn narrower than their panel: {squeezed[:4]}"


@pytest.mark.parametrize("nb", ["02-queries-keys-values", "04-scaling"])
def test_on_a_phone_graded_cells_use_most_of_the_screen(pages, nb):
    """At 390 px a graded cell's code or text takes at least 80 % of the screen's width: the page's three
    nested containers and its panel no longer keep 15 px of padding each on both sides (the code had
    65 % of the screen, and long lines wrapped every few words)."""
    narrow = [(p["label"], round(p["screen"], 2)) for p in pages[nb]["phone"] if p["screen"] < 0.8]
    assert narrow == [], f"{nb} at {PHONE} px: cells under 80 % of the screen's width: {narrow[:4]}"


def test_grades_final_writes_a_feedback_page_that_went_missing(graded, pages):
    """A feedback page deleted after grading (its grades unchanged) is written again by ``make
    grades-final``: it had stayed missing, and the student would have received nothing for it."""
    page = graded / "feedback" / "alice" / "attention" / "04-scaling.html"
    page.unlink()
    result = grade(graded, "--finish")
    assert result.returncode == 0, result.stdout + result.stderr
    assert page.is_file(), result.stdout[-2000:]
    assert "score_stds: public checks" in page.read_text()


def test_test_cell_links_name_their_exercise(pages):
    toc = pages["04-scaling"]["toc"]
    assert not any(t.startswith("Test cell") for t in toc), toc
    assert any(t.startswith("score_stds: public checks") for t in toc), toc
    assert any(t.startswith("score_stds: hidden checks") for t in toc), toc


def test_a_written_answer_not_yet_graded_awaits_hand_grading(pages):
    page = pages["04-scaling"]
    written = [t for t in page["toc"] if t.startswith("Written response")]
    assert written and all("awaiting hand-grading" in t for t in written), page["toc"]
    assert not any(" 0.0 / " in t for t in written), written
    assert "points awaiting hand-grading" in page["text"]


def test_skipping_nbconverts_soup_pass_changes_nothing_it_would_change(graded, monkeypatch):
    """The feedback exporter leaves out the last pass of nbconvert's ``HTMLExporter`` (a
    BeautifulSoup parse of the whole page that adds ``alt`` text and ``tabindex``), which was half
    the cost of a page. On each page it renders, that pass must find nothing to do: nbconvert's
    own ``from_notebook_node`` gives the same page as ours once parsed by BeautifulSoup (which only
    normalises the markup), and an ``<img>`` without ``alt`` still gets nbconvert's text."""
    import copy

    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback

    from autograder.nbgrader_ext import feedback_html
    from autograder.nbgrader_ext.steps import nbgrader_api
    from autograder.workspace import Workspace

    monkeypatch.setenv("AUTOGRADER_WORKDIR", str(graded))
    api = nbgrader_api(ws=Workspace(work=graded, course=SOLUTIONS.parents[1]))
    converter = GenerateFeedback(coursedir=api.coursedir, parent=api)
    for nb in ("02-queries-keys-values", "04-scaling"):
        exporter = converter.exporter_class(parent=converter, config=converter.config)  # as nbgrader's start() makes it
        assert isinstance(exporter, feedback_html.OfflineFeedbackExporter)
        for pre in converter.preprocessors:
            exporter.register_preprocessor(pre)
        notebook = nbformat.read(graded / "autograded" / "alice" / "attention" / f"{nb}.ipynb", as_version=4)
        # an image without alt text, which nbconvert's pass would describe
        notebook.cells.append(nbformat.v4.new_markdown_cell('<img src="data:image/png;base64,iVBORw0KGgo=">'))
        resources = {"nbgrader": {"student": "alice", "assignment": "attention", "notebook": nb,
                                  "db_url": api.coursedir.db_url}}
        ours, _ = exporter.template_html(notebook, copy.deepcopy(resources))
        theirs, _ = HTMLExporter.from_notebook_node(exporter, notebook, copy.deepcopy(resources))
        assert feedback_html.NO_ALT_TEXT in theirs, "the page has no image for the pass to describe"
        assert str(BeautifulSoup(feedback_html.with_alt_text(ours), features="html.parser")) == theirs, nb
    page = '<p><img src="a.png"><img alt="x" src="b.png"><IMG\nsrc="c.png"></p>'
    assert feedback_html.with_alt_text(page).count(feedback_html.NO_ALT_TEXT) == 2
    assert 'alt="x"' in feedback_html.with_alt_text(page)

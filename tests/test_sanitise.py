"""Student text reaches a page only through the allow-list (autograder/outputs/sanitise.py): the TeX
commands that make links, styles, classes, ids and raw HTML, Markdown's raw HTML and script links,
and random TeX and Markdown, all rendered as a feedback page renders them, leave no element or
attribute outside the allow-list and no link or source that would run or fetch anything."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbconvert.exporters import HTMLExporter

from autograder.nbgrader_ext.feedback_text import Budget, render_student
from autograder.outputs import sanitise

_EXPORTER = HTMLExporter()


def _render(markdown: str) -> str:
    return render_student(markdown, lambda text: _EXPORTER.markdown2html({"cell": {}}, text), Budget())


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def elements(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(page)
    return parser.found


_ALLOWED_ATTRS = {"a": {"href", "title", "rel", "class"}, "img": {"src", "alt", "title", "width", "height"},
                  "input": {"type", "disabled", "checked", "class"}, "ol": {"start"}, "details": {"open"},
                  "th": {"style"}, "td": {"style"}, "span": {"class"}, "div": {"class"}, "li": {"class"},
                  **{f"h{i}": {"id"} for i in range(1, 7)}}


def assert_allowed(page: str) -> None:
    """Every element of ``page`` is allow-listed, with allow-listed attributes whose values are harmless."""
    for tag, attrs in elements(page):
        assert tag in sanitise.MARKDOWN_TAGS | sanitise.MATHML_TAGS, (tag, page)
        allowed = sanitise.MATHML_ATTRIBUTES if tag in sanitise.MATHML_TAGS else _ALLOWED_ATTRS.get(tag, set())
        if tag == "math" and attrs.get("display") == "block":  # (a displayed formula scrolls by keyboard too)
            allowed = allowed | {"tabindex"}
            assert attrs.get("tabindex") == "0", (tag, attrs, page)
        assert set(attrs) <= allowed, (tag, attrs, page)
        for name, value in attrs.items():
            v = (value or "").strip().lower()
            assert (not name.startswith("on") and name not in {"style", "class", "id"}) or (
                (name == "style" and v in {"text-align:left", "text-align:center", "text-align:right"})
                or (name == "class" and set(v.split()) <= set().union(*sanitise.MARKDOWN_CLASSES.values()))
                or (name == "id" and v.startswith(sanitise.ID_PREFIX))), (tag, name, value)
        href = (attrs.get("href") or "").replace(" ", "").lower()
        assert not href.startswith(("javascript:", "data:", "vbscript:", "file:", "//")), (tag, attrs)
        if "src" in attrs:
            assert (attrs["src"] or "").startswith("data:image/"), (tag, attrs)


HOSTILE_TEX = [
    r"$\href{javascript:alert(1)}{x}$", r"$\href{https://evil.example/x}{x}$", r"$\style{position:fixed;inset:0}{x}$",
    r"$\class{panel-heading}{x}$", r"$\cssId{top}{x}$", r"$\html{<b onclick=x>}$", r"$\unicode[Arial]{x41}$",
    r"$\require{html}\href{javascript:x}{y}$", r"$\text{<img src=x onerror=alert(1)>}$",
    r"$\text{<script>alert(1)</script>}$", r"$\rule{10000em}{10000em}$", r"$\hspace{5000px}$",
    r"$\colorbox{red}{\rule{999em}{999em}}$", r"$\color{expression(alert(1))}{x}$",
    r"$$\mathrm{\href{vbscript:x}{y}}$$", r"\(\style{background:url(https://evil.example)}{x}\)",
]


@pytest.mark.parametrize("tex", HOSTILE_TEX)
def test_tex_that_makes_links_styles_classes_ids_or_html_leaves_none(tex):
    page = _render(f"My answer: {tex} done.")
    assert_allowed(page)
    assert "My answer:" in page and "done." in page  # the text itself is kept
    assert "javascript" not in page.lower() or "<code>" in page, page
    for tag, attrs in elements(page):
        assert ("style" not in attrs and "class" not in attrs and "href" not in attrs) or tag in {"a", "th", "td"}, \
            (tag, attrs)
        for length in ("width", "height", "lspace", "rspace", "voffset", "depth"):
            if tag in sanitise.MATHML_TAGS and length in attrs:
                assert "999" not in attrs[length] and "5000" not in attrs[length], (tag, attrs)


@pytest.mark.parametrize("markdown", [
    "<img src=x onerror=alert(1)>", "<a href='javascript:alert(1)'>x</a>", "[x](javascript:alert(1))",
    "[x](JaVaScRiPt&#58;alert(1))", "[x](data:text/html;base64,PHNjcmlwdD4=)", "[x](//evil.example/x)",
    "<svg onload=alert(1)>", "<style>body{display:none}</style>", "<iframe src=https://evil.example></iframe>",
    "<div style='position:fixed'>Score: 100 / 100</div>", "<p class='panel-heading' id='toc'>x</p>",
    "![x](https://evil.example/pixel.png)", "<math><mrow href='javascript:x'><mi>x</mi></mrow></math>",
    "<form action=https://evil.example><input name=x></form>", "<a name=top>x</a>",
])
def test_raw_html_and_script_links_in_markdown_leave_nothing_live(markdown):
    # as if staging's neutralising had been bypassed: the sanitiser alone must hold
    page = _render(markdown)
    assert_allowed(page)
    assert "evil.example" not in "".join(str(a) for _t, a in elements(page)), page


def test_what_the_project_emits_is_kept():
    page = _render("# Heading $x_i$\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n```python\ndef f(): pass\n```\n\n"
                   "- [ ] task\n\n[course](https://course.example/book) [up](#heading) "
                   "![pasted](data:image/png;base64,iVBORw0KGgo=)\n\n<details><summary>hint</summary>text</details>")
    tags = [t for t, _a in elements(page)]
    for tag in ("h1", "math", "msub", "table", "td", "pre", "span", "details", "summary", "img", "a", "input"):
        assert tag in tags, (tag, page)
    assert 'href="https://course.example/book"' in page and 'href="#user-heading"' in page
    assert 'style="text-align:left"' in page and 'class="k"' in page and 'id="user-Heading-' in page


_TEX_ATOMS = [r"\href{javascript:a}{", r"\style{color:red}{", r"\class{x}{", r"\cssId{y}{", r"\html{", r"\unicode{",
              r"\require{", r"\text{<b>", r"\rule{1e9em}{", r"\hspace{", r"\colorbox{red}{", r"\color{#fff}",
              "{", "}", "x", "^", "_", r"\frac{", r"\sqrt[", "]", r"\left(", r"\right)", "&", r"\\", " "]
_MD_ATOMS = ["<", ">", "<img ", "<a href=", "javascript:", " onerror=", '"', "'", "[", "](", ")", "*", "`", "#",
             "\n", "> ", "- ", "|", "&#", "x", "style=", "class=", "id=", "<svg", "<math", "<mi>", "</", "\\"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_MD_ATOMS), st.lists(st.sampled_from(_TEX_ATOMS), max_size=12)
                          .map(lambda xs: "$" + "".join(xs) + "$")), max_size=30))
def test_random_tex_and_markdown_leave_nothing_outside_the_allow_list(pieces):
    assert_allowed(_render("".join(pieces)))


def test_the_class_report_keeps_only_its_own_ids_and_classes():
    body = ('<section id="glance" class="glance"><h2 id="now">x</h2><p class="muted" id="toc" style="x">t</p>'
            '<a href="javascript:alert(1)" onclick="x">j</a><a href="../feedback/a/b.html">f</a>'
            '<svg class="hist" viewBox="0 0 1 1" onload="x"><rect x="1"/></svg><script>alert(1)</script></section>')
    out = sanitise.report_fragment(body)
    assert '<section id="glance" class="glance">' in out and '<h2 id="now">' in out and 'class="muted"' in out
    assert 'id="toc"' not in out and "style" not in out and "onclick" not in out and "onload" not in out
    assert "javascript" not in out and "alert" not in out and 'href="../feedback/a/b.html"' in out
    assert 'viewBox="0 0 1 1"' in out


# ---- nested sizes: a formula's sizes are bounded as a whole -------------------------------------

_UNIT = {"em": 1.0, "ex": 0.5, "%": 0.01, "mu": 1 / 18, "": 1.0}


class _MathPaths(HTMLParser):
    """Every element inside a formula, with the product of the ``mathsize`` factors from the outermost
    ``<math>`` down to it; and what a formula holds that it may not (HTML, an absolute or negative size)."""

    VOID = frozenset({"br", "hr", "img", "input"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, float]] = []
        self.scales: list[float] = []
        self.wrong: list[str] = []

    def handle_starttag(self, tag, attrs):
        if not self.stack and tag != "math":
            return
        if tag not in sanitise.MATHML_TAGS:
            self.wrong.append(f"<{tag}> inside a formula")
        scale = self.stack[-1][1] if self.stack else 1.0
        for name, value in attrs:
            if name == "mathsize":
                number, unit = re.fullmatch(r"(-?[\d.]+)(em|ex|%|mu|)", value or "").groups()  # else: not a size
                scale *= float(number) * _UNIT[unit]
            if name == "scriptlevel" and (value or "").strip().startswith("-"):
                self.wrong.append(f"scriptlevel={value}")
        self.scales.append(scale)
        if tag not in self.VOID:
            self.stack.append((tag, scale))

    def handle_endtag(self, tag):
        if self.stack:
            assert self.stack[-1][0] == tag, (self.stack, tag)
            self.stack.pop()


_SIZE = st.sampled_from(["2.49em", "2em", "1.44em", "0.5em", "250%", "3", "40px", "30pt", "90mu", "-2em", "0",
                         "infinity", "big"])
_MATHML = st.recursive(
    st.sampled_from(["<mi>x</mi>", '<mspace width="20em" height="20em" mathbackground="black"></mspace>']),
    lambda inner: st.one_of(
        st.builds('<mstyle mathsize="{}">{}</mstyle>'.format, _SIZE, inner),
        st.builds('<mstyle scriptlevel="{}">{}</mstyle>'.format, st.sampled_from(["0", "2", "+1", "-1", "-6"]), inner),
        st.builds('<mstyle mathsize="{}" scriptlevel="-3">{}</mstyle>'.format, _SIZE, inner),
        st.builds('<mpadded height="0" depth="0">{}</mpadded>'.format, inner),
        st.builds("<mtext><h1>{}</h1></mtext>".format, inner),
        st.builds("<mtext><b>{}<br></b><span>y</span></mtext>".format, inner),
        st.builds('<mtext><math mathsize="{}">{}</math></mtext>'.format, _SIZE, inner),
        st.builds("<mrow>{}{}</mrow>".format, inner, inner),
    ), max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(_MATHML, _SIZE)
def test_nested_sizes_never_multiply_past_the_bound(mathml, size):
    out = sanitise.feedback_fragment(f'<p>a <math mathsize="{size}">{mathml}</math> b</p><h1>after</h1>')
    paths = _MathPaths()
    paths.feed(out)
    assert paths.wrong == [], (paths.wrong, out)
    assert paths.scales and max(paths.scales) <= sanitise.MAX_MATH_SCALE, (max(paths.scales), out)
    assert out.endswith("b</p><h1>after</h1>"), out  # what follows the formula is as it was


def test_the_issues_nested_huge_keeps_one_size():
    out = _render(r"Answer $\Huge{\Huge{\Huge{\Huge{\rule{20em}{20em}}}}}$ end")
    assert out.count('mathsize="2.49em"') == 1 and 'width="20em"' in out, out


#: ordinary TeX that changes sizes (the lecture's own formulas change none)
SIZED_TEX = [r"\displaystyle\sum_{i=1}^n x_i", r"\tfrac{1}{2} + \dfrac{a}{b}", r"\cfrac{1}{1 + \cfrac{1}{x}}",
             r"{\Large x} + {\small y} + {\tiny z}", r"x^{\scriptstyle a} y_{\scriptscriptstyle b}",
             r"\binom{n}{k} \tbinom{n}{k}", r"a \xrightarrow{f} b", r"{\Huge \sum} x^{\displaystyle \int f}"]


def test_ordinary_formulas_keep_every_size():
    """The lecture's formulas, and ordinary TeX that changes sizes, lose nothing to the bound."""
    from latex2mathml.converter import convert

    from autograder.nbgrader_ext.feedback_text import _formulas

    book = Path(__file__).resolve().parents[1] / "book"
    tex = {t.strip() for md in sorted(book.glob("*.md")) for _s, _e, t, _b in _formulas(md.read_text())}
    assert len(tex) > 100, len(tex)
    for t in sorted(tex) + SIZED_TEX:
        cleaned = sanitise._FEEDBACK.clean(convert(t))
        assert t not in SIZED_TEX or "scriptlevel" in cleaned or "mathsize" in cleaned, (t, cleaned)
        assert sanitise.bounded_math(cleaned) == cleaned, t

"""Sphinx extension: keep every page self-contained and light, and offer each chapter as a notebook.

sphinx-thebe (pulled in by Jupyter Book 1, though this site launches no kernels) writes an
inline script that names a CDN, and writes it twice per page, which is a console
SyntaxError.  This drops its assets from every page before rendering.

The theme's ``fontawesome.js`` (1.5 MB, the heaviest file a page loaded) redraws the theme's few
icons as SVG; its stylesheet already draws them with the icon font, so the script is dropped from
every page and from the site after the build. The search page shows snippets from ``file://`` too: it
reads the pages' texts from ``_static/search-texts.js``, written after the build, and both those texts and
the search index hold each formula as the text it shows, never its TeX. After the build,
three theme and Sphinx markups that accessibility checkers (axe-core) flag are corrected on every
page (see ``_HIDDEN_NAMES``), and each chapter's printed opener gets its chapter number.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from math_text import tex_as_text  # book/_ext, beside this file (Sphinx puts it on the path)

_DROP = ("sphinx-thebe", "THEBE_JS_URL", "thebe@")


def _keep(asset: Any) -> bool:
    text = str(getattr(asset, "filename", asset) or "") + str(getattr(asset, "attributes", {}).get("body", ""))
    return not any(marker in text for marker in _DROP)


def _strip_thebe(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if _keep(asset)]


def _offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """Copy the executed notebook of a MyST chapter next to its sources for the download menu.

    sphinx-book-theme lists ``context["ipynb_source"]`` under its download button, but only
    fills it in when a launch service (Binder, JupyterHub, ...) is configured; this site has none.
    """
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.exists():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


_FONTAWESOME_JS = re.compile(r'<(?:script[^>]*src|link[^>]*href)="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>'
                             r"(?:</script>)?\n?")


# Names that differ from what the control shows (axe-core's label-content-name-mismatch): a control's
# accessible name must contain its visible text, so these take their name from their text instead.
_HIDDEN_NAMES = (
    # the theme's search button shows "Search Ctrl+K" but is named "Search"
    (re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"'), r"\1"),
    # a folded code cell's toggle shows "Show code cell source" but is named "Toggle hidden content"
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    # the bibliography is a list (role="list") whose entries must be list items for assistive technology
    (re.compile(r'(<div class="citation" id="[^"]*") role="doc-biblioentry"'), r'\1 role="listitem"'),
)


# The book theme prints a page's own title above its contents (the chapter opener on paper), without the
# chapter number the page's heading carries: it gets the number of the page's first numbered heading.
_PRINT_TITLE = re.compile(r'(<div id="jb-print-docs-body" class="onlyprint">\s*<h1>)(?!<span class="section-number">)')
_SECTION_NUMBER = re.compile(r'<h1><span class="section-number">([^<]*)</span>')


def number_print_title(text: str) -> str:
    """``text`` (a built page) with its printed opener numbered as its heading is ("1. From text to vectors")."""
    number = _SECTION_NUMBER.search(text)
    if number is None:
        return text
    return _PRINT_TITLE.sub(lambda m: f'{m.group(1)}<span class="section-number">{number.group(1)}</span>', text,
                            count=1)


def _finish_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = number_print_title(_FONTAWESOME_JS.sub("", text))
        for pattern, replacement in _HIDDEN_NAMES:
            lighter = pattern.sub(replacement, lighter)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")
    for leftover in (out / "_static" / "scripts").glob("fontawesome.js*"):
        leftover.unlink()


def _search_page_assets(app, pagename, templatename, context, doctree) -> None:
    """The search page answers its snippet fetches from the stored page texts (``search-offline.js``)."""
    if pagename == "search":
        app.add_js_file("search-texts.js")
        app.add_js_file("search-offline.js")


#: What the stored search texts leave out of a page's article: no words a snippet could show (the printed
#: opener and its contents list, the static alternatives shown only on paper, folded code).
_NOT_TEXT = ("script", "style", "img", "svg", "noscript", ".headerlink", "details.hide", ".cell_input",
             "#jb-print-docs-body", ".onlyprint", ".print-only", "#searchbox")
#: A formula's TeX between its delimiters, as Sphinx writes it into a ``.math`` element.
_DELIMITED = re.compile(r"^\s*(?:\\\(|\\\[|\$\$?)?(.*?)(?:\\\)|\\\]|\$\$?)?\s*$", re.S)


def _write_search_texts(app, exception) -> None:
    """``_static/search-texts.js``: the article of every page, reduced to its text as shown, and ids.

    Sphinx's search cuts each hit's snippet from the hit's page, which it fetches; a browser refuses
    to fetch on ``file://``, so the search page reads these texts instead (``search-offline.js``).
    Each page keeps ``role="main"`` around its article alone (not the header's Download and
    fullscreen buttons, nor the printed contents list), every element with an id (a hit's anchor),
    and its formulas as the text they show (:func:`math_text.tex_as_text`), never their TeX.
    """
    if exception is not None or app.builder.format != "html":
        return
    import json

    from bs4 import BeautifulSoup

    out = Path(app.outdir)
    pages: dict[str, str] = {}
    for doc in sorted(app.env.found_docs):
        path = out / f"{doc}.html"
        if not path.is_file() or doc == "search":
            continue
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        main = soup.find("article") or soup.find(attrs={"role": "main"})
        if main is None:
            continue
        for gone in main.select(", ".join(_NOT_TEXT)):
            gone.decompose()
        for formula in main.select(".math"):
            formula.replace_with(tex_as_text(_DELIMITED.match(formula.get_text()).group(1)))
        for tag in main.find_all(True):
            keep = {"id": tag["id"]} if tag.has_attr("id") else {}
            tag.attrs = keep
            if not keep and tag.name not in ("p", "li", "section", "div", "dt", "dd", "td", "th", "h1", "h2",
                                             "h3", "h4", "pre", "table", "tr", "ul", "ol", "dl", "figure",
                                             "figcaption", "blockquote"):
                tag.unwrap()
        main.name = "main"
        main.attrs = {"role": "main"}
        html = re.sub(r"\s+", " ", str(main))
        pages[doc] = html
    text = "window.SELFATTN_SEARCH_PAGES = " + json.dumps(pages, ensure_ascii=False, separators=(",", ":")) + ";\n"
    (out / "_static" / "search-texts.js").write_text(text, encoding="utf-8")


_FRONT_DOOR = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="{icon}">
<meta http-equiv="Refresh" content="0; url={first}">
</head>
<body>
<p><a href="{first}">{title}</a></p>
</body>
</html>
"""


def _write_front_door(app, exception) -> None:
    """``index.html``: the site's address opens the book's first page.

    Without it, sphinx-external-toc writes a bare refresh tag there: no title, no language, and no
    icon, so the browser asks for ``/favicon.ico``, which the site does not have (a 404 in the
    console). This page names the book's icon, says where it goes and links there for a reader whose
    browser does not follow the refresh. Runs before sphinx-external-toc's handler, which then keeps it.
    """
    if exception is not None or app.builder.name != "html":
        return
    from html import escape

    icon = app.config.html_favicon
    fields = {
        "lang": escape(app.config.language or "en"),
        "title": escape(app.config.html_title or app.config.project),
        "icon": escape(f"_static/{Path(icon).name}" if icon else "data:,"),
        "first": escape(f"{app.config.root_doc}.html"),
    }
    (Path(app.outdir) / "index.html").write_text(_FRONT_DOOR.format(**fields), encoding="utf-8")


def _index_math_as_shown() -> None:
    """Sphinx's search index takes the words of a formula as it finds them, its TeX (``mathbf``, ``frac``,
    ``sqrt``: a search for them found every page with math); it takes the words the formula shows instead
    (:func:`math_text.tex_as_text`: ``softmax``, ``MultiHead``, ``row t of E``). The index reads a copy of
    each page's doctree whose formulas are replaced by that text."""
    from docutils import nodes
    from sphinx.search import IndexBuilder

    collect = IndexBuilder._word_collector
    if getattr(collect, "shows_math", False):
        return

    def _word_collector(self, doctree):
        shown = doctree.deepcopy()
        for formula in list(shown.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block)))):
            formula.replace_self(nodes.Text(tex_as_text(formula.astext())))
        return collect(self, shown)

    _word_collector.shows_math = True  # type: ignore[attr-defined]
    IndexBuilder._word_collector = _word_collector


def setup(app) -> dict[str, Any]:
    # Page titles hold no math (MathJax does not typeset the navigation or the <title>), so only
    # pages with an equation load MathJax.
    app.connect("html-page-context", _strip_thebe, priority=900)
    app.connect("build-finished", _finish_pages)
    app.connect("build-finished", _write_front_door, priority=400)
    app.connect("html-page-context", _offer_notebook, priority=400)
    app.connect("html-page-context", _search_page_assets)
    app.connect("build-finished", _write_search_texts)
    _index_math_as_shown()
    return {"parallel_read_safe": True, "parallel_write_safe": True}

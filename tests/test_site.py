"""The built site, opened page by page in headless Chromium with the network cut off.

Needs `make book` first (`make test` does it).  Checks, for every HTML page: no request
outside the site, no failed request, no console error, math typeset by the local MathJax,
and every internal link pointing at a file that exists.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest
from browser_support import SITE, PageLoads, PageReport, SiteBrowser, attach_recorders, measured

pytestmark = pytest.mark.browser

PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if "_static" not in p.parts)


def test_site_was_built():
    assert (SITE / "index.html").exists(), "run `make book` first"
    assert any(p.startswith("book/") for p in PAGES), f"no chapter pages among {PAGES}"


@pytest.fixture(scope="module")
def site(site_browser):
    return site_browser  # one Chromium and one cache of the site per test process (tests/conftest.py)


def _open(site, rel: str) -> tuple[PageReport, object]:
    base, browser = site
    report = PageReport(rel)
    page = browser.new_page()
    attach_recorders(page, base, report)
    page.goto(base + rel, wait_until="networkidle")
    return report, page


#: Each page's load, by page: its two tests read one load.
_loads = PageLoads()


def _visit(site, rel: str, name: str):
    """Part ``name`` of a single load of ``rel``: ``math`` (what MathJax left untypeset or flagged),
    ``loaded`` (the load's report and the server's misses, with its math typeset) and, for a chapter,
    ``moved`` (:func:`_move_every_control`, last, and the console errors after it)."""
    def load() -> dict[str, object]:
        site[1].misses.clear()
        report, page = _open(site, rel)

        def loaded(page) -> tuple[PageReport, list[str]]:
            page.wait_for_timeout(300)
            return (PageReport(rel, list(report.outside_requests), list(report.failed_requests),
                               list(report.console_errors)), list(site[1].misses))

        try:
            parts = {"math": _math_problems, "loaded": loaded}
            if rel in CHAPTERS:
                parts["moved"] = lambda page: (*_move_every_control(page, rel), list(report.console_errors))
            return measured(page, parts)
        finally:
            page.close()

    return _loads.part(rel, load, name)


def _math_problems(page) -> list[str]:
    """What MathJax reported on ``page``: a TeX error, math it left untypeset."""
    problems = []
    if page.locator(".math").count():
        page.wait_for_selector("mjx-container", state="attached", timeout=15000)
        if page.locator("mjx-merror").count():
            problems.append("MathJax reported a TeX error")
        raw = page.locator(".math:not(:has(mjx-container))").count()
        if raw:
            problems.append(f"{raw} math elements were left untypeset")
    return problems


@pytest.mark.parametrize("rel", PAGES)
def test_page_is_self_contained_and_error_free(site, rel):
    math, (report, misses) = _visit(site, rel, "math"), _visit(site, rel, "loaded")
    assert math == [], f"{rel}: {math}"
    assert report.outside_requests == [], f"{rel} asked outside servers: {report.outside_requests}"
    assert report.failed_requests == [], f"{rel} had failed requests: {report.failed_requests}"
    assert report.console_errors == [], f"{rel} logged console errors: {report.console_errors}"
    assert misses == [], f"{rel}: the site's server answered with errors: {misses}"


def test_math_is_rendered_by_the_local_mathjax(site):
    _report, page = _open(site, "book/intro.html")
    try:
        page.wait_for_selector("mjx-container", state="attached", timeout=15000)
        assert page.locator("mjx-container").count() >= 1
        src = page.evaluate("Array.from(document.scripts).map(s => s.src).filter(s => /mathjax/i.test(s))")
    finally:
        page.close()
    assert src and all(s.startswith(site[0]) for s in src), src


def _outside_address() -> str:
    """An address of this machine that is not loopback (the source address of a route outward)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
            address = probe.getsockname()[0]
        except OSError as exc:
            raise AssertionError(f"this machine has no address besides loopback to test the cut with: {exc}") from exc
    assert not address.startswith("127."), f"the outgoing address is loopback ({address})"
    return address


def test_the_network_is_cut_and_every_outside_request_is_recorded(site):
    """A server that answers on this machine's outside address (as a CDN would) is out of reach of the
    site's pages, and the page's attempts to reach it, or a named host, are recorded."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    outside = http.server.ThreadingHTTPServer(("0.0.0.0", 0), handler)
    threading.Thread(target=outside.serve_forever, daemon=True).start()
    url = f"http://{_outside_address()}:{outside.server_address[1]}/index.html"
    try:
        import urllib.request

        assert urllib.request.urlopen(url, timeout=5).status == 200, f"the outside server does not answer at {url}"
        report, page = _open(site, "book/intro.html")
        try:
            reached = page.evaluate("""urls => Promise.all(urls.map(u => fetch(u, {mode: 'no-cors'})
                .then(() => 'reached', () => 'cut off')))""", [url, "https://cdn.example.org/mathjax.js"])
        finally:
            page.close()
    finally:
        outside.shutdown()
        outside.server_close()
    assert reached == ["cut off", "cut off"], f"the browser reached outside servers: {reached}"
    assert report.outside_requests == [url, "https://cdn.example.org/mathjax.js"], report.outside_requests


def test_each_page_starts_as_a_new_readers_would(site):
    """The pages of one test module share a browser profile (its cache), not what a page stored: a
    theme a reader chose on one page is not the theme of the next page opened."""
    base, browser = site
    first = browser.new_page()
    try:
        first.goto(base + "book/intro.html", wait_until="load")
        first.evaluate(f"() => {{ {SiteBrowser.DARK_STORAGE} }}")
        first.reload(wait_until="load")
        chosen = first.evaluate("document.documentElement.dataset.theme")
    finally:
        first.close()
    second = browser.new_page()
    try:
        second.goto(base + "book/intro.html", wait_until="load")
        shown = second.evaluate("[document.documentElement.dataset.theme, localStorage.getItem('mode')]")
    finally:
        second.close()
    assert chosen == "dark", f"the dark theme chosen on a page is not shown after a reload: {chosen!r}"
    assert shown[0] == "light" and shown[1] in (None, "auto"), \
        f"a new page starts with what an earlier page stored (theme shown, mode stored): {shown}"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and ((tag in ("a", "link") and name == "href") or (name == "src" and tag in ("img", "script"))):
                self.links.append(value)


@pytest.mark.parametrize("rel", PAGES)
def test_internal_links_resolve(rel):
    page_path = SITE / rel
    parser = _Links()
    parser.feed(page_path.read_text(encoding="utf-8"))
    broken = []
    for link in parser.links:
        if re.match(r"^(mailto:|javascript:|data:)", link) or urlparse(link).scheme:
            continue
        target = urlparse(urldefrag(link)[0]).path
        if not target:
            continue
        path = (page_path.parent / unquote(target)).resolve()
        if not path.exists() or (path.is_dir() and not (path / "index.html").exists()):
            broken.append(link)
    assert broken == [], f"{rel} links to missing files: {broken}"


class _Icons(HTMLParser):
    def __init__(self):
        super().__init__()
        self.icons: list[str] = []

    def handle_starttag(self, tag, attrs):
        named = dict(attrs)
        if tag == "link" and "icon" in (named.get("rel") or "").lower().split() and named.get("href"):
            self.icons.append(named["href"])


@pytest.mark.parametrize("rel", PAGES)
def test_every_page_names_an_icon_the_site_has(rel):
    """A page that names no icon makes the browser ask, on its own, for ``/favicon.ico`` (which the
    site does not have): a 404 in the console that no page event shows, and that appears only when the
    request beats the page's closing (or its redirect)."""
    parser = _Icons()
    parser.feed((SITE / rel).read_text(encoding="utf-8"))
    assert parser.icons, f"{rel} names no icon (<link rel=\"icon\">): the browser would ask for /favicon.ico"
    missing = [href for href in parser.icons if not (SITE / rel).parent.joinpath(unquote(href)).resolve().is_file()]
    assert missing == [], f"{rel} names icons the site does not have: {missing}"


def test_no_outside_urls_in_loaded_assets():
    """Belt and braces: no page names a CDN in a script or stylesheet tag."""
    cdn = re.compile(r"""(src|href)=["']https?://(?!127\.0\.0\.1)[^"']+\.(js|css)""")
    hits = {p: cdn.findall(Path(SITE / p).read_text(encoding="utf-8")) for p in PAGES}
    assert {p: h for p, h in hits.items() if h} == {}


CHAPTERS = [p for p in PAGES if p.startswith("book/") and not p.endswith("intro.html")]


def _visible_alt_or_text(stack) -> str:
    img = stack.locator("img[alt]:visible")
    if img.count():
        return img.first.get_attribute("alt")
    return stack.inner_text()


def test_every_chapter_exists():
    assert len(CHAPTERS) >= 9, CHAPTERS


def _move_every_control(page, rel: str) -> tuple[int, list[str]]:
    """How many widgets ``rel`` shows, and each control of them that changed nothing it drives: every
    slider moved two steps, every toggle group's last button pressed (no kernel runs)."""
    page.wait_for_selector(".widget-subarea .jupyter-widgets", timeout=15000)
    boxes = page.locator(".widget-subarea > .widget-vbox")
    unmoved = []
    for b in range(boxes.count()):
        box = boxes.nth(b)
        if box.locator(".noUi-handle, .widget-toggle-buttons button").count() < 1:
            unmoved.append(f"widget {b} on {rel} has no control")
            continue
        before = _visible_alt_or_text(box)
        handle = box.locator(".noUi-handle")
        if handle.count():
            handle.first.focus()
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(150)
            after = _visible_alt_or_text(box)
            if after == before:
                unmoved.append(f"slider {b} on {rel} did not change the figure")
            before = after
        buttons = box.locator(".widget-toggle-buttons button")
        if buttons.count() >= 2:
            buttons.nth(buttons.count() - 1).click()
            page.wait_for_timeout(150)
            if _visible_alt_or_text(box) == before:
                unmoved.append(f"buttons of widget {b} on {rel} changed nothing")
    return boxes.count(), unmoved


@pytest.mark.parametrize("rel", CHAPTERS)
def test_widgets_respond_without_a_kernel(site, rel):
    """Move every control on the page and see the frame it drives change (no kernel runs)."""
    widgets, unmoved, errors_after_moving = _visit(site, rel, "moved")
    assert widgets >= 1, f"{rel} has no widget"
    assert unmoved == [], unmoved
    assert errors_after_moving == [], errors_after_moving


@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_offers_its_notebook(rel):
    html = (SITE / rel).read_text(encoding="utf-8")
    name = Path(rel).with_suffix(".ipynb").as_posix()
    assert f"_sources/{name}" in html, f"{rel} has no .ipynb download link"
    assert (SITE / "_sources" / name).exists()


def test_figures_have_captions_and_alt_text():
    """Every image (static or a widget frame, whose HTML sits escaped in the widget state) has
    descriptive alt text, and every static figure has a caption."""
    for rel in CHAPTERS:
        html = (SITE / rel).read_text(encoding="utf-8")
        imgs = re.findall(r"<img\b.*?>", html)
        assert imgs, f"{rel} shows no image"
        no_alt = [i[:60] for i in imgs if not re.search(r'alt=\\?"(?:[^"\\]|\\u[0-9a-f]{4}){20,}', i)]
        assert no_alt == [], f"{rel}: images without real alt text: {no_alt}"
        static_figures = re.findall(r"<figure\b[^>]*>.*?</figure>", html, flags=re.S)
        uncaptioned = [f[:80] for f in static_figures if "<figcaption" not in f]
        assert uncaptioned == [], f"{rel}: figures without caption: {uncaptioned}"


def test_search_finds_a_lecture_term(site):
    _report, page = _open(site, "search.html?q=saturation")
    try:
        page.wait_for_selector("#search-results li", timeout=15000)
        hits = page.locator("#search-results li a").all_inner_texts()
    finally:
        page.close()
    assert any("Saturation" in h or "saturation" in h.lower() for h in hits), hits


@pytest.mark.parametrize("origin", ["file", "http"])
def test_search_shows_snippets_and_each_page_once(site, origin):
    """Opened from the disk (file://) as over http, the search page gives every hit a snippet of its page,
    and lists no page twice under the same title (a glossary term's index entry and the full text of the
    Glossary both matched, so it was listed twice)."""
    base, browser = site
    url = (SITE / "search.html").as_uri() if origin == "file" else base + "search.html"
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url + "?q=softmax", wait_until="load")
        page.wait_for_selector("#search-results li", timeout=15000)
        page.wait_for_function("() => { const r = document.querySelector('#search-results');"
                               " return r && /Search finished/.test(r.textContent); }", timeout=15000)
        page.wait_for_timeout(500)  # the last snippets are filled in after the status line
        hits = page.evaluate("""() => Array.from(document.querySelectorAll('#search-results li')).map(li => {
            const a = li.querySelector('a');
            return [a.textContent.trim(), a.getAttribute('href').split('#')[0],
                    !!li.querySelector('p.context, span')]; })""")
    finally:
        page.close()
    assert errors == [], f"search page errors: {errors}"
    assert len(hits) >= 5, f"searching 'softmax' found only {hits}"
    titles = [(title, href) for title, href, _ in hits]
    twice = sorted({t for t in titles if titles.count(t) > 1})
    assert twice == [], f"listed more than once: {twice}"
    assert [t for t, _ in titles].count("Glossary") <= 1, titles
    bare = [t for t, _, snippet in hits if not snippet]
    assert bare == [], f"hits without a snippet of their page ({origin}://): {bare}"


#: Words of pages full of formulas, each with a symbol its hit's snippet shows as the page does (chapter 3's
#: score s = ⟨q, k⟩/√dₖ, chapter 4's variance of a sum of d_k products, chapter 7's -∞ in the mask).
SEARCHED_WITH_MATH = {"divisor": "√dₖ", "variance": "", "mask": "", "gradient": "", "softmax": ""}
#: What a snippet must not show: TeX source, and the words of the page's buttons and printed contents.
NOT_SHOWN = re.compile(r"\$|\\[A-Za-z]+|\\[()\[\]{}]|\bDownload\b|Print to PDF|\.ipynb|Show code cell")


def _snippets(site, term: str) -> list[tuple[str, str]]:
    """Each hit of searching ``term`` on the site's search page: its title and its snippet as shown."""
    base, browser = site
    page = browser.new_page()
    try:
        page.goto(base + "search.html?q=" + term, wait_until="load")
        page.wait_for_function("() => { const r = document.querySelector('#search-results');"
                               " return r && /Search finished/.test(r.textContent); }", timeout=15000)
        page.wait_for_function("() => Array.from(document.querySelectorAll('#search-results li'))"
                               ".every(li => li.querySelector('p.context'))", timeout=15000)
        return page.evaluate("""() => Array.from(document.querySelectorAll('#search-results li')).map(li =>
            [li.querySelector('a').textContent.trim(), li.querySelector('p.context').innerText])""")
    finally:
        page.close()


@pytest.mark.parametrize("term", sorted(SEARCHED_WITH_MATH))
def test_search_snippets_show_the_text_as_displayed(site, term):
    """A hit's snippet reads as its page does: formulas as the symbols they show, not their TeX (no ``$``,
    ``\\mathbf``, ``\\(``), and none of the words of the page's buttons (Download, Print to PDF, .ipynb)."""
    hits = _snippets(site, term)
    assert hits, f"searching {term!r} found nothing"
    shown = [(title, m.group(0), snippet[max(0, m.start() - 40):m.end() + 40])
             for title, snippet in hits for m in [NOT_SHOWN.search(snippet)] if m]
    assert shown == [], f"snippets for {term!r} show source or button text (page, what, where): {shown[:4]}"
    symbol = SEARCHED_WITH_MATH[term]
    if symbol:
        assert any(symbol in snippet for _, snippet in hits), \
            f"no snippet for {term!r} shows {symbol!r} as its page does: {[s[:160] for _, s in hits][:3]}"


#: TeX's own words as Sphinx's search stems them (mathbf, frac, langle, operatorname, infty, ...): a page that
#: shows a formula does not show these (not sqrt: the code cells call np.sqrt).
TEX_TERMS = ("mathbf", "mathbb", "mathcal", "mathrm", "frac", "langl", "rangl", "operatornam", "qquad",
             "infti", "cdot", "odot")


def test_search_index_holds_formulas_as_shown():
    """The search index holds a formula's words as the page shows them, not its TeX: searching 'mathbf' or
    'frac' finds nothing (it found every page with a formula), while a word a formula shows is found."""
    import json

    index = (SITE / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(index[index.index("(") + 1:index.rindex(")")])["terms"]
    # a term's pages: one page's number, or a list (empty for a term an earlier build indexed and no page has now)
    tex = [t for t in TEX_TERMS if terms.get(t, []) not in ([], None)]
    assert tex == [], f"TeX commands in the search index (a search for them finds pages that do not show them): {tex}"
    assert "multihead" in terms, "the word a formula shows (MultiHead, chapter 3) is not in the search index"

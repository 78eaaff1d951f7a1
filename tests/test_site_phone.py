"""The built site on a phone (headless Chromium, 390 px wide, light and dark) and its figures at any zoom.

What a reader of a 390 px screen meets: every part of every widget (sliders with their readouts, toggle
buttons, captions, figures, the cost calculator's text and bar) lies inside the screen and cuts no text;
every display formula fits its column without a sideways scroll; the page itself never scrolls sideways.
Figures carry at least two image pixels per CSS pixel (sharp when zoomed, on high-density screens and
in print), and the data-flow diagram's smallest label stays legible on the phone and on paper. Every
figure and widget frame keeps its smallest text at READABLE CSS px or more at 390 px, or opens at full
size on a tap (its text then READABLE px or more), and the page never blocks pinch zoom.
"""

from __future__ import annotations

import re

import pytest
from browser_support import SITE, PageLoads, PageReport, attach_recorders, measured, open_settled, settle

from selfattn.plots import DENSITY, MIN_TEXT_KEY, dataflow_diagram, png_text

pytestmark = pytest.mark.browser

PHONE = 390
#: The smallest text size (CSS px) a phone reader is asked to read, in a figure or a widget.
READABLE = 9
#: Collecting must not need the site (make test-fast imports this file and runs none of it); without
#: it, the first test below fails saying so.
BUILT = (SITE / "book" / "intro.html").is_file()
PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
               if "_static" not in p.parts) if BUILT else []
READING = ["book/intro.html", *(p for p in PAGES if re.match(r"book/\d\d-", p))] if BUILT else []
WIDGET_PAGES = [p for p in READING if "application/vnd.jupyter.widget-state+json" in (SITE / p).read_text()]
MATH_PAGES = [p for p in PAGES if "class=\"math" in (SITE / p).read_text() or "\\[" in (SITE / p).read_text()]

# Every visible piece of every widget that sticks out of the screen, and every widget text box that
# hides part of its text (its content is wider than its box).
WIDGET_BOXES_JS = """(width) => {
  const out = [];
  const sel = '.widget-subarea .widget-slider, .widget-subarea .widget-readout, .widget-subarea .noUi-handle, ' +
              '.widget-subarea .widget-label, .widget-subarea button, .widget-subarea .widget-html-content, ' +
              '.widget-subarea .widget-html-content > *, .widget-subarea img, .widget-subarea figcaption';
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    if (!el.offsetParent || r.width === 0) continue;   // a frame the widget does not show now
    const what = (el.className.baseVal === undefined ? el.className : '') + ' ' +
                 (el.textContent || el.getAttribute('alt') || '').trim().slice(0, 40);
    if (r.left < -0.5 || r.right > width + 0.5) out.push(['outside the screen', what, Math.round(r.left),
                                                           Math.round(r.right)]);
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
      out.push(['text cut', what, el.scrollWidth, el.clientWidth]);
  }
  return out;
}"""

# Display formulas whose content is wider than their box (the reader would have to scroll sideways).
WIDE_MATH_JS = """() => Array.from(document.querySelectorAll('article mjx-container[display="true"]'))
  .filter(m => m.offsetParent !== null && m.scrollWidth > m.clientWidth + 1)
  .map(m => [(m.querySelector('mjx-assistive-mml') || m).textContent.slice(0, 70), m.scrollWidth, m.clientWidth])"""

IMAGES_JS = """() => Array.from(document.querySelectorAll('article img'))
  .filter(i => i.offsetParent !== null && i.getBoundingClientRect().width > 0)
  .map(i => ({alt: (i.alt || i.src).slice(0, 60), natural: i.naturalWidth, naturalHeight: i.naturalHeight,
              shown: i.getBoundingClientRect().width, id: (i.closest('figure') || {}).id || ''}))"""


@pytest.fixture(scope="module")
def browser(site_browser):
    return site_browser  # one Chromium and one cache of the site per test process (tests/conftest.py)


def _open(browser, rel: str, width: int = PHONE, dark: bool = False, media: str = "screen"):
    base, b = browser
    page = b.new_page(viewport={"width": width, "height": 844}, dark=dark)
    attach_recorders(page, base, PageReport(rel))
    open_settled(page, base + rel)
    if media != "screen":
        page.emulate_media(media=media)
        settle(page)
    return page


#: What the tests below measured on a page, by (page, width, dark): the scripts that only read the page
#: run first (:func:`_read_only_scripts`); on a phone, the walk through every widget frame that the fit
#: and readability tests read comes after them (:func:`_walk`).
_loads = PageLoads()


def _measure(browser, rel: str, width: int, dark: bool, name: str):
    """What ``name`` (a script of :func:`_read_only_scripts`, or ``walk``, :func:`_walk`) found on ``rel``
    shown at ``width`` px in the light or dark theme (screen media), from a single page load that
    measures them all."""
    def load() -> dict[str, object]:
        page = _open(browser, rel, width=width, dark=dark)
        try:
            parts = {n: (lambda page, script=script: page.evaluate(script))
                     for n, script in _read_only_scripts().items()}
            if width == PHONE and rel == PANEL_PAGE:
                parts["panel"] = _zoom_panel
            if width == PHONE and (rel in WIDGET_PAGES or (rel in READING and not dark)):
                parts["walk"] = lambda page: _walk(browser[0], page, rel, readable=not dark)
            return measured(page, parts)
        finally:
            page.close()

    return _loads.part((rel, width, dark), load, name)


def _read_only_scripts() -> dict[str, str]:
    """The scripts :func:`_measure` runs on each page, in order; none changes what the next one sees
    (the covers' script removes the element it adds, and runs last)."""
    return {"wide_math": WIDE_MATH_JS, "images": IMAGES_JS, "captions": CAPTIONS_JS, "boxed": BOXED_JS,
            "zoom_cues": ZOOM_CUES_JS, "tables": TABLES_JS, "table_captions": TABLE_CAPTIONS_JS,
            "split_ranges": SPLIT_RANGES_JS, "search_boxes": SEARCH_BOXES_JS,
            "covers": COVER_MISMATCH_JS}


def _each_frame(page):
    """Show every frame of every widget in turn (last option of each control), yielding after each."""
    yield
    for box in page.locator(".widget-subarea .widget-toggle-buttons").all():
        buttons = box.locator("button")
        for j in range(buttons.count()):
            buttons.nth(j).click()
            page.wait_for_timeout(60)
            yield
    for handle in page.locator(".widget-subarea .noUi-handle").all():
        handle.focus()
        page.keyboard.press("End")
        page.wait_for_timeout(100)
        yield


def test_the_site_is_built():
    assert BUILT, f"{SITE} holds no built site: run make book first (make test does)"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", WIDGET_PAGES)
def test_every_widget_fits_a_phone(browser, rel, dark):
    rendered, bad, sideways = _measure(browser, rel, PHONE, dark, "walk")["fits"]
    assert rendered, f"{rel}: no widget rendered"
    assert bad == [], f"{rel} at {PHONE} px: widget parts off screen or cut: {bad[:8]}"
    assert sideways <= PHONE, f"{rel} at {PHONE} px: the page scrolls sideways ({sideways} px wide)"


@pytest.mark.parametrize("rel", MATH_PAGES)
def test_display_math_fits_a_phone_without_scrolling(browser, rel):
    wide = _measure(browser, rel, PHONE, False, "wide_math")
    assert wide == [], f"{rel} at {PHONE} px: display formulas that need a sideways scroll: {wide}"


@pytest.mark.parametrize("rel", READING)
def test_figures_are_sharp_when_zoomed(browser, rel):
    """At 1280 px every shown figure has at least DENSITY image pixels per CSS pixel it covers."""
    images = _measure(browser, rel, 1280, False, "images")
    blurred = [(i["alt"], i["natural"], round(i["shown"])) for i in images if i["natural"] < DENSITY * i["shown"] - 1]
    assert blurred == [], f"{rel}: figures with fewer than {DENSITY} pixels per CSS pixel: {blurred}"


def _dataflow_drawing() -> tuple[float, float, float]:
    """The data-flow diagram as drawn: its width (inches), width per height and smallest font size (pt)."""
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    fig = dataflow_diagram()
    try:
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
        width, height = fig.get_size_inches()
        return float(width), float(width / height), min(sizes)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("media", ["phone", "print"])
def test_dataflow_labels_are_legible_on_a_phone_and_on_paper(browser, media):
    """The diagram's smallest label, at the size the page shows it: at least 8 CSS px on a 390 px screen,
    at least 8 pt on the printed page (printed as `make pdf` prints: 1000 px wide, print media; 1 CSS px
    is 1/96 in on paper)."""
    width, css_media = (PHONE, "screen") if media == "phone" else (1000, "print")
    page = _open(browser, "book/03-scores-softmax.html", width=width, media=css_media)
    try:
        shown = [i for i in page.evaluate(IMAGES_JS) if i["id"] == "fig-dataflow"]
    finally:
        page.close()
    assert len(shown) == 1, f"the data-flow figure (fig-dataflow) not found: {shown}"
    inches, aspect, smallest_pt = _dataflow_drawing()
    natural = shown[0]["natural"] / shown[0]["naturalHeight"]
    assert abs(natural - aspect) < 0.02, f"the page shows another drawing ({natural:.2f} wide per unit height) " \
        f"than selfattn.plots.dataflow_diagram ({aspect:.2f}): rebuild the book"
    scale = shown[0]["shown"] / (inches * 96)  # CSS px shown per CSS px drawn (96 per inch)
    label_px = smallest_pt * 96 / 72 * scale
    if media == "phone":
        assert label_px >= 8, f"smallest data-flow label is {label_px:.1f} px on a {PHONE} px phone"
    else:
        assert label_px * 72 / 96 >= 8, f"smallest data-flow label is {label_px * 72 / 96:.1f} pt in print"


# Every figure image a page shows now, tagged so the test can tap it: where its pixels come from and
# how wide it is drawn and shown.
SHOWN_FIGURES_JS = """() => Array.from(document.querySelectorAll('article img'))
  .filter(i => i.offsetParent !== null && i.getBoundingClientRect().width > 0)
  .map((i, k) => { i.dataset.probe = String(k);
    return {probe: String(k), src: i.currentSrc || i.src, alt: (i.alt || '').slice(0, 50), natural: i.naturalWidth,
            shown: i.getBoundingClientRect().width}; })"""

# Every visible text of every widget (labels, readouts, buttons, captions, HTML text) with its font size.
WIDGET_TEXT_JS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('.widget-subarea *')) {
    if (!el.offsetParent) continue;
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (own) out.push([el.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(el).fontSize)]);
  }
  return out;
}"""

ZOOMED_JS = """() => { const i = document.querySelector('.figure-zoom img');
  return i ? i.getBoundingClientRect().width : null; }"""


def _png_of(src: str, base: str) -> bytes:
    """The PNG bytes behind an image's source: a data: URI or a file of the built site."""
    import base64
    import urllib.parse

    if src.startswith("data:"):
        return base64.b64decode(src.split(",", 1)[1])
    assert src.startswith(base), f"a figure loads from outside the site: {src[:80]}"
    return (SITE / urllib.parse.unquote(src[len(base):].split("?")[0])).read_bytes()


def _smallest_text(png: bytes, alt: str) -> float:
    """The smallest text of a figure, in CSS px at the figure's own size (recorded by fig_to_png)."""
    recorded = png_text(png).get(MIN_TEXT_KEY)
    assert recorded is not None, f"figure {alt!r} records no text size: draw it with selfattn.plots.fig_to_png"
    return float(recorded)


def _walk(base: str, page, rel: str, readable: bool) -> dict[str, tuple]:
    """Show every frame of every widget of ``page`` (shown at PHONE px) in turn, once, and gather:

    - ``fits``: how many widgets were drawn, every widget part off the screen or whose text is cut (in
      any frame), and how wide the page is after the walk;
    - ``readable`` (if asked): the viewport's settings, each figure shown (its alt text, its smallest
      text drawn, as shown and, when that is under READABLE px, after a tap opens it at full size),
      every widget text under READABLE px, and each figure whose full-size view Escape did not close.
    """
    rendered = page.locator(".widget-subarea .jupyter-widgets").count()
    viewport = page.evaluate("() => (document.querySelector('meta[name=viewport]') || {}).content || ''")
    bad: list = []
    seen: dict[str, tuple[str, float, float, float | None]] = {}  # src -> (alt, drawn px, shown px, on tap px)
    small_widget_text: list = []
    not_closed: list[str] = []
    for _ in _each_frame(page):
        bad += [b for b in page.evaluate(WIDGET_BOXES_JS, PHONE) if b not in bad]
        if not readable:
            continue
        small_widget_text += [t for t in page.evaluate(WIDGET_TEXT_JS) if t[1] < READABLE
                              and t not in small_widget_text]
        for img in page.evaluate(SHOWN_FIGURES_JS):
            if img["src"] in seen:
                continue
            drawn = _smallest_text(_png_of(img["src"], base), img["alt"])
            full = img["natural"] / DENSITY  # the figure's own width, CSS px
            shown = drawn * img["shown"] / full
            tapped = None
            if shown < READABLE:
                page.locator(f'[data-probe="{img["probe"]}"]').click()
                page.wait_for_timeout(150)
                width = page.evaluate(ZOOMED_JS)
                tapped = None if width is None else drawn * width / full
                page.keyboard.press("Escape")
                page.wait_for_timeout(50)
                if page.evaluate(ZOOMED_JS) is not None:
                    not_closed.append(img["alt"])
            seen[img["src"]] = (img["alt"], drawn, shown, tapped)
    found: dict[str, tuple] = {"fits": (rendered, bad, page.evaluate("document.documentElement.scrollWidth"))}
    if readable:
        found["readable"] = (viewport, seen, small_widget_text, not_closed)
    return found


@pytest.mark.parametrize("rel", READING)
def test_every_figure_and_widget_is_readable_on_a_phone(browser, rel):
    """At 390 px each figure's smallest text, scaled by the width the page shows it at, is READABLE px or
    more, or a tap opens the figure at its full size, where it is; every widget text is READABLE px or more;
    the viewport lets the reader pinch-zoom."""
    viewport, seen, small_widget_text, not_closed = _measure(browser, rel, PHONE, False, "walk")["readable"]
    assert "user-scalable=no" not in viewport.replace(" ", "") and "maximum-scale=1" not in viewport.replace(" ", ""), \
        f"{rel}: the viewport blocks pinch zoom ({viewport!r})"
    assert not_closed == [], f"{rel}: the full-size figure does not close on Escape: {not_closed}"
    unreadable = [(alt, round(drawn, 1), round(shown, 1), tapped and round(tapped, 1))
                  for alt, drawn, shown, tapped in seen.values()
                  if shown < READABLE and (tapped is None or tapped < READABLE)]
    assert unreadable == [], (f"{rel} at {PHONE} px: figures whose smallest text is under {READABLE} px and that do "
                              f"not open readable on a tap (alt, drawn px, shown px, on tap px): {unreadable}")
    assert small_widget_text == [], f"{rel} at {PHONE} px: widget text under {READABLE} px: {small_widget_text[:6]}"


# Each display formula whose scroll-shadow covers differ from what lies behind it: the colour of its
# covers (--scroll-tint over the opaque --scroll-cover) against the colour its ancestors' backgrounds
# composite to.
COVER_MISMATCH_JS = """() => {
  const rgba = c => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const v = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const probe = document.createElement('div'); document.body.appendChild(probe);
  const resolve = c => { probe.style.backgroundColor = ''; probe.style.backgroundColor = c;
    return rgba(getComputedStyle(probe).backgroundColor); };
  const behind = el => { const layers = [];
    for (let a = el.parentElement; a; a = a.parentElement) { const c = rgba(getComputedStyle(a).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let out = [255, 255, 255];
    for (const c of layers.reverse()) out = out.map((x, i) => c[i] * c[3] + x * (1 - c[3]));
    return out; };
  const bad = [];
  for (const m of document.querySelectorAll('article mjx-container[display="true"]')) {
    if (!m.offsetParent) continue;
    const base = resolve(getComputedStyle(m).getPropertyValue('--scroll-cover').trim());
    const tint = resolve(getComputedStyle(m).getPropertyValue('--scroll-tint').trim() || 'transparent') || [0, 0, 0, 0];
    const cover = base && [...base.slice(0, 3).map((x, i) => tint[i] * tint[3] + x * (1 - tint[3])), base[3]];
    const back = behind(m);
    if (!cover || cover[3] < 1 || cover.slice(0, 3).some((x, i) => Math.abs(x - back[i]) > 2))
      bad.push([(m.querySelector('mjx-assistive-mml') || m).textContent.slice(0, 40), String(cover),
                back.map(Math.round).join(',')]);
  }
  probe.remove();
  return bad;
}"""

# How many display formulas stand inside a theorem box (a proof or an admonition).
BOXED_JS = """() => document.querySelectorAll('article div.proof mjx-container[display="true"], '
  + 'article .admonition mjx-container[display="true"]').length"""

THEOREM_PAGES = ["book/04-scaling.html", "book/05-saturation.html", "book/06-position.html"]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [PHONE, 1280])
@pytest.mark.parametrize("rel", THEOREM_PAGES)
def test_scroll_shadow_covers_match_the_box_behind_each_formula(browser, rel, width, dark):
    """The covers that hide a display's scroll shadow at an edge it has reached are the colour of what is
    behind the display (a theorem box's tint included): no white blocks beside an equation."""
    boxed = _measure(browser, rel, width, dark, "boxed")
    bad = _measure(browser, rel, width, dark, "covers")
    assert boxed, f"{rel}: no display formula inside a theorem box"
    assert bad == [], (f"{rel} at {width} px: scroll-shadow covers unlike the box behind "
                       f"(formula, cover, behind): {bad[:5]}")


# Each widget caption shown now: its font size, line height and colour, and the colour behind it.
CAPTIONS_JS = """() => Array.from(document.querySelectorAll('.widget-subarea figcaption'))
  .filter(c => c.offsetParent !== null && c.textContent.trim())
  .map(c => { const st = getComputedStyle(c); let bg = 'rgb(255, 255, 255)';
    for (let a = c; a; a = a.parentElement) { const b = getComputedStyle(a).backgroundColor;
      if (b && !b.startsWith('rgba(0, 0, 0, 0)') && b !== 'transparent') { bg = b; break; } }
    return [c.textContent.trim().slice(0, 40), parseFloat(st.fontSize), parseFloat(st.lineHeight), st.color, bg]; })"""


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", WIDGET_PAGES)
def test_widget_captions_are_readable(browser, rel, dark):
    """Widget captions read like the page's captions: at least 13 px, lines at most 1.6 times the text size
    apart (not the widget library's 28 px), dark on their panel (WCAG AA contrast, 4.5:1)."""
    from matplotlib.colors import to_rgb

    from selfattn.plots import contrast_ratio

    def colour(css: str) -> tuple[float, ...]:
        values = [float(v) for v in re.findall(r"[\d.]+", css)[:3]]
        return to_rgb(tuple(v / 255 for v in values))

    captions = _measure(browser, rel, PHONE if dark else 1280, dark, "captions")
    poor = [(text, size, height, round(contrast_ratio(colour(fg), colour(bg)), 1))
            for text, size, height, fg, bg in captions
            if size < 13 or height > 1.6 * size or contrast_ratio(colour(fg), colour(bg)) < 4.5]
    assert poor == [], f"{rel}: widget captions hard to read (text, px, line px, contrast): {poor[:5]}"


# -- cues a phone reader needs: figures that enlarge, tables that scroll; one search box ----------------

# Each figure the page shows smaller than it was drawn (fewer CSS px than its natural width / DENSITY) and
# whether a cue under it says it enlarges: [alt, what is wrong] for each without one, and how many there are.
ZOOM_CUES_JS = """(density) => {
  const bad = []; let shrunk = 0;
  for (const img of document.querySelectorAll('article img')) {
    const r = img.getBoundingClientRect();
    if (!img.offsetParent || r.width === 0 || img.naturalWidth / density <= r.width + 1) continue;
    shrunk += 1;
    const alt = (img.alt || img.src).slice(0, 50), cue = img.nextElementSibling;
    if (!cue || !cue.classList.contains('figure-zoom-cue')) { bad.push([alt, 'no cue']); continue; }
    const c = cue.getBoundingClientRect();
    if (!cue.offsetParent || c.width === 0 || c.left < 0 || c.right > innerWidth)
      bad.push([alt, 'cue not shown on the screen']);
    else if (!/enlarge/i.test(cue.innerText)) bad.push([alt, 'cue reads ' + JSON.stringify(cue.innerText)]);
    else if (c.top < r.bottom - 1 || c.top - r.bottom > 24) bad.push([alt, 'cue not just under the figure']);
  }
  return [bad, shrunk];
}"""
ZOOM_CUES_JS = f"() => ({ZOOM_CUES_JS})({DENSITY})"

# Each table of the article, as a phone shows it: [what is wrong, its first words] for a table cut off (wider
# than the screen with no box that scrolls), one that scrolls with no line saying so above it, or a cell that
# hides part of its text; and how many tables scroll.
TABLES_JS = """() => {
  const bad = []; let scrolling = 0;
  for (const table of document.querySelectorAll('article table')) {
    if (!table.offsetParent) continue;
    const words = table.innerText.replace(/\\s+/g, ' ').trim().slice(0, 40);
    let box = null;
    for (let a = table.parentElement; a && a.tagName !== 'ARTICLE'; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox === 'auto' || ox === 'scroll') { box = a; break; }
      const past = table.getBoundingClientRect().right > a.getBoundingClientRect().right + 1;
      if ((ox === 'hidden' || ox === 'clip') && past) bad.push(['cut off by its box', words]);
    }
    const right = table.getBoundingClientRect().right;
    if (!box && right > innerWidth + 0.5) bad.push(['wider than the screen, no scroll box', words]);
    if (box && box.scrollWidth > box.clientWidth + 1) {
      scrolling += 1;
      const cue = box.previousElementSibling;
      const shown = cue && cue.classList.contains('table-scroll-cue') && cue.offsetParent
        && cue.getBoundingClientRect().width > 0 && /scroll sideways/i.test(cue.innerText);
      if (!shown) bad.push(['scrolls sideways with no cue above it', words]);
    }
    for (const cell of table.querySelectorAll('td, th'))
      if (cell.scrollWidth > cell.clientWidth + 1 && getComputedStyle(cell).overflowX !== 'visible')
        bad.push(['a cell hides part of its text', cell.innerText.slice(0, 30)]);
  }
  return [bad, scrolling];
}"""

# The caption of every table that scrolls sideways in its box, where it runs past the box's edges (a caption
# is as wide as its table: the reader saw its first words and then the box's edge, mid-sentence).
TABLE_CAPTIONS_JS = """() => {
  const cut = [];
  for (const caption of document.querySelectorAll('article table > caption')) {
    if (!caption.offsetParent) continue;
    let box = caption.parentElement;
    while (box && box.tagName !== 'ARTICLE' && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX))
      box = box.parentElement;
    if (!box || box.tagName === 'ARTICLE') continue;
    const c = caption.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (c.left < b.left - 1 || c.right > b.right + 1)
      cut.push([caption.innerText.slice(0, 50), Math.round(c.width), Math.round(b.width)]);
  }
  return cut;
}"""

# Every range of numbers in the text ("32–43", "1.54–1.58") that a line break splits after its dash: the
# reader met "32–" at the end of one line and "43%" at the start of the next.
SPLIT_RANGES_JS = """() => {
  const split = [];
  const walker = document.createTreeWalker(document.querySelector('article') || document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('mjx-container, pre, code, script, style') || !node.parentElement.offsetParent)
      continue;
    for (const m of node.data.matchAll(/[0-9][0-9.,]*[\u2060]?[\u2013][\u2060]?[0-9][0-9.,]*/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) split.push(m[0]);
    }
  }
  return split;
}"""

# The search fields and buttons a reader sees outside the page's text (the search page's own form, above its
# results, aside).
SEARCH_BOXES_JS = """() => Array.from(new Set(document.querySelectorAll(
    'input[type="search"], .search-button-field, button.search-button__button, form.bd-search')))
  .filter(e => !e.closest('article, .bd-search-container')
    && !e.parentElement.closest('.search-button-field, form.bd-search'))
  .filter(e => { const r = e.getBoundingClientRect(); return e.offsetParent && r.width > 0 && r.height > 0
    && r.right > 0 && r.left < innerWidth && r.bottom > 0; })
  .map(e => e.tagName.toLowerCase() + '.' + String(e.className).split(' ').slice(0, 3).join('.'))"""

#: A page with a figure a phone shows shrunk (chapter 3's data-flow diagram), where the panel is opened.
PANEL_PAGE = "book/03-scores-softmax.html"

# The full-size panel as shown: its background, its hint's colour and the page's own background, and the
# background behind the figure in it.
PANEL_JS = """() => { const p = document.querySelector('.figure-zoom'); if (!p) return null;
  const hint = p.querySelector('.figure-zoom-hint'), img = p.querySelector('img');
  return {panel: getComputedStyle(p).backgroundColor, hint: getComputedStyle(hint).color,
          page: getComputedStyle(document.body).backgroundColor, figure: getComputedStyle(img).backgroundColor,
          filter: getComputedStyle(img).filter, width: innerWidth}; }"""


def _zoom_panel(page) -> dict | None:
    """Tap the first "enlarge" cue of ``page``, read the panel that opens (:data:`PANEL_JS`) and the colour of a
    few of its pixels at its top right corner (its padding) in a screenshot, then close it with Escape; None
    when the page shows no cue."""
    import io

    from PIL import Image

    if not page.locator(".figure-zoom-cue").count():
        return None
    page.locator(".figure-zoom-cue").first.click()
    page.wait_for_selector(".figure-zoom img", timeout=5000)
    page.wait_for_timeout(150)
    found = page.evaluate(PANEL_JS)
    shot = Image.open(io.BytesIO(page.screenshot(clip={"x": found["width"] - 6, "y": 1, "width": 4, "height": 4})))
    found["pixel"] = shot.convert("RGB").getpixel((2, 2))
    page.keyboard.press("Escape")
    return found


def _rgb(css: str) -> tuple[float, float, float]:
    values = [float(v) for v in re.findall(r"[\d.]+", css)[:3]]
    return values[0] / 255, values[1] / 255, values[2] / 255


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", PAGES)
def test_shrunk_figures_say_they_enlarge_on_a_tap(browser, rel, dark):
    """At 390 px every figure the page shows smaller than it was drawn has a cue just under it, on the screen,
    saying a tap enlarges it (nothing else tells a phone reader)."""
    bad, shrunk = _measure(browser, rel, PHONE, dark, "zoom_cues")
    assert bad == [], f"{rel} at {PHONE} px: shrunk figures without a visible 'enlarge' cue: {bad[:6]}"
    if rel == PANEL_PAGE:
        assert shrunk >= 1, f"{rel}: the data-flow diagram is no longer shrunk at {PHONE} px: choose another page"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_full_size_panel_follows_the_theme(browser, dark):
    """The panel a tap opens is the page's own background, light or dark (not a white sheet over a dark
    page), as a screenshot shows it; its hint is legible on it (WCAG AA, 4.5:1); the figure keeps its white
    backing and is not dimmed (as on the page)."""
    from selfattn.plots import contrast_ratio

    found = _measure(browser, PANEL_PAGE, PHONE, dark, "panel")
    assert found is not None, f"{PANEL_PAGE}: no 'enlarge' cue to tap at {PHONE} px"
    panel, page_bg = _rgb(found["panel"]), _rgb(found["page"])
    assert max(abs(a - b) for a, b in zip(panel, page_bg, strict=True)) < 0.02, \
        f"the panel ({found['panel']}) is not the page's background ({found['page']})"
    pixel = tuple(v / 255 for v in found["pixel"])
    assert max(abs(a - b) for a, b in zip(pixel, page_bg, strict=True)) < 0.03, \
        f"the panel shows {found['pixel']} on the screen, the page is {found['page']}"
    assert (sum(pixel) / 3 < 0.25) == dark, f"a {'dark' if dark else 'light'} page opens a panel of {found['pixel']}"
    assert contrast_ratio(_rgb(found["hint"]), panel) >= 4.5, f"hint {found['hint']} on {found['panel']}"
    assert _rgb(found["figure"]) == (1.0, 1.0, 1.0), f"the figure in the panel is on {found['figure']}, not white"
    assert found["filter"] == "none", f"the figure in the panel is dimmed ({found['filter']}), unlike on the page"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", PAGES)
def test_wide_tables_fit_or_say_they_scroll(browser, rel, dark):
    """At 390 px every table fits its column or scrolls sideways in its own box with a line above it saying
    so (a phone hides scroll bars, and the cells cover the box's edge shadows); no table or cell is cut."""
    bad, scrolling = _measure(browser, rel, PHONE, dark, "tables")
    assert bad == [], f"{rel} at {PHONE} px: tables cut or scrolling without a cue: {bad[:6]}"
    if rel == "reference/notation.html":
        assert scrolling >= 1, "the notation table fits a phone now: the cue is untested, choose a wider table"


@pytest.mark.parametrize("rel", PAGES)
def test_captions_of_scrolling_tables_stay_in_view(browser, rel):
    """At 390 px a table that scrolls sideways keeps its caption within its box, wrapped to the box's
    width (it was as wide as the table and ran past the box's edge mid-sentence)."""
    cut = _measure(browser, rel, PHONE, False, "table_captions")
    assert cut == [], f"{rel} at {PHONE} px: captions wider than their table's box (text, width, box): {cut[:4]}"


@pytest.mark.parametrize("width", [PHONE, 1280])
@pytest.mark.parametrize("rel", READING)
def test_number_ranges_never_break_across_lines(browser, rel, width):
    """A range such as "32–43" or "1.54–1.58" stays on one line: split after its dash, it read as a
    number followed by a dash and another number on the next line."""
    split = _measure(browser, rel, width, False, "split_ranges")
    assert split == [], f"{rel} at {width} px: number ranges split across lines: {split[:6]}"


@pytest.mark.parametrize("width", [PHONE, 1280])
@pytest.mark.parametrize("rel", PAGES)
def test_one_search_box(browser, rel, width):
    """One search field or button on the screen, at 390 px and at 1280 px (the theme also put one in a header
    bar of its own above the sidebar's, on wide screens)."""
    shown = _measure(browser, rel, width, False, "search_boxes")
    assert len(shown) == 1, f"{rel} at {width} px: {len(shown)} search boxes shown: {shown}"


def test_one_search_box_with_the_sidebar_hidden(browser):
    """At 1280 px a reader who hides the sidebar (its search field with it) still sees one search box: the
    header's button."""
    page = _open(browser, PANEL_PAGE, width=1280)
    try:
        page.locator(".primary-toggle").first.click()
        page.wait_for_function("() => document.querySelector('#pst-primary-sidebar.pst-sidebar-hidden')",
                               timeout=5000)
        page.wait_for_timeout(400)  # the sidebar slides away
        shown = page.evaluate(SEARCH_BOXES_JS)
    finally:
        page.close()
    assert len(shown) == 1, f"{PANEL_PAGE} at 1280 px, sidebar hidden: {len(shown)} search boxes shown: {shown}"

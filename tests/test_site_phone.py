"""The built site on a phone (headless Chromium, 390 px wide, light and dark) and its figures at any zoom.

What a reader of a 390 px screen meets: every part of every widget (sliders with their readouts, toggle
buttons, captions, figures, the cost calculator's text and bar) lies inside the screen and cuts no text;
every display formula fits its column without a sideways scroll; the page itself never scrolls sideways.
Figures carry at least two image pixels per CSS pixel (sharp when zoomed, on high-density screens and
in print), and the data-flow diagram's smallest label stays legible on the phone and on paper.
"""

from __future__ import annotations

import re

import pytest
from browser_support import SITE, PageReport, attach_recorders, served_browser

from selfattn.plots import DENSITY, dataflow_diagram

pytestmark = pytest.mark.browser

PHONE = 390
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
def browser():
    with served_browser() as pair:
        yield pair


def _open(browser, rel: str, width: int = PHONE, dark: bool = False, media: str = "screen"):
    base, b = browser
    page = b.new_page(viewport={"width": width, "height": 844}, color_scheme="dark" if dark else "light",
                      device_scale_factor=1)
    attach_recorders(page, base, PageReport(rel))
    if dark:
        page.add_init_script("localStorage.setItem('theme', 'dark'); localStorage.setItem('mode', 'dark');")
    page.goto(base + rel, wait_until="networkidle")
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.emulate_media(media=media)
    page.wait_for_timeout(300)
    return page


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
    page = _open(browser, rel, dark=dark)
    try:
        assert page.locator(".widget-subarea .jupyter-widgets").count(), f"{rel}: no widget rendered"
        bad = []
        for _ in _each_frame(page):
            bad += [b for b in page.evaluate(WIDGET_BOXES_JS, PHONE) if b not in bad]
        sideways = page.evaluate("document.documentElement.scrollWidth")
    finally:
        page.close()
    assert bad == [], f"{rel} at {PHONE} px: widget parts off screen or cut: {bad[:8]}"
    assert sideways <= PHONE, f"{rel} at {PHONE} px: the page scrolls sideways ({sideways} px wide)"


@pytest.mark.parametrize("rel", MATH_PAGES)
def test_display_math_fits_a_phone_without_scrolling(browser, rel):
    page = _open(browser, rel)
    try:
        wide = page.evaluate(WIDE_MATH_JS)
    finally:
        page.close()
    assert wide == [], f"{rel} at {PHONE} px: display formulas that need a sideways scroll: {wide}"


@pytest.mark.parametrize("rel", READING)
def test_figures_are_sharp_when_zoomed(browser, rel):
    """At 1280 px every shown figure has at least DENSITY image pixels per CSS pixel it covers."""
    page = _open(browser, rel, width=1280)
    try:
        images = page.evaluate(IMAGES_JS)
    finally:
        page.close()
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

"""Widgets on the built site, as a screen reader and a reader in dark mode meet them (headless Chromium).

Every slider and toggle has an accessible name; a slider announces the value it shows ("head width d_k
64", not the index 2) and keeps announcing it as it moves; a toggle button exposes whether it is pressed.
Widget captions and labels reach WCAG AA contrast (4.5:1) against what is behind them, light and dark.
"""

from __future__ import annotations

import re

import pytest
from browser_support import SITE, PageLoads, axe_violations, measured, opened

pytestmark = pytest.mark.browser

CHAPTERS = sorted(p.relative_to(SITE).as_posix() for p in (SITE / "book").glob("[0-9]*.html"))

CONTRAST_JS = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
      return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const background = el => { for (let a = el; a; a = a.parentElement) {
      const c = rgb(getComputedStyle(a).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c; } return [255, 255, 255]; };
  const out = [];
  const sel = '.widget-subarea figcaption, .widget-subarea .widget-label, .widget-subarea .widget-readout, ' +
              '.widget-subarea .widget-html-content p, figure figcaption';
  for (const el of document.querySelectorAll(sel)) {
    if (!el.offsetParent || !el.textContent.trim()) continue;
    const fg = rgb(getComputedStyle(el).color), bg = background(el);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    out.push([el.textContent.trim().slice(0, 50), (a + 0.05) / (b + 0.05)]);
  }
  return out;
}"""


@pytest.fixture(scope="module")
def browser(site_browser):
    return site_browser  # one Chromium and one cache of the site per test process (tests/conftest.py)


def _label(box) -> str:
    return " ".join(box.locator(":scope > .widget-label").first.inner_text().split()).rstrip(":")


#: how long a control may take to announce what it shows after a move (a few frames, on a loaded machine)
SETTLE_MS = 3000


def _slider_said(page, box, name: str, rel: str) -> list[str]:
    """What a screen reader misses in the slider ``box`` named ``name``: a name that is a number or that
    its role lacks, a value announced other than the one shown (before and after one step right)."""
    problems = []
    if re.fullmatch(r"[\d.]+", name):
        problems.append(f"a slider on {rel} is named by a number: {name!r}")
    if page.get_by_role("slider", name=name, exact=True).count() < 1:
        problems.append(f"slider {name!r} has no accessible name")
    handle = box.locator(".noUi-handle").first
    shown = box.locator(".widget-readout").first.inner_text().strip()
    said = handle.get_attribute("aria-valuetext")
    if said != f"{name} {shown}":
        problems.append(f"slider {name!r} announces {said!r}, shows {shown!r}")
    handle.focus()
    page.keyboard.press("ArrowRight")
    readout = box.locator(".widget-readout").first
    if not _settles(page, "([h, r, n]) => h.getAttribute('aria-valuetext') === n + ' ' + r.textContent.trim()",
                    [handle.element_handle(), readout.element_handle(), name]):
        moved = readout.inner_text().strip()
        said = handle.get_attribute("aria-valuetext")
        problems.append(f"slider {name!r} announces a stale value {said!r}, shows {moved!r}")
    return problems


def _settles(page, condition: str, arg) -> bool:
    """Whether ``condition`` (a function of ``arg`` run in the page) holds within :data:`SETTLE_MS` of a
    reader's move: the page keeps what it announces in step with what it shows once its frames ran,
    however slowly (a fixed wait read a half-updated page on a loaded machine)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition, arg=arg, timeout=SETTLE_MS)
        return True
    except PlaywrightTimeout:
        return False



def _toggles_said(page, box, name: str, rel: str) -> list[str]:
    """What a screen reader misses in the toggle group ``box`` named ``name``: a button that hides its
    name or whether it is pressed (before and after its last button is pressed)."""
    problems = []
    buttons = box.locator("button")
    for j in range(buttons.count()):
        text = " ".join(buttons.nth(j).inner_text().split())
        pressed = "mod-active" in (buttons.nth(j).get_attribute("class") or "")
        if page.get_by_role("button", name=f"{name}: {text}", exact=True, pressed=pressed).count() < 1:
            problems.append(f"{rel}: toggle {name}: {text} lacks its name or pressed={pressed}")
    last = buttons.nth(buttons.count() - 1)
    last.click()
    if not _settles(page, "b => b.getAttribute('aria-pressed') === 'true'", last.element_handle()):
        problems.append(f"{rel}: toggle {name}: its last button, pressed, is not aria-pressed")
    return problems


def _controls(page, rel: str) -> tuple[int, list[str]]:
    """How many sliders and toggle groups ``rel`` shows, and what a screen reader would miss in them, one
    line each (:func:`_slider_said`, :func:`_toggles_said`); a control without a description first. Moves
    each slider one step and presses each group's last button."""
    problems: list[str] = []
    sliders, groups = page.locator(".widget-slider"), page.locator(".widget-toggle-buttons")
    for kind, boxes, said in (("slider", sliders, _slider_said), ("toggle group", groups, _toggles_said)):
        for i in range(boxes.count()):
            box = boxes.nth(i)
            name = _label(box)
            if not name:
                problems.append(f"{kind} {i} on {rel} has no description")
                continue
            problems += said(page, box, name, rel)
    return sliders.count() + groups.count(), problems


@pytest.mark.parametrize("rel", CHAPTERS)
def test_every_control_has_an_accessible_name_and_value(browser, rel):
    count, problems = _look(browser, rel, False, "controls")
    assert count, f"{rel}: no slider or toggle group shown"
    assert problems == [], f"{rel}: {problems}"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", CHAPTERS)
def test_captions_and_labels_are_legible(browser, rel, dark):
    # Figure labels are checked in the PNG (tests/test_site_figures.py); that holds only if the
    # page shows the PNG as drawn.
    theme, contrast, filtered = (_look(browser, rel, dark, name) for name in ("theme", "contrast", "filtered"))
    assert theme == ("dark" if dark else "light"), theme
    assert filtered == [], f"{rel} ({theme}): figures drawn through a CSS filter: {filtered}"
    assert contrast, f"{rel}: no captions found"
    low = [(t, round(c, 2)) for t, c in contrast if c < 4.5]
    assert low == [], f"{rel} ({theme}): text below 4.5:1 contrast: {low}"


# -- axe-core: every page of the site, light and dark (the class report and the feedback pages: -------
# -- tests/test_report.py) -----------------------------------------------------------------------------

PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if "_static" not in p.parts)


FILTERED_JS = """() => Array.from(document.querySelectorAll('article img'))
    .filter(i => getComputedStyle(i).filter !== 'none').map(i => i.alt.slice(0, 40))"""
#: What one load of a page of the site in one theme showed, by (page, dark): the tests that read a page
#: share the load.
_loads = PageLoads()


def _look(browser, rel: str, dark: bool, name: str):
    """Part ``name`` of one load of ``rel`` in the light or dark theme: the ``theme`` it shows, the
    ``contrast`` of its captions and labels, its figures ``filtered`` through CSS, axe-core's serious
    violations (``axe``) and, for a chapter in the light theme, what its ``controls`` say (:func:`_controls`,
    last: it moves them). Nothing outside the site is loaded; a chapter's widgets are drawn, its math
    typeset, before anything is measured."""
    def load() -> dict[str, object]:
        base, b = browser
        widgets = (lambda page: page.wait_for_selector(".widget-subarea .jupyter-widgets", timeout=15000)
                   ) if rel in CHAPTERS else None
        with opened(base, b, rel, dark, widgets) as page:
            parts = {"theme": lambda page: page.evaluate("document.documentElement.dataset.theme || ''"),
                     "contrast": lambda page: page.evaluate(CONTRAST_JS),
                     "filtered": lambda page: page.evaluate(FILTERED_JS),
                     "axe": axe_violations}  # it adds axe-core's script to the page
            if rel in CHAPTERS and not dark:
                parts["controls"] = lambda page: _controls(page, rel)
            return measured(page, parts)

    return _loads.part((rel, dark), load, name)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", PAGES)
def test_axe_finds_no_serious_violation_on_the_site(browser, rel, dark):
    theme, bad = _look(browser, rel, dark, "theme"), _look(browser, rel, dark, "axe")
    assert theme == ("dark" if dark else "light"), f"{rel}: theme {theme!r}"
    assert bad == [], f"{rel} ({theme}): axe-core: {bad}"

"""Widgets on the built site, as a screen reader and a reader in dark mode meet them (headless Chromium).

Every slider and toggle has an accessible name; a slider announces the value it shows ("head width d_k
64", not the index 2) and keeps announcing it as it moves; a toggle button exposes whether it is pressed.
Widget captions and labels reach WCAG AA contrast (4.5:1) against what is behind them, light and dark.
"""

from __future__ import annotations

import re

import pytest
from browser_support import SITE, served_browser

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
def browser():
    with served_browser() as pair:
        yield pair


def _open(browser, rel: str, dark: bool = False):
    base, b = browser
    page = b.new_page(color_scheme="dark" if dark else "light")
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
    if dark:
        page.add_init_script("localStorage.setItem('theme', 'dark'); localStorage.setItem('mode', 'dark');")
    page.goto(base + rel, wait_until="networkidle")
    page.wait_for_selector(".widget-subarea .jupyter-widgets", timeout=15000)
    page.wait_for_timeout(300)
    return page


def _label(box) -> str:
    return " ".join(box.locator(":scope > .widget-label").first.inner_text().split()).rstrip(":")


@pytest.mark.parametrize("rel", CHAPTERS)
def test_every_control_has_an_accessible_name_and_value(browser, rel):
    page = _open(browser, rel)
    try:
        sliders = page.locator(".widget-slider")
        for i in range(sliders.count()):
            box = sliders.nth(i)
            name = _label(box)
            assert name, f"slider {i} on {rel} has no description"
            named = page.get_by_role("slider", name=name, exact=True)
            assert named.count() >= 1, f"slider {name!r} has no accessible name"
            handle = box.locator(".noUi-handle").first
            shown = box.locator(".widget-readout").first.inner_text().strip()
            said = handle.get_attribute("aria-valuetext")
            assert said == f"{name} {shown}", f"slider {name!r} announces {said!r}, shows {shown!r}"
            handle.focus()
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(150)
            moved = box.locator(".widget-readout").first.inner_text().strip()
            said = handle.get_attribute("aria-valuetext")
            assert said == f"{name} {moved}", f"slider {name!r} announces a stale value {said!r}"
            assert not re.fullmatch(r"[\d.]+", name), name
        groups = page.locator(".widget-toggle-buttons")
        for i in range(groups.count()):
            box = groups.nth(i)
            name = _label(box)
            assert name, f"toggle group {i} on {rel} has no description"
            buttons = box.locator("button")
            for j in range(buttons.count()):
                text = " ".join(buttons.nth(j).inner_text().split())
                pressed = "mod-active" in (buttons.nth(j).get_attribute("class") or "")
                found = page.get_by_role("button", name=f"{name}: {text}", exact=True, pressed=pressed)
                assert found.count() >= 1, f"{rel}: toggle {name}: {text} lacks its name or pressed={pressed}"
            buttons.nth(buttons.count() - 1).click()
            page.wait_for_timeout(150)
            assert buttons.nth(buttons.count() - 1).get_attribute("aria-pressed") == "true"
    finally:
        page.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("rel", CHAPTERS)
def test_captions_and_labels_are_legible(browser, rel, dark):
    page = _open(browser, rel, dark=dark)
    try:
        theme = page.evaluate("document.documentElement.dataset.theme")
        measured = page.evaluate(CONTRAST_JS)
        # Figure labels are checked in the PNG (tests/test_site_figures.py); that holds only if the
        # page shows the PNG as drawn.
        filtered = page.evaluate("""() => Array.from(document.querySelectorAll('article img'))
            .filter(i => getComputedStyle(i).filter !== 'none').map(i => i.alt.slice(0, 40))""")
    finally:
        page.close()
    assert theme == ("dark" if dark else "light"), theme
    assert filtered == [], f"{rel} ({theme}): figures drawn through a CSS filter: {filtered}"
    assert measured, f"{rel}: no captions found"
    low = [(t, round(c, 2)) for t, c in measured if c < 4.5]
    assert low == [], f"{rel} ({theme}): text below 4.5:1 contrast: {low}"

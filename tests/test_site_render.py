"""What a reader sees on the built site: math that reads right and fits, figures whose words match their
numbers, no build plumbing, every chapter ending with its exercises.

Needs `make book` first.  Browser tests open pages in headless Chromium (network cut off); the others
read the built HTML, including the widget state saved in it (every frame a widget can show).
"""

from __future__ import annotations

import html as htmllib
import json
import re
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
from browser_support import SITE, PageLoads, PageReport, attach_recorders, measured, open_settled

PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if "_static" not in p.parts)
CHAPTERS = [p for p in PAGES if re.match(r"book/\d\d-", p)]
READING = ["book/intro.html", *CHAPTERS]

# Visible text of the page body with the typeset math, code and scripts taken out: what is left is
# prose, tables, captions and widget captions, where TeX source must never show.
PROSE_JS = """() => {
  const root = (document.querySelector('article') || document.body).cloneNode(true);
  root.querySelectorAll('mjx-container, pre, code, script, style, .cell_input, .headerlink, mjx-assistive-mml')
      .forEach(e => e.remove());
  return root.textContent;
}"""

# Every element that overflows the reading column without a scroll box of its own, and every scroll
# box with more content than it shows but no edge shadow to say so.
OVERFLOW_JS = """() => {
  const article = document.querySelector('article') || document.body;
  const col = article.getBoundingClientRect();
  const scrolls = el => { for (let a = el.parentElement; a && a !== article; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll') return a; } return null; };
  const bad = [];
  for (const m of article.querySelectorAll('mjx-container')) {
    const display = m.getAttribute('display') === 'true';
    const own = getComputedStyle(m).overflowX;
    const box = (own === 'auto' || own === 'scroll') ? m : scrolls(m);
    const r = m.getBoundingClientRect();
    if (box) {   // a scroll box: it must itself fit the column
      const b = box.getBoundingClientRect();
      if (b.right > col.right + 1 || b.left < col.left - 1)
        bad.push(['scroll box wider than column', m.textContent.slice(0, 60)]);
      // touch browsers hide scroll bars: content beyond the box must be signalled by an edge shadow
      const st = getComputedStyle(box);
      if (box.scrollWidth > box.clientWidth + 1
          && !(st.backgroundImage.includes('gradient') && st.backgroundAttachment.includes('local')))
        bad.push(['scrolls with no visible cue that there is more', m.textContent.slice(0, 60)]);
      continue;
    }
    const inner = m.firstElementChild ? m.firstElementChild.getBoundingClientRect() : r;
    const para = m.closest('p, li, td, th, dd, figcaption, .admonition') || article;
    const host = display ? col : para.getBoundingClientRect();
    const right = Math.max(r.right, inner.right), left = Math.min(r.left, inner.left);
    if (right > host.right + 1 || left < host.left - 1)
      bad.push([display ? 'display' : 'inline', m.querySelector('mjx-assistive-mml') ?
        m.querySelector('mjx-assistive-mml').textContent.slice(0, 60) : m.textContent.slice(0, 60)]);
  }
  return bad;
}"""


def _html(rel: str) -> str:
    return (SITE / rel).read_text(encoding="utf-8")


def _widget_html_values(rel: str) -> list[str]:
    """The HTML of every ``HTML`` widget saved in the page (each frame of each widget), unescaped."""
    out = []
    for blob in re.findall(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', _html(rel),
                           flags=re.S):
        for model in json.loads(blob)["state"].values():
            if model.get("model_name") == "HTMLModel":
                out.append(model["state"].get("value", ""))
    return out


def _caption_text(frame_html: str) -> str:
    m = re.search(r"<figcaption[^>]*>(.*?)</figcaption>", frame_html, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", m.group(1))) if m else ""


def _widget_frames(rel: str, pattern: str) -> list[re.Match]:
    """The match of ``pattern`` against the caption of each saved widget frame of the page it fits."""
    return [m for value in _widget_html_values(rel) if (m := re.match(pattern, _caption_text(value)))]


def _page_text(rel: str) -> str:
    text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", _html(rel), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", text))


@pytest.fixture(scope="module")
def browser(site_browser):
    return site_browser  # one Chromium and one cache of the site per test process (tests/conftest.py)


def _open(browser, rel: str, width: int = 1280):
    base, b = browser
    page = b.new_page(viewport={"width": width, "height": 900})
    attach_recorders(page, base, PageReport(rel))  # nothing leaves the site
    open_settled(page, base + rel)
    return page


WIDE_PRE_JS = """() => Array.from(document.querySelectorAll('article pre'))
    .filter(p => p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1)
    .map(p => p.textContent.split('\\n').reduce((a, b) => a.length > b.length ? a : b).slice(0, 90))"""

#: What one load of a page at one width measured, by (page, width): every test below reads its part.
_loads = PageLoads()


def _measure(browser, rel: str, width: int, name: str):
    """Part ``name`` of what these tests read from ``rel`` at ``width`` px, from a single page load."""
    def load() -> dict[str, object]:
        page = _open(browser, rel, width=width)
        try:
            return measured(page, {"merror": lambda page: page.locator("mjx-merror").count(),
                                   "prose": lambda page: page.evaluate(PROSE_JS), "title": lambda page: page.title(),
                                   "overflow": lambda page: page.evaluate(OVERFLOW_JS),
                                   "wide_pre": lambda page: page.evaluate(WIDE_PRE_JS)})
        finally:
            page.close()

    return _loads.part((rel, width), load, name)


# -- defect 1: broken math ---------------------------------------------------------------------------

RAW_TEX = re.compile(r"\$|\\\(|\\\)|\\\[|\\\]|\\[A-Za-z]{2,}")


@pytest.mark.browser
@pytest.mark.parametrize("rel", PAGES)
def test_no_raw_tex_or_math_error_on_the_page(browser, rel):
    errors, prose, title = (_measure(browser, rel, 1280, name) for name in ("merror", "prose", "title"))
    assert errors == 0, f"{rel}: MathJax reported {errors} TeX errors"
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(prose)})
    where = [prose[max(0, m.start() - 40):m.end() + 40].replace("\n", " ") for m in RAW_TEX.finditer(prose)][:3]
    assert raw == [], f"{rel}: TeX source shown as text {raw}, e.g. {where}"
    assert "\\" not in title and "$" not in title, f"{rel}: raw TeX in the page title {title!r}"


def test_no_raw_tex_in_titles_or_search_index():
    index = (SITE / "searchindex.js").read_text(encoding="utf-8")
    titles = json.loads(re.search(r'"titles":\s*(\[.*?\])', index).group(1))
    assert [t for t in titles if "\\" in t or "$" in t] == []
    for rel in PAGES:
        nav = re.findall(r'<a class="reference internal"[^>]*>(.*?)</a>', _html(rel), flags=re.S)
        assert [n for n in nav if "\\(" in n or "$" in n] == [], f"{rel}: TeX in navigation"


# -- defect 2: clipped math ---------------------------------------------------------------------------

@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("rel", READING)
def test_math_fits_its_column(browser, rel, width):
    bad = _measure(browser, rel, width, "overflow")
    assert bad == [], f"{rel} at {width} px: math cut off or running past its column: {bad}"


# -- defect 7 (part): code and output blocks that need a horizontal scroll bar ---------------------------

@pytest.mark.browser
@pytest.mark.parametrize("rel", CHAPTERS)
def test_code_and_output_fit_at_1280(browser, rel):
    wide = _measure(browser, rel, 1280, "wide_pre")
    assert wide == [], f"{rel}: blocks needing a horizontal scroll bar, longest lines: {wide}"


# -- defect 3: widget captions agree with the chapter ----------------------------------------------------

def test_receptive_field_widget_agrees_with_the_text():
    rel = "book/01-text-to-vectors.html"
    stated = re.search(r"that is\s+(\d+)\s+stacked layers", _page_text(rel))
    assert stated, "chapter 1 no longer states how many layers connect cat and hungry"
    needed = int(stated.group(1))
    frames = {}
    for value in _widget_html_values(rel):
        cap = _caption_text(value)
        m = re.match(r"L = (\d+) stacked 3-tap layers: .*? receptive field of (\d+) positions, (\d+) of them inside "
                     r"the sentence \(positions (\d+) to (\d+), lit\)", cap)
        if m:
            L, field, lit, first, last = map(int, m.groups())
            assert field == 2 * L + 1, f"frame L = {L} claims a field of {field} positions"
            assert lit == last - first + 1 <= field, f"frame L = {L}: lights {lit} of positions {first}..{last}"
            frames[L] = "connected" in cap
    assert frames, "no receptive-field frames found in the saved widget state"
    first = min((L for L, c in frames.items() if c), default=None)
    assert first == needed, f"the text says {needed} layers connect cat and hungry; the widget first does at {first}"
    assert all(frames[L] for L in frames if L >= needed)


def test_score_histogram_widget_shows_the_spreads_chapter_4_quotes():
    rel = "book/04-scaling.html"
    text = " ".join(_page_text(rel).split())
    stated = re.findall(r"measured spread (?:is )?([\d.]+\d)", text)
    assert len(stated) == 2, f"chapter 4 should quote the measured spread at d_k = 64 and 128: {stated}"
    frames = {int(m[1]): m[2] for m in _widget_frames(
        rel, r"Histograms at d_k = (\d+): unscaled scores spread with standard deviation ([\d.]+\d)")}
    assert {64, 128} <= set(frames), f"the widget lacks d_k = 64 or 128: {sorted(frames)}"
    assert [frames[64], frames[128]] == stated, f"the text says {stated}, the widget {frames[64]}, {frames[128]}"


def test_saturation_widget_shows_the_medians_chapter_5_quotes():
    rel = "book/05-saturation.html"
    text = " ".join(_page_text(rel).split())
    stated = re.search(r"Unscaled, the median largest weight is ([\d.]+\d) \(nearly one-hot\) against ([\d.]+\d)", text)
    assert stated, "chapter 5 no longer quotes the median largest weights"
    frames = {m[1]: float(m[2]) for m in _widget_frames(
        rel, r"(Scaled|Unscaled) scores at d_k = 256, 2,000 queries against 16 keys: median largest weight ([\d.]+)")}
    assert set(frames) == {"Scaled", "Unscaled"}, f"the widget's d_k = 256 frames are missing: {frames}"
    off, on = stated.groups()
    assert round(frames["Unscaled"], len(off.split(".")[1])) == float(off), (frames, off)
    assert round(frames["Scaled"], len(on.split(".")[1])) == float(on), (frames, on)


def test_masks_widget_says_what_it_shows():
    captions = [_caption_text(v) for v in _widget_html_values("book/07-masking.html")]
    by_mask = {c.split(":")[0]: c for c in captions if c}
    assert {"No mask", "Causal mask", "Padding mask"} <= set(by_mask), list(by_mask)
    assert "masked" not in by_mask["No mask"] and "exactly zero" not in by_mask["No mask"]
    assert "<pad>" in by_mask["Padding mask"], "the padding frame must show pad tokens, not real words, as pads"
    for name in ("Causal mask", "Padding mask"):
        assert "×" in by_mask[name] and "exactly zero" in by_mask[name]


# -- defect 4: duplicate figure, and a figure whose words do not match its numbers ---------------------------

def _thumbnail(png: bytes, n: int = 48) -> np.ndarray:
    """The image as an ``(n, n)`` grey thumbnail, standardised: two renderings of one figure (other DPI,
    other margins) give nearly the same thumbnail, different figures do not."""
    import io

    import matplotlib.image

    grey = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3].mean(-1)
    h, w = grey.shape
    small = grey[: h // n * n, : w // n * n].reshape(n, h // n, n, w // n).mean((1, 3))
    return (small - small.mean()) / (small.std() + 1e-9)


@pytest.mark.parametrize("rel", READING)
def test_no_image_appears_twice(rel):
    import base64

    page = SITE / rel
    body = re.sub(r'<script type="application/vnd.jupyter.widget-state\+json">.*?</script>', "", _html(rel),
                  flags=re.S)
    shown = []
    for src in re.findall(r'<img\b[^>]*\bsrc="([^"]+)"', body):
        if src.startswith("data:image/png;base64,"):
            shown.append((src[:40], base64.b64decode(src.split(",", 1)[1])))
        elif src.endswith(".png"):
            shown.append((src, (page.parent / unquote(src)).resolve().read_bytes()))
    thumbs = [(name, _thumbnail(png)) for name, png in shown]
    twins = [(a, b) for i, (a, ta) in enumerate(thumbs) for b, tb in thumbs[i + 1:] if (ta * tb).mean() > 0.95]
    assert twins == [], f"{rel} shows the same figure twice: {twins}"


def test_timing_figure_states_the_slope_its_numbers_give():
    rel = "book/08-cost.html"
    cell = r"<td[^>]*>(?:<p>)?\s*([\d,.]+)\s*(?:</p>)?</td>"
    rows = re.findall(rf"<tr[^>]*>\s*{cell}\s*{cell}\s*</tr>", _html(rel))
    assert len(rows) >= 5, f"chapter 8 shows no timing table: {rows}"
    T = np.array([float(t.replace(",", "")) for t, _ in rows])
    ms = np.array([float(v) for _, v in rows])
    slope = np.polyfit(np.log(T), np.log(ms), 1)[0]
    text = " ".join(_page_text(rel).split())
    stated = re.search(r"The fitted exponent is (between|outside) (\d+(?:\.\d+)?) (?:and|to) (\d+(?:\.\d+)?)", text)
    assert stated, "chapter 8 does not state what its fitted exponent is"
    lo, hi = float(stated.group(2)), float(stated.group(3))
    assert (stated.group(1) == "between") == (lo <= slope <= hi), f"its table gives {slope:.2f}; the page: {stated[0]}"


# -- defect 6: the saturation statistic ----------------------------------------------------------------

def test_saturation_reports_the_median_and_the_share_near_zero():
    from selfattn.experiments import saturation_trials

    on = saturation_trials(d_k=256, T=16, trials=2000, scaled=True, seed=0)
    off = saturation_trials(d_k=256, T=16, trials=2000, scaled=False, seed=0)
    median = np.median(on["score_grad_norm"] / off["score_grad_norm"])
    zero_off = 100 * np.mean(off["score_grad_norm"] < 1e-3)
    text = " ".join(_page_text("book/05-saturation.html").split())
    m = re.search(r"in the median (\d+) times smaller", text)
    assert m and int(m.group(1)) == round(median), f"median ratio {median:.0f} not stated: {m and m.group(0)}"
    z = re.search(r"(\d+)\s*% of the unscaled ones it is below 0.001", text)
    assert z and int(z.group(1)) == round(zero_off), f"share near zero {zero_off:.0f}% not stated"


# -- defect 7: build plumbing -------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", CHAPTERS)
def test_no_build_plumbing_shown(rel):
    doc = _html(rel)
    inputs = [htmllib.unescape(re.sub(r"<[^>]+>", "", c))
              for c in re.findall(r'<div class="cell_input.*?</pre>', doc, flags=re.S)]
    assert [c for c in inputs if "glue(" in c] == [], f"{rel} shows glue() calls"
    assert [c for c in inputs if re.fullmatch(r"\s*demos\.\w+\(\)\s*", c)] == [], f"{rel} shows bare demos calls"
    outputs = " ".join(re.findall(r'<div class="cell_output.*?</div>\s*</div>', doc, flags=re.S))
    sci = re.findall(r"\d\.\d{3,}e[+-]\d\d", htmllib.unescape(re.sub(r"<[^>]+>", "", outputs)))
    assert sci == [], f"{rel} prints arrays in scientific notation: {sci[:5]}"


@pytest.mark.parametrize("rel", READING)
def test_prose_uses_real_minus_signs(rel):
    code_or_math = r'<script.*?</script>|<pre.*?</pre>|<div class="math.*?</div>|\\\(.*?\\\)'
    body = re.sub(code_or_math, " ", _html(rel), flags=re.S)
    prose = htmllib.unescape(re.sub(r"<[^>]+>", " ", body))
    hyphens = re.findall(r"(?:^|[\s(,])-\d[\d.]*", prose)
    assert hyphens == [], f"{rel}: numbers with a hyphen for a minus sign: {hyphens}"


# -- defect 8: smaller text issues -----------------------------------------------------------------------------

def test_text_details():
    ch2 = " ".join(_page_text("book/02-queries-keys-values.html").split())
    assert "comparable norms" in ch2, "chapter 2's Cauchy–Schwarz argument must say it needs comparable norms"
    ch4 = " ".join(_page_text("book/04-scaling.html").split())
    m = re.search(r"prediction is .*? (\d+\.\d\d) and the measured spread is (\d+\.\d\d)", ch4)
    assert m and m.group(1) == f"{np.sqrt(128):.2f}", "chapter 4 must quote the predicted √128 beside the measurement"
    assert abs(float(m.group(2)) - np.sqrt(128)) < 0.05 * np.sqrt(128)
    for rel in CHAPTERS:  # one letter for the sequence length: T, never n
        tex = " ".join(re.findall(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", _html(rel), flags=re.S).__str__().split())
        assert not re.search(r"\^\{?n\b|\{n\s*\\times|\bn\s*\\times", tex), f"{rel} uses n for the sequence length"
    before_exercises = _html("book/07-masking.html").split('<section id="exercises">')[0].rstrip()
    assert re.search(r"</p>\s*</section>$", before_exercises), "chapter 7's text ends on a code output"


# -- the path to the exercises ---------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_ends_with_its_exercises(rel):
    doc = _html(rel)
    sections = re.findall(r'<section id="([^"]+)">\s*<h2>', doc)
    assert sections and sections[-1] == "exercises", f"{rel}: last section is {sections[-1:]}, not the exercises"
    part = doc.split('<section id="exercises">', 1)[1]
    links = re.findall(r'href="([^"]+\.ipynb)"', part)
    assert links, f"{rel}: the exercises section links no notebook"
    for link in links:
        assert (SITE / rel).parent.joinpath(unquote(link)).resolve().exists(), f"{rel}: {link} is missing"
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", part)).split())
    assert "jupyter lab" in text and "points" in text, f"{rel}: no points or no way to open the notebook"


def test_problem_20_is_stated_precisely():
    text = " ".join(_page_text("book/09-problem-20.html").split())
    for needed in ("Problem 20", "one-hot", "target map", "value table", "exactly once", "lookup_table_weights"):
        assert needed in text, f"Problem 20 statement lacks {needed!r}"


def test_cost_widget_agrees_with_the_chapter():
    rel = "book/08-cost.html"
    text = " ".join(re.sub(r"\\[()]", " ", _page_text(rel)).split())  # math delimiters out
    stated = {int(d): int(t.replace(",", ""))
              for d, t in re.findall(r"d = (\d+) (?:the crossover is|it is) at ([\d,]+)", text)}
    frames = {}
    for value in _widget_html_values(rel):
        plain = htmllib.unescape(re.sub(r"<[^>]+>", "", value))
        m = re.search(r"d = (\d+), T = [\d,]+.*?crossover at T = ([\d,]+)", plain)
        if m:
            frames.setdefault(int(m.group(1)), set()).add(int(m.group(2).replace(",", "")))
    assert set(stated) == {4096, 8192} and frames.get(4096), (stated, sorted(frames))
    for d, T in stated.items():
        assert frames.get(d, {T}) == {T}, f"the text puts the crossover at d = {d} at {T}, the widget at {frames[d]}"


def test_chapter_code_has_no_unused_imports_or_names(tmp_path):
    """The code of every chapter, visible or not, as one script: ruff finds nothing unused."""
    import subprocess
    import sys

    ruff = Path(sys.executable).parent / "ruff"
    for md in sorted((SITE.parent.parent / "book").glob("[0-9]*.md")):
        cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", md.read_text(encoding="utf-8"), flags=re.S)
        script = tmp_path / f"{md.stem.replace('-', '_')}.py"
        script.write_text("\n".join(re.sub(r"^:tags:.*\n", "", c) for c in cells), encoding="utf-8")
        found = subprocess.run([str(ruff), "check", "--no-cache", "--select", "F401,F841", "--output-format",
                                "concise", str(script)], capture_output=True, text=True).stdout
        assert "F401" not in found and "F841" not in found, f"{md.name}: {found}"


def test_temperature_widget_at_theta_1_shows_the_weights_chapter_3_computes():
    rel = "book/03-scores-softmax.html"
    text = " ".join(_page_text(rel).split())
    stated = re.search(r"\\approx\\\) \( ([\d.]+) , ([\d.]+) , ([\d.]+) , ([\d.]+) \)", text)
    assert stated, "chapter 3 no longer states the weights of 'hungry'"
    frames = {m[1]: [float(v) for v in re.findall(r"\d\.\d+", m[2])]
              for m in _widget_frames(rel, r"Weights of 'hungry' at temperature ([\d.]+): (.*)")}
    assert "1" in frames, f"the temperature widget has no frame at θ = 1: {sorted(frames)}"
    assert frames["1"] == [round(float(v), 2) for v in stated.groups()], (frames["1"], stated.groups())
    assert frames["1"] != frames[max(frames, key=float)], "the temperature does not change the weights"

"""The book as one PDF (`make pdf`, which `make test` runs): every page in order, math typeset, linked
from the site. Read back with pdftotext (Debian's poppler-utils)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from urllib.parse import unquote

import pytest
from browser_support import ROOT, SITE

sys.path.insert(0, str(ROOT / "scripts"))
from book_pdf import FRAMES_NAME, PDF_NAME, toc_pages

from selfattn import demos
from selfattn.widgets import print_frame_of

PDF = SITE / PDF_NAME


@pytest.fixture(scope="module")
def text() -> str:
    assert PDF.exists(), "run `make pdf` first (`make test` does)"
    assert shutil.which("pdftotext"), "pdftotext missing: scripts/install-system-deps.sh installs poppler-utils"
    return subprocess.run(["pdftotext", "-layout", str(PDF), "-"], check=True, capture_output=True,
                          text=True).stdout


def _titles() -> list[str]:
    out = []
    for rel in toc_pages():
        h1 = re.search(r"<h1>(.*?)</h1>", (SITE / rel).read_text(encoding="utf-8"), flags=re.S).group(1)
        h1 = re.sub(r'<span class="section-number">[^<]*</span>', "", h1)  # the title, without its number
        out.append(" ".join(re.sub(r"<[^>]+>|#", "", h1).split()))
    return out


def test_chapter_openers_are_numbered(text):
    """The first line of each chapter's first page on paper is its title with its number, as on its page."""
    pages = text.split("\f")
    for rel, title in zip(toc_pages(), _titles(), strict=True):
        if not re.match(r"book/\d\d-", rel):
            continue
        start = int(re.search(re.escape(title) + r"\s+(\d+)\s*$", pages[1], flags=re.M).group(1))
        opening = " ".join(pages[start - 1].split())  # a long title wraps onto a second line
        numbered = f"{int(rel[5:7])}. {title}"
        assert opening.startswith(numbered), f"chapter {title!r} opens on page {start} with {opening[:60]!r}"


def test_pdf_has_a_page_per_screenful_and_contents(text):
    pages = text.count("\f")
    assert pages >= 2 * len(toc_pages()), f"only {pages} pages for {len(toc_pages())} chapters"
    assert "Contents" in text


def test_every_chapter_starts_where_the_contents_say_in_order(text):
    pages = text.split("\f")
    starts = []
    for title in _titles():
        entry = re.search(re.escape(title) + r"\s+(\d+)\s*$", pages[1], flags=re.M)
        assert entry, f"chapter {title!r} missing from the contents"
        start = int(entry.group(1))
        assert title in " ".join(pages[start - 1].split()), f"page {start} does not begin chapter {title!r}"
        starts.append(start)
    assert starts == sorted(starts) and len(set(starts)) == len(starts), f"chapters out of order: {starts}"


def test_every_chapter_page_shows_its_chapter_and_its_page_number(text):
    """The footer of page n (after the title and contents) reads "<chapter> · n": the number the
    contents list and a PDF viewer shows, not the page within the chapter."""
    pages = text.split("\f")[:-1]
    titles = _titles()
    front = next(i for i, p in enumerate(pages) if titles[0] in " ".join(p.split()) and i > 1)
    for n, page in enumerate(pages[front:], start=front + 1):
        footer = [ln.strip() for ln in page.splitlines() if ln.strip()][-1]
        match = re.fullmatch(r"(.+?)\s+·\s+(\d+)", footer)
        assert match and int(match.group(2)) == n, f"page {n} ends with {footer!r}"
        name = " ".join(match.group(1).split())  # "1. From text to vectors": numbered as on the page
        assert any(name.endswith(t) for t in titles), f"page {n}: {name!r} is no chapter title"


def test_no_raw_tex_in_the_pdf(text):
    # the exercise blocks' Windows commands (.venv\Scripts\jupyter lab notebooks\attention\...) are not TeX
    prose = re.sub(r"(?:\.venv|notebooks)(?:\\[\w.\-]+)+", " ", text)
    raw = sorted(set(re.findall(r"\\[A-Za-z]{2,}|\$\$?[^$\s]|\\\(|\\\[", prose)))
    assert raw == [], f"TeX source in the PDF: {raw[:10]}"


def test_widgets_print_a_meaningful_frame(text):
    flat = " ".join(text.split())
    assert "Cat and hungry are both inside: connected" in flat, "the receptive field should print its connected frame"
    layers = demos.PRINT_FRAMES["receptive_field"]["layers L"]
    assert f"L = {layers} stacked 3-tap layers" in flat, f"the receptive field should print L = {layers}"
    assert "Causal mask: the cells above the diagonal" in flat, "the masks widget should print the causal mask"
    cost = demos.PRINT_FRAMES["cost_calculator"]
    assert f"d = {cost['width d:']}, T = {cost['sequence length T']}:" in flat, "the cost widget prints another frame"


def test_every_widget_prints_the_frame_its_chapter_discusses():
    """What each marked control showed when its page was printed, read off the page by book_pdf."""
    printed = json.loads((SITE / FRAMES_NAME).read_text(encoding="utf-8"))
    shown = sorted((c["control"], c["shown"]) for c in printed)
    declared = sorted((control, label) for frames in demos.PRINT_FRAMES.values() for control, label in frames.items())
    assert shown == declared


def test_every_widget_declares_one_print_frame_and_marks_it():
    widgets = {n for n in demos.__all__ if n not in {"PRINT_FRAMES", "receptive_field_frame"}}
    assert set(demos.PRINT_FRAMES) == widgets, "every widget needs exactly one PRINT_FRAMES record"
    for name, frames in demos.PRINT_FRAMES.items():
        box = getattr(demos, name)()
        marked = {c.description: c._options_labels[print_frame_of(c)]
                  for c in box.children if print_frame_of(c) is not None}
        assert marked == frames, f"{name} marks {marked}, PRINT_FRAMES says {frames}"


def test_site_links_the_pdf():
    assert f'href="../{PDF_NAME}"' in (SITE / "book" / "intro.html").read_text(encoding="utf-8")


# -- links, outline and layout, read back from the file (pypdf) ----------------------------------------

LOCAL = ("http://127.0.0.1", "http://localhost", "file:")


@pytest.fixture(scope="module")
def reader():
    from pypdf import PdfReader

    assert PDF.exists(), "run `make pdf` first (`make test` does)"
    return PdfReader(PDF)


def _published() -> str:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["html"]["baseurl"]


def _links(reader) -> list[tuple[int, int | None, str]]:
    """Every link of the PDF: (page it is on, page it jumps to or None, address it opens or "")."""
    out = []
    for n, page in enumerate(reader.pages):
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot.get("/A")
            action = action.get_object() if action is not None else {}
            dest = annot.get("/Dest", action.get("/D"))
            if dest is not None:
                dest = dest.get_object() if hasattr(dest, "get_object") else dest
                target = reader.get_page_number(dest[0].get_object()) if isinstance(dest, list) else None
                out.append((n, target, ""))
            else:
                out.append((n, None, str(action.get("/URI", ""))))
    return out


def _flat(text: str) -> str:
    return "".join(text.split())


def test_pdf_links_jump_to_their_page_or_open_the_published_site(reader, text):
    links = _links(reader)
    local = [u for _, _, u in links if u.startswith(LOCAL)]
    assert local == [], f"{len(local)} links point at the server the PDF was printed from: {local[:5]}"
    unresolved = [(n + 1) for n, target, uri in links if not uri and target is None]
    assert unresolved == [], f"links on pages {unresolved[:10]} jump nowhere"
    jumps = [(n, t) for n, t, uri in links if not uri]
    assert len(jumps) >= 3 * len(toc_pages()), f"only {len(jumps)} links jump within the PDF"
    # the contents page: each chapter's entry jumps to the page that begins that chapter
    pages = text.split("\f")
    for title in _titles():
        start = int(re.search(re.escape(title) + r"\s+(\d+)\s*$", pages[1], flags=re.M).group(1))
        assert (1, start - 1) in jumps, f"the contents entry {title!r} does not jump to page {start}"
    # links into a chapter's sections land inside it, not all on its first page
    starts = {int(m) - 1 for m in re.findall(r"(\d+)\s*$", pages[1], flags=re.M)}
    assert any(t not in starts for _, t in jumps), "every link lands on a chapter's first page: sections lost"


def _named_links(reader) -> list[tuple[int, int, str]]:
    """Every jump of the PDF: (page it is on, page it lands on, ``rel#id`` of the target it was made for)."""
    out = []
    for n, page in enumerate(reader.pages):
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            dest = annot.get("/Dest")
            if annot.get("/Subtype") == "/Link" and dest is not None:
                dest = dest.get_object() if hasattr(dest, "get_object") else dest
                out.append((n, reader.get_page_number(dest[0].get_object()), str(annot.get("/NM", ""))))
    return out


def _target_words(rel: str, ident: str, soups: dict) -> str:
    """The first words of the element ``ident`` of page ``rel`` as the PDF prints them ("" when they hold
    math, whose typeset text differs from the page's source): a section's heading, else its text."""
    from bs4 import BeautifulSoup

    if rel not in soups:
        soups[rel] = BeautifulSoup((SITE / rel).read_text(encoding="utf-8"), "html.parser")
    el = soups[rel].find(id=ident) if ident else soups[rel].select_one("article h1")
    assert el is not None, f"a PDF link targets {rel}#{ident}, which the page does not have"
    if el.name == "section" and el.find(["h1", "h2", "h3", "h4"]):
        el = el.find(["h1", "h2", "h3", "h4"])
    if el.find(class_="math") or el.find("script"):
        return ""
    for link in el.select(".headerlink"):
        link.decompose()
    words = _flat(el.get_text().replace("#", ""))
    return "" if "\\" in words or "$" in words else words[:20]


def test_every_pdf_link_lands_on_its_target_or_a_course_file(reader, text):
    """Follow every link of the PDF: a jump lands on the page that shows the element the site's link
    named (its heading or first words); a link to the course's own files opens a file that exists where
    the PDF is published (relative to it while the site address is the placeholder, else under the
    published site); no link opens the placeholder address."""
    from autograder.course.site_address import is_placeholder

    pages = text.split("\f")
    soups: dict = {}
    wrong, unnamed = [], []
    for n, target, name in _named_links(reader):
        if not name:
            unnamed.append(n + 1)
            continue
        rel, _, ident = name.partition("#")
        words = "" if rel == "front" else _target_words(rel, ident, soups)
        if words and words not in _flat(pages[target]):
            wrong.append((n + 1, name, target + 1, words))
    assert unnamed == [], f"jumps on pages {unnamed[:10]} do not say what they were made for"
    assert wrong == [], f"jumps landing on a page without their target (page, target, landed, text): {wrong[:6]}"
    published = _published()
    addresses = [u for _, _, u in _links(reader) if u]
    placeholder = [u for u in addresses if u.startswith(published)] if is_placeholder(published) else []
    assert placeholder == [], f"{len(placeholder)} links open the placeholder address: {placeholder[:5]}"
    course = [u for u in addresses if "://" not in u and not u.startswith("mailto:")]
    if not is_placeholder(published):
        course = [u.removeprefix(published) for u in addresses if u.startswith(published)]
    assert course, "no link to the course's own files (the bundle, the notebooks)"
    missing = [u for u in course if not (PDF.parent / unquote(u.partition("#")[0])).is_file()]
    assert missing == [], f"links to course files that are not where the PDF is published: {missing[:5]}"


def test_references_carry_doi_or_arxiv_links(text, reader):
    """Every entry of the references page opens its paper: an arXiv, DOI or proceedings link."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((SITE / "reference" / "references.html").read_text(encoding="utf-8"), "html.parser")
    entries = soup.select("div.citation, dl.citation > dt, .bibliography .citation")
    assert entries, "the references page lists no entry"
    bare = [e.get_text(" ", strip=True)[:60] for e in entries
            if not any(a.get("href", "").startswith(("https://arxiv.org/abs/", "https://doi.org/", "https://proceedings.mlr.press/"))
                       for a in (e.find_next_sibling("dd") or e).find_all("a"))]
    assert bare == [], f"references without a DOI or arXiv link: {bare}"
    addresses = {u for _, _, u in _links(reader)}
    assert sum(u.startswith(("https://arxiv.org/abs/", "https://doi.org/")) for u in addresses) >= len(entries) - 1, \
        "the PDF's references do not link their papers"


def _outline(reader) -> list[tuple[str, int, list]]:
    def walk(items):
        out = []
        for item in items:
            if isinstance(item, list):
                out[-1][2].extend(walk(item))
            else:
                out.append((" ".join(item.title.split()), reader.get_destination_page_number(item), []))
        return out

    return walk(reader.outline)


def test_pdf_outline_lists_chapters_and_their_sections(reader, text):
    outline = _outline(reader)
    # the chapters of the lecture carry their numbers, as on their pages and in the contents
    numbered = [f"{int(rel[5:7])}. {t}" if re.match(r"book/\d\d-", rel) else t
                for rel, t in zip(toc_pages(), _titles(), strict=True)]
    assert [t for t, _, _ in outline] == numbered, f"outline {[t for t, _, _ in outline]} is not the contents"
    pages = text.split("\f")
    for title, page, sections in outline:
        assert title in " ".join(pages[page].split()), f"outline: {title!r} does not lead to its first page"
        number = re.match(r"(\d+)\. ", title)
        if not number:
            continue
        assert len(sections) >= 2, f"outline: chapter {title!r} has no sections"
        for name, spage, _ in sections:
            assert name.startswith(f"{number.group(1)}."), f"outline: section {name!r} of {title!r} is unnumbered"
            words = _flat(re.sub(r"^[\d.]+\s*", "", name))[:25]
            assert words in _flat(pages[spage]), f"outline: {name!r} leads to page {spage + 1}, which lacks it"


def test_no_code_toggle_lines_in_the_pdf(text):
    shown = [ln.strip() for ln in text.splitlines() if re.search(r"(Show|Hide) code cell", ln)]
    assert shown == [], f"screen-only toggles printed: {shown[:5]}"


def test_no_near_empty_pages(reader, text):
    """Every page after the title page holds at least six lines of text (its footer aside) or a figure."""
    widows = []
    for n, page in enumerate(text.split("\f")[:-1]):
        lines = [ln for ln in page.splitlines() if ln.strip()][:-1]  # the footer (or contents' last row) aside
        if n > 0 and len(lines) < 6 and not reader.pages[n].images:
            widows.append((n + 1, [ln.strip()[:50] for ln in lines]))
    assert widows == [], f"near-empty pages: {widows}"


def test_long_code_lines_wrap_instead_of_being_cut(text):
    """Every character of the code and output the pages print is in the PDF (compared without spaces, so
    a wrapped line matches; a line cut at the margin loses its end)."""
    from bs4 import BeautifulSoup

    flat = _flat(text)
    cut = []
    for rel in toc_pages():
        soup = BeautifulSoup((SITE / rel).read_text(encoding="utf-8"), "html.parser")
        for pre in soup.select("article div.cell pre"):
            if pre.find_parent("details", class_="hide") or pre.find_parent(class_="tag_remove-output"):
                continue
            for line in pre.get_text().splitlines():
                if len(line) > 60 and _flat(line) not in flat:
                    cut.append((rel, line[:90]))
    assert cut == [], f"code lines missing from the PDF (cut at the margin?): {cut[:6]}"


def test_slider_instructions_become_a_static_alternative_on_paper(text):
    """Paper cannot move a slider: the PDF asks no reader to, chapter 1 prints every frame of its
    receptive-field slider as a table row (layers, field, whether cat and hungry are inside), and chapter 10
    every frame of its training slider (step, mean weight on the target, loss)."""
    flat = " ".join(text.split())
    assert "Move the slider" not in flat, "the PDF asks its reader to move a slider"
    assert "Slide through" not in flat, "the PDF asks its reader to slide through training"
    frames = (0, 10, demos.LOOKUP_STEPS)  # chapter 10's slider
    from selfattn import training

    run = training.train_lookup(demos.LOOKUP_TAU, d_k=256, scaled=True, steps=demos.LOOKUP_STEPS,
                                lr=demos.LOOKUP_RATE, seed=0, snapshots=frames)
    for step in frames:
        row = f"{step:,} {run.target_weight[step]:.2f} {run.loss[step]:.3f}"
        assert row in flat, f"the PDF lacks chapter 10's training frame at step {step} ({row!r})"
    left, right = demos.PORCH_PAIR
    for layers in range(8):
        f = demos.receptive_field_frame(layers, demos.PORCH, left, right)
        row = f"{layers} {f['field']} {f['first']} to {f['last']} {'yes' if f['connected'] else 'no'}"
        assert row in flat, f"the PDF lacks the receptive field's frame L = {layers} ({row!r})"


# -- code frames at the page breaks, read off the rendered pages ---------------------------------------

#: Resolution the pages are rendered at to find code frames (dots per inch).
FRAME_DPI = 60
#: The print margins of scripts/book_pdf.py (top and bottom, left and right), in mm of an A4 page.
MARGIN_MM = (18, 16)


def _runs(row) -> list[tuple[int, int]]:
    """The runs of True in a 1-D boolean array, as (start, end) with end exclusive."""
    import numpy as np

    edges = np.flatnonzero(np.diff(np.concatenate(([0], row.astype(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _text_area(height: int) -> tuple[float, float]:
    """The first and last rows (a few rows in) of the text area of a page rendered ``height`` rows high."""
    return height * MARGIN_MM[0] / 297 + 3, height * (1 - MARGIN_MM[0] / 297) - 3


def code_frames(rgb) -> list[dict[str, int]]:
    """Every frame on a rendered page (an H × W × 3 uint8 array): a block of one light grey fill as wide as
    the text column (a code or output block, a table's shaded row), with the lines of text inside it.

    A frame is found at a row of one grey as wide as most of the column, and followed up and down while its
    two inner edges (the block's padding, where no character is drawn) keep that grey; a line is a run of
    rows with ink between those edges. A box's soft shadow (a grey that changes from row to row) is no
    frame. Returns each frame's top and bottom row, its left and right column and its number of lines.
    """
    import numpy as np

    low, high = rgb.min(axis=2).astype(int), rgb.max(axis=2).astype(int)
    grey = (low >= 225) & (high <= 252) & (high - low <= 12)
    ink = low < 160
    height, width = grey.shape
    column = width * (1 - 2 * MARGIN_MM[1] / 210)
    head, foot = _text_area(height)
    frames, taken = [], np.zeros(height, dtype=bool)
    for y in range(height):
        if taken[y]:
            continue
        wide = [(a, b) for a, b in _runs(grey[y]) if b - a >= 0.85 * column]
        if not wide:
            continue
        fill = np.median(rgb[y, wide[0][0]:wide[0][1]], axis=0)

        def same(row: int, a: int, b: int, fill=fill) -> np.ndarray:
            return (np.abs(rgb[row, a:b].astype(int) - fill) <= 2).all(axis=1)

        uniform = [(a, b) for a, b in _runs(same(y, 0, width)) if b - a >= 0.85 * column]
        if not uniform:
            continue
        x0, x1 = uniform[0]

        def inside(row: int, x0=x0, x1=x1) -> bool:
            return bool(same(row, x0 + 1, x0 + 4).all() and same(row, x1 - 4, x1 - 1).all())

        top, bottom = y, y
        while top > 0 and not taken[top - 1] and inside(top - 1):
            top -= 1
        while bottom + 1 < height and inside(bottom + 1):
            bottom += 1
        taken[top:bottom + 1] = True
        if bottom == top or (bottom - top < 2 and head < top and bottom < foot):
            continue  # a rule or a shadow, not a block (unless a page break cut it there)
        lines = len(_runs(ink[top:bottom + 1, x0 + 3:x1 - 3].any(axis=1)))
        frames.append({"top": top, "bottom": bottom, "left": x0, "right": x1, "lines": lines})
    return frames


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> list:
    """Every page of the PDF as it prints, an RGB array at FRAME_DPI (pdftoppm, Debian's poppler-utils)."""
    import numpy as np
    from PIL import Image

    assert PDF.exists(), "run `make pdf` first (`make test` does)"
    assert shutil.which("pdftoppm"), "pdftoppm missing: scripts/install-system-deps.sh installs poppler-utils"
    out = tmp_path_factory.mktemp("pdf-pages")
    subprocess.run(["pdftoppm", "-r", str(FRAME_DPI), "-png", str(PDF), str(out / "p")], check=True)
    return [np.asarray(Image.open(p).convert("RGB")) for p in sorted(out.glob("p-*.png"))]


def test_no_empty_code_frame_at_a_page_break(rendered, text):
    """On every page of the PDF, each code or output frame holds text: no page ends on a frame whose code
    starts on the next page (its border and padding alone), and a frame cut at the foot of a page and
    continued on the next keeps at least two of its lines on the first."""
    assert len(rendered) == text.count("\f"), "pdftoppm rendered another number of pages than pdftotext read"
    empty, orphaned = [], []
    framed = [code_frames(rgb) for rgb in rendered]
    for n, rgb in enumerate(rendered):
        head, foot = _text_area(rgb.shape[0])
        following = framed[n + 1] if n + 1 < len(rendered) else []
        for frame in framed[n]:
            if frame["lines"] == 0:
                empty.append((n + 1, frame["top"], frame["bottom"]))
            continued = any(f["top"] <= head and abs(f["left"] - frame["left"]) <= 3 for f in following)
            if frame["bottom"] >= foot and continued and frame["lines"] < 2:
                orphaned.append((n + 1, frame["lines"]))
    assert empty == [], f"empty code frames (page, top, bottom px at {FRAME_DPI} dpi): {empty}"
    assert orphaned == [], f"frames cut at the foot of a page with under two lines on it (page, lines): {orphaned}"


def test_code_frames_are_found_with_their_lines(rendered):
    """The frame finder sees the book's code: chapter 1's first code cell (four lines of code) and its
    output (two lines), as the first two frames on the page that prints them."""
    framed = [f["lines"] for rgb in rendered for f in code_frames(rgb)]
    assert len(framed) >= 40, f"only {len(framed)} code frames found in the whole PDF"
    assert [4, 2] in [framed[i:i + 2] for i in range(len(framed) - 1)], \
        "chapter 1's vocabulary cell (four lines) and its output (two) were not found as frames"


def test_no_link_in_the_pdf_opens_the_pdf(reader):
    """The site's pages link the PDF for download; inside the PDF no link points at the PDF itself."""
    selves = [(n + 1, uri) for n, _target, uri in _links(reader)
              if uri and unquote(uri.partition("#")[0].rstrip("/")).rsplit("/", 1)[-1] == PDF_NAME]
    assert selves == [], f"links to the PDF itself (page, address): {selves}"

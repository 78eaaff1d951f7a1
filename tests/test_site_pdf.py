"""The book as one PDF (`make pdf`, which `make test` runs): every page in order, math typeset, linked
from the site. Read back with pdftotext (Debian's poppler-utils)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

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
        out.append(" ".join(re.sub(r"<[^>]+>|#", "", h1).split()))
    return out


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
    raw = sorted(set(re.findall(r"\\[A-Za-z]{2,}|\$\$?[^$\s]|\\\(|\\\[", text)))
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

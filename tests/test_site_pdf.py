"""The book as one PDF (`make pdf`, which `make test` runs): every page in order, math typeset, linked
from the site. Read back with pdftotext (Debian's poppler-utils)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from browser_support import ROOT, SITE

sys.path.insert(0, str(ROOT / "scripts"))
from book_pdf import PDF_NAME, toc_pages

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


def test_no_raw_tex_in_the_pdf(text):
    raw = sorted(set(re.findall(r"\\[A-Za-z]{2,}|\$\$?[^$\s]|\\\(|\\\[", text)))
    assert raw == [], f"TeX source in the PDF: {raw[:10]}"


def test_widgets_print_a_meaningful_frame(text):
    flat = " ".join(text.split())
    assert "Cat and hungry are both inside: connected" in flat, "the receptive field should print its connected frame"


def test_site_links_the_pdf():
    assert f'href="../{PDF_NAME}"' in (SITE / "book" / "intro.html").read_text(encoding="utf-8")

"""The whole book as one PDF, printed from the built site by the headless Chromium the tests use.

Usage: python scripts/book_pdf.py [site] [output]  (defaults: _build/html, _build/html/self-attention.pdf)

Pages are printed in the order of ``_toc.yml`` with the network cut off, after MathJax has typeset
them; widgets print the frame they show (their controls are hidden by the print stylesheet) and the
answer drop-downs are opened. A title page with a table of contents (starting page of every
chapter, each a link) goes first; ``scripts/pdf_assemble.py`` joins the parts, makes links to the book's
pages jump to their page and all other links into the site point at the published site
(``html.baseurl``; while that is the placeholder, at the files beside the PDF, relative to it, and a
one-line warning says so), and writes the outline (chapters and their sections). A chapter whose last page
would hold only a few lines is printed slightly smaller (down to ``MIN_SCALE``) when that pulls those
lines back.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from pdf_assemble import Part, join  # scripts/, beside this file

from autograder.course.site_address import is_placeholder, problem  # the checkout (.pth of make setup)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

PDF_NAME = "self-attention.pdf"
FRAMES_NAME = "self-attention.frames.json"  # the option every marked widget control printed at
MARGIN = {"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"}
MIN_LINES = 6  # a last page with fewer lines of text (and no figure) is a widow worth avoiding
MIN_SCALE = 0.88  # the smallest print scale tried to avoid one
# Chromium records where an element is (a named destination) only for elements a link names; a hidden
# link to every element with an id lets links from other chapters and from the contents land on it.
NAME_EVERY_ID_JS = """() => {
  const box = document.createElement('div');
  box.style.display = 'none';
  for (const el of document.querySelectorAll('[id]')) {
    const a = document.createElement('a'); a.href = '#' + encodeURIComponent(el.id); box.appendChild(a);
  }
  document.body.appendChild(box);
}"""
# The page's section headings as a reader sees them (typeset math read as its text), with their sections' ids.
HEADINGS_JS = """() => Array.from(document.querySelectorAll('article section > h2, article section > h3'))
  .map(h => { const c = h.cloneNode(true);
    c.querySelectorAll('.headerlink').forEach(e => e.remove());
    c.querySelectorAll('mjx-container').forEach(m => {
      const mml = m.querySelector('mjx-assistive-mml'); m.replaceWith(mml ? mml.textContent : ''); });
    return [Number(h.tagName[1]), c.textContent.replace(/\\s+/g, ' ').trim(), h.parentElement.id]; })
  .filter(([, text, id]) => text && id)"""
# Each chapter is printed on its own, so its footer (a CSS page-margin box: the chapter's title and
# the page number) starts the page counter where the chapter starts in the joined PDF: the number
# the contents list and a PDF viewer shows.
FOOTER_CSS = ("html {{ counter-reset: page {before} }} "
              "@page {{ @bottom-center {{ content: \"{title}  \\00B7  \" counter(page); "
              "font: 8px system-ui, sans-serif; color: #444 }} }}")


def _css_string(text: str) -> str:
    """``text`` inside a CSS string literal (no line breaks, quotes and backslashes escaped)."""
    return " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"')


def files_base(baseurl: str, site: Path, output: Path) -> str:
    """What the PDF's links to the site's other files (the bundle, notebooks, the PDF) start with.

    The published site's address; while it is a placeholder (``autograder.course.site_address``),
    the path from the PDF's folder to the site's root, so each link opens the file published beside it.
    """
    if not is_placeholder(baseurl):
        return baseurl.rstrip("/") + "/"
    up = Path(os.path.relpath(site.resolve(), output.resolve().parent)).as_posix()
    return "" if up == "." else up + "/"


def toc_pages(root: Path = ROOT) -> list[str]:
    """HTML paths of the book's pages in reading order, from ``_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    return [f"{f}.html" for f in files]


def _pages(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, flags=re.M).group(1))


def _last_page_lines(pdf: Path) -> tuple[int, bool]:
    """Lines of text on the last page of ``pdf`` and whether it shows an image."""
    from pypdf import PdfReader

    last = PdfReader(pdf).pages[-1]
    lines = [ln for ln in (last.extract_text() or "").splitlines() if ln.strip()]
    return len(lines), bool(last.images)


def _print(page, pdf: Path, scale: float) -> None:
    page.pdf(path=str(pdf), format="A4", margin=MARGIN, print_background=True, scale=scale)


def _print_without_widow(page, pdf: Path) -> float:
    """Print ``page``; if its last page is nearly empty, at the largest scale that avoids that. The scale."""
    _print(page, pdf, 1.0)
    pages = _pages(pdf)
    lines, image = _last_page_lines(pdf)
    if pages == 1 or image or lines >= MIN_LINES:
        return 1.0
    scale = 0.97
    while scale >= MIN_SCALE - 1e-9:
        _print(page, pdf, scale)
        if _pages(pdf) < pages:
            return scale
        scale = round(scale - 0.03, 2)
    _print(page, pdf, 1.0)
    return 1.0


def _start_loading(context, base: str, rel: str, outside: list[str]):
    """A new page of ``context`` loading ``base + rel``, returned as soon as the navigation commits: the
    book's pages load and typeset side by side (each in its own renderer process), then are printed in
    order. The network is cut (the site tests' Chromium arguments); a request for anything outside the
    site is added to ``outside`` (:func:`build_pdf` refuses to print then)."""
    page = context.new_page()
    page.on("request", lambda r: None if r.url.startswith((base, "data:")) else outside.append(f"{rel}: {r.url}"))
    page.goto(base + rel, wait_until="commit")
    return page


def _front(browser, config: dict, entries: list[tuple[str, str, int]], pdf: Path) -> int:
    """Print the title page and contents (:func:`_front_matter`) to ``pdf``; its number of pages."""
    page = browser.new_page()
    page.set_content(_front_matter(config.get("title", ""), config.get("author", ""), entries))
    page.pdf(path=str(pdf), format="A4", margin=MARGIN)
    page.close()
    return _pages(pdf)


def _title(page) -> str:
    return " ".join(page.locator("article h1").first.inner_text().replace("#", "").split())


def _show_print_frames(page) -> list[dict[str, str]]:
    """Set each control marked ``print-frame-N`` to its option N (the frame its chapter discusses).

    The marks come from ``selfattn.demos.PRINT_FRAMES``; a control is a slider or toggle buttons.
    Returns what each control then shows, read off the page: its description and its option.
    """
    controls = page.locator("[class*='print-frame-']").all()
    for control in controls:
        index = int(re.search(r"print-frame-(\d+)", control.get_attribute("class")).group(1))
        buttons = control.locator("button")
        if buttons.count():
            buttons.nth(index).click()
            continue
        handle = control.locator(".noUi-handle").first
        handle.focus()
        page.keyboard.press("Home")
        for _ in range(index):
            page.keyboard.press("ArrowRight")
    page.wait_for_timeout(100)
    shown = []
    for control in controls:
        value = control.locator("button.mod-active, .widget-readout").first.inner_text()
        shown.append({"control": control.locator(".widget-label").first.inner_text().strip(), "shown": value.strip()})
    return shown


def _front_matter(book_title: str, author: str, entries: list[tuple[str, str, int]]) -> str:
    """The title page and contents; ``entries`` are (title, address of the printed page, first page)."""
    rows = "\n".join(f'<tr><td><a href="{html.escape(url, quote=True)}">{html.escape(t)}</a></td>'
                     f'<td class="n">{n}</td></tr>' for t, url, n in entries)
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>
      body {{ font-family: "DejaVu Sans", sans-serif; color: #111; }}
      .title {{ height: 230mm; display: flex; flex-direction: column; justify-content: center; text-align: center; }}
      .title h1 {{ font-size: 30px; margin: 0 0 12px; }} .title p {{ font-size: 14px; color: #333; }}
      h2 {{ font-size: 22px; page-break-before: always; }}
      table {{ width: 100%; border-collapse: collapse; font-size: 13px; }}
      td {{ padding: 6px 0; border-bottom: 1px dotted #999; }} td.n {{ text-align: right; width: 4em; }}
      td a {{ color: inherit; text-decoration: none; }}
    </style></head><body>
      <div class="title"><h1>{html.escape(book_title)}</h1><p>{html.escape(author)}</p>
        <p>Printed from the course website; every number and figure was computed when it was built.</p></div>
      <h2>Contents</h2><table>{rows}</table></body></html>"""


def build_pdf(site: Path, output: Path) -> Path:
    from browser_support import CHROMIUM_ARGS, chromium_path, serve
    from playwright.sync_api import sync_playwright

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    work = Path(tempfile.mkdtemp(prefix="book-pdf-"))
    try:
        parts: list[tuple[str, str, Path, float]] = []  # title, page, its PDF, the scale it prints at
        headings: list[tuple[tuple[int, str, str], ...]] = []
        printed: list[dict[str, str]] = []
        front = work / "front.pdf"
        with serve(site) as base, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            # One context for the book's pages: they share the HTTP cache and the compiled scripts, so the
            # first page loads alone and the others read the site's scripts (MathJax, the widget manager)
            # from the cache (25 CPU-seconds for the PDF instead of 41). Each page is brought to the front
            # before it is read or printed: a background tab's frames are throttled, and Playwright's clicks
            # wait for frames (17 s instead of 27 for the PDF, on two cores).
            context = browser.new_context(viewport={"width": 1000, "height": 1200})
            outside: list[str] = []
            try:
                rels = toc_pages()
                loading = [_start_loading(context, base, rels[0], outside)]
                loading[0].wait_for_load_state("networkidle")
                loading += [_start_loading(context, base, rel, outside) for rel in rels[1:]]
                titles = []
                for rel, page in zip(rels, loading, strict=True):
                    page.bring_to_front()
                    page.wait_for_load_state("networkidle")
                    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                    page.evaluate("() => document.querySelectorAll('details.sd-dropdown').forEach(d => d.open = true)")
                    printed += [{"page": rel, **c} for c in _show_print_frames(page)]
                    page.evaluate(NAME_EVERY_ID_JS)
                    headings.append(tuple(tuple(h) for h in page.evaluate(HEADINGS_JS)))
                    page.emulate_media(media="print")
                    titles.append(_title(page))
                # The contents' length decides where chapter 1 starts; its page numbers (at most three
                # digits, in a column of their own) do not change it, so it is laid out with stand-ins
                # first, each chapter is printed once with its footer, then the contents with the numbers.
                front_pages = _front(browser, config, [(t, base + r, 999) for t, r in zip(titles, rels, strict=True)],
                                     front)
                loading[-1].wait_for_timeout(300)  # the print layout of the last page settles
                entries: list[tuple[str, str, int]] = []
                start = 1 + front_pages
                for i, (title, rel, page) in enumerate(zip(titles, rels, loading, strict=True)):
                    page.bring_to_front()
                    page.add_style_tag(content=FOOTER_CSS.format(before=start - 1, title=_css_string(title)))
                    pdf = work / f"{i:02d}.pdf"
                    parts.append((title, rel, pdf, _print_without_widow(page, pdf)))
                    entries.append((title, base + rel, start))
                    start += _pages(pdf)
                    page.close()
                if _front(browser, config, entries, front) != front_pages:
                    raise RuntimeError("the contents' page numbers changed the contents' length")
                if outside:
                    raise RuntimeError(f"pages asked for files outside the site: {outside[:5]}")
            finally:
                browser.close()
        files = files_base(str(config.get("html", {}).get("baseurl") or ""), site, output)
        links = join(front, [Part(pdf, rel, title, h) for (title, rel, pdf, _), h in zip(parts, headings, strict=True)],
                     output, base, files)
        where = f"open {files}" if "://" in files else "open the course's files beside the PDF"
        print(f"links: {links['internal']} jump within the PDF, {links['published']} {where}, "
              f"{links['outside']} lead elsewhere")
        if "://" not in files:
            print(f"warning: {problem(ROOT / '_config.yml')}; the PDF's {links['published']} links to the course's "
                  "files are relative to where it is published", file=sys.stderr)
        (output.parent / FRAMES_NAME).write_text(json.dumps(printed, indent=1, ensure_ascii=False), encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return output


if __name__ == "__main__":
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else site / PDF_NAME
    path = build_pdf(site, out)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({_pages(path)} pages)")

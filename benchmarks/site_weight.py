"""Page weight of the built site: what each page makes the browser download, and the site's size.

Each page is opened in headless Chromium (network cut off, as in the tests); every response's
body is counted as served and gzip-compressed (what a web server with compression would send).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))  # browser_support: the same Chromium setup as the tests


def site_bytes(site: Path) -> int:
    """Bytes of every file under the built site."""
    return sum(p.stat().st_size for p in site.rglob("*") if p.is_file())


def page_weights(site: Path, pages: list[str] | None = None) -> dict[str, dict[str, float]]:
    """``{page: {"raw": bytes, "gzip": bytes, "requests": n}}`` for each HTML page of ``site``.

    The page is loaded in Chromium; every file it requests from the site is counted once, by its
    size on disk and gzip-compressed (level 6, what a web server would typically send).
    """
    from urllib.parse import unquote, urlsplit

    from browser_support import CHROMIUM_ARGS, chromium_path, serve
    from playwright.sync_api import sync_playwright

    if pages is None:
        pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "_static" not in p.parts)
    packed: dict[Path, int] = {}
    out: dict[str, dict[str, float]] = {}
    with serve(site) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            for rel in pages:
                page = browser.new_page()
                files: set[Path] = set()

                def route(r, _request=None, base=base, files=files):
                    url = r.request.url
                    if url.startswith(base):
                        files.add(site / unquote(urlsplit(url).path).lstrip("/"))
                        r.continue_()
                    elif url.startswith("data:"):
                        r.continue_()
                    else:
                        r.abort()

                page.route("**/*", route)
                page.goto(base + rel, wait_until="networkidle")
                page.wait_for_timeout(500)
                page.close()
                found = [f for f in files if f.is_file()]
                for f in found:
                    if f not in packed:
                        packed[f] = len(gzip.compress(f.read_bytes(), 6))
                out[rel] = {
                    "raw": float(sum(f.stat().st_size for f in found)),
                    "gzip": float(sum(packed[f] for f in found)),
                    "requests": float(len(found)),
                }
        finally:
            browser.close()
    return out


if __name__ == "__main__":
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    print(f"site: {site_bytes(site) / 1e6:.1f} MB")
    for rel, w in page_weights(site).items():
        print(f"{rel:40s} {w['raw'] / 1e6:6.2f} MB raw, {w['gzip'] / 1e6:5.2f} MB gzip, {w['requests']:.0f} requests")

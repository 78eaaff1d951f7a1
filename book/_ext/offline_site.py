"""Sphinx extension: keep every page self-contained and light, and offer each chapter as a notebook.

sphinx-thebe (pulled in by Jupyter Book 1, though this site launches no kernels) writes an
inline script that names a CDN, and writes it twice per page, which is a console
SyntaxError.  This drops its assets from every page before rendering.

The theme's ``fontawesome.js`` (1.5 MB, the heaviest file a page loaded) redraws the theme's few
icons as SVG; its stylesheet already draws them with the icon font, so the script is dropped from
every page and from the site after the build. After the build, three theme and Sphinx markups that
accessibility checkers (axe-core) flag are corrected on every page (see ``_HIDDEN_NAMES``).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

_DROP = ("sphinx-thebe", "THEBE_JS_URL", "thebe@")


def _keep(asset: Any) -> bool:
    text = str(getattr(asset, "filename", asset) or "") + str(getattr(asset, "attributes", {}).get("body", ""))
    return not any(marker in text for marker in _DROP)


def _strip_thebe(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if _keep(asset)]


def _offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """Copy the executed notebook of a MyST chapter next to its sources for the download menu.

    sphinx-book-theme lists ``context["ipynb_source"]`` under its download button, but only
    fills it in when a launch service (Binder, JupyterHub, ...) is configured; this site has none.
    """
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.exists():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


_FONTAWESOME_JS = re.compile(r'<(?:script[^>]*src|link[^>]*href)="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>'
                             r"(?:</script>)?\n?")


# Names that differ from what the control shows (axe-core's label-content-name-mismatch): a control's
# accessible name must contain its visible text, so these take their name from their text instead.
_HIDDEN_NAMES = (
    # the theme's search button shows "Search Ctrl+K" but is named "Search"
    (re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"'), r"\1"),
    # a folded code cell's toggle shows "Show code cell source" but is named "Toggle hidden content"
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    # the bibliography is a list (role="list") whose entries must be list items for assistive technology
    (re.compile(r'(<div class="citation" id="[^"]*") role="doc-biblioentry"'), r'\1 role="listitem"'),
)


def _finish_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = _FONTAWESOME_JS.sub("", text)
        for pattern, replacement in _HIDDEN_NAMES:
            lighter = pattern.sub(replacement, lighter)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")
    for leftover in (out / "_static" / "scripts").glob("fontawesome.js*"):
        leftover.unlink()


def setup(app) -> dict[str, Any]:
    # Page titles hold no math (MathJax does not typeset the navigation or the <title>), so only
    # pages with an equation load MathJax.
    app.connect("html-page-context", _strip_thebe, priority=900)
    app.connect("build-finished", _finish_pages)
    app.connect("html-page-context", _offer_notebook, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

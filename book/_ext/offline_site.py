"""Sphinx extension: keep every page self-contained.

sphinx-thebe (pulled in by Jupyter Book 1, though this site launches no kernels) writes an
inline script that names a CDN, and writes it twice per page, which is a console
SyntaxError.  This drops its assets from every page before rendering.
"""

from __future__ import annotations

from typing import Any

_DROP = ("sphinx-thebe", "THEBE_JS_URL", "thebe@")


def _keep(asset: Any) -> bool:
    text = str(getattr(asset, "filename", asset) or "") + str(getattr(asset, "attributes", {}).get("body", ""))
    return not any(marker in text for marker in _DROP)


def _strip_thebe(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if _keep(asset)]


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", _strip_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

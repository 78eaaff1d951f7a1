"""Sphinx extension: a range of numbers ("32–43", "1.54–1.58") is never split across two lines.

A browser may break a line after an en dash, and on a phone it did: a reader met "32–" at the end of
one line and "43%" at the start of the next, which reads as a number and a stray dash. Every such
range in a page's text (its prose, the values a chapter glues into it, table cells, captions) is put
in a ``<span class="nowrap">`` (``_assets/course.css`` keeps it on one line); code and formulas are
left as they are.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes

#: two numbers joined by an en dash
RANGE = re.compile(r"\d[\d.,]*–\d[\d.,]*\d|\d[\d.,]*–\d")
#: nodes whose text is code or TeX, not words
_LEFT_ALONE = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.comment)


def keep_ranges_whole(doctree: nodes.Node) -> int:
    """Wrap every number range in ``doctree``'s text in an inline node of class ``nowrap``.

    Parameters
    ----------
    doctree : docutils.nodes.Node
        A resolved page.

    Returns
    -------
    int
        How many ranges were wrapped.
    """
    wrapped = 0
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or any(isinstance(a, _LEFT_ALONE) for a in _ancestors(text)):
            continue
        if "nowrap" in parent.get("classes", []) or not RANGE.search(text.astext()):
            continue
        pieces: list[nodes.Node] = []
        source, at = text.astext(), 0
        for match in RANGE.finditer(source):
            if match.start() > at:
                pieces.append(nodes.Text(source[at:match.start()]))
            pieces.append(nodes.inline(match.group(), match.group(), classes=["nowrap"]))
            at = match.end()
            wrapped += 1
        if at < len(source):
            pieces.append(nodes.Text(source[at:]))
        index = parent.index(text)
        parent.remove(text)
        for offset, piece in enumerate(pieces):
            parent.insert(index + offset, piece)
    return wrapped


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


def _resolved(app, doctree: nodes.document, docname: str) -> None:
    keep_ranges_whole(doctree)


def setup(app) -> dict[str, Any]:
    app.connect("doctree-resolved", _resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Feedback pages that load nothing from outside.

nbgrader's feedback template loads MathJax from a CDN, so offline the formulas stay raw and every
student's browser contacts a third party. :class:`OfflineFeedbackExporter` (nbgrader's
``GenerateFeedback.exporter_class``) renders the math of every Markdown cell to MathML at export
(browsers draw MathML themselves) and removes every script or stylesheet the page would fetch from
another server. A formula the converter cannot read is shown as its TeX source in ``<code>``.
The page states its language and carries a small stylesheet (:func:`accessible`) so that it passes
axe-core's serious and critical checks: links underlined and dark enough on every panel, code wrapped
instead of scrolling in boxes a keyboard cannot reach.

nbgrader makes a new exporter for every notebook, and each would compile nbconvert's Jinja
templates again: the compiled templates are kept for the process (a bytecode cache keyed by each
template's source, so an edited template is compiled afresh), and the math of a Markdown cell,
the same text for every student, is converted once.
"""

from __future__ import annotations

import copy
import functools
import html
import re

import jinja2
from latex2mathml.converter import convert
from nbconvert.exporters import HTMLExporter

_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.S)
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?![\s$])(.+?)(?<![\\\s])\$(?!\d)|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.S)
_REMOTE = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script>|<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>",
    re.I)


def _mathml(match: re.Match) -> str:
    block, inline = match.group(1) or match.group(3), match.group(2) or match.group(4)
    tex = (block if block is not None else inline).strip()
    try:
        out = convert(tex, display="block" if block is not None else "inline")
    except Exception:
        return f"<code>{html.escape(match.group(0))}</code>"
    return out.replace("\n", " ")


@functools.lru_cache(maxsize=4096)
def render_math(markdown: str) -> str:
    """Markdown with each ``$...$``, ``$$...$$``, ``\\(...\\)`` and ``\\[...\\]`` outside code as MathML."""
    parts = _CODE.split(markdown)
    for i in range(0, len(parts), 2):
        parts[i] = _MATH.sub(_mathml, parts[i])
    return "".join(parts)


#: the formgrader server's MathJax loader (autograder/jupyter_data): feedback has its math as MathML
_FORMGRADER_MATHJAX = re.compile(r"<script\b[^>]*\bdata-selfattn-mathjax\b[^>]*>.*?</script>", re.S | re.I)


def strip_remote(page: str) -> str:
    """The page without the scripts and stylesheets it would load from other servers (nor the
    formgrader server's MathJax loader, when the feedback is generated there)."""
    return _FORMGRADER_MATHJAX.sub("", _REMOTE.sub("", page))


_A11Y_STYLE = """<style data-selfattn-a11y>
a, a:visited { color: #0b4f9c; text-decoration: underline; }
.alert a, .panel-body a { color: #083b75; }
.panel-primary > .panel-heading a, .panel-primary > .panel-heading .pull-right a { color: #ffffff !important; }
.highlight .ne, .highlight .gr, .highlight .gt, .highlight .err { color: #a1281f; }
.highlight .ow, .highlight .nd { color: #6a1b9a; }
.highlight .k, .highlight .kn, .highlight .kc, .highlight .kd, .highlight .nb, .highlight .bp { color: #00600f; }
.highlight .s, .highlight .s1, .highlight .s2, .highlight .sa, .highlight .sd { color: #8f1a1a; }
.highlight .mi, .highlight .mf, .highlight .o { color: #4a4a4a; }
.highlight .nf, .highlight .nc, .highlight .nn { color: #0b3fa8; }
.highlight .si, .highlight .se { color: #7a4400; }
.highlight .c, .highlight .c1, .highlight .ch, .highlight .cm, .highlight .cpf, .highlight .cs { color: #3f5f3f; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
"""
_HTML_TAG = re.compile(r"<html(?![^>]*\blang=)([^>]*)>", re.I)


def accessible(page: str) -> str:
    """The page with ``lang="en"`` on ``<html>`` and the accessibility stylesheet before ``</head>``."""
    page = _HTML_TAG.sub(r'<html lang="en"\1>', page, count=1)
    return page.replace("</head>", _A11Y_STYLE + "</head>", 1) if "data-selfattn-a11y" not in page else page


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled Jinja templates kept in memory for the process (Jinja checks each one's source)."""

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self._store:
            bucket.bytecode_from_string(self._store[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_TEMPLATES = _CompiledTemplates()


class OfflineFeedbackExporter(HTMLExporter):
    """nbgrader's feedback HTML, with math rendered at export and nothing loaded from outside."""

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = _TEMPLATES
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        nb = copy.deepcopy(nb)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = render_math(cell.source)
        output, resources = super().from_notebook_node(nb, resources=resources, **kw)
        return accessible(strip_remote(output)), resources

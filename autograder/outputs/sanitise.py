"""The one allow-list sanitiser of every page the project makes from student text.

Everything a student wrote reaches a page as HTML only through :func:`feedback_fragment` (a
Markdown cell or an instructor's comment of a feedback page, rendered: Markdown's HTML and the
MathML of its formulas) or :func:`report_fragment` (the body of the class report). Both are
`nh3 <https://nh3.readthedocs.io>`_ (the Rust *ammonia* sanitiser): the HTML is parsed as a
browser parses it and written again with only the elements and attributes listed here; every
other element is dropped (its text kept; ``script`` and ``style`` with their content), every
other attribute removed. Staging's neutralising (:mod:`autograder.intake.untrusted`) stays as a
first line; this is the one that holds when something gets past it (TeX commands such as
``\\href``, ``\\style``, ``\\class``, which the TeX-to-MathML converter turns into attributes).

What a fragment keeps:

- *Elements*: those Markdown emits (:data:`MARKDOWN_TAGS`), ``details``/``summary`` (the course's
  hints) and the MathML of :data:`MATHML_TAGS`; the report adds its tables, sections and inline SVG
  histograms (:data:`REPORT_TAGS`).
- *No* ``style`` (a table cell's alignment, exactly ``text-align:left|center|right``, aside), no
  event handler, no ``name``; ``class`` only from fixed lists (code highlighting, task lists, the
  report's own); ``id`` only on headings, prefixed ``user-`` (:data:`ID_PREFIX`) so that no
  student heading can take the id of anything on the page (``#top``, ``#toc``), and fragment links
  rewritten to match.
- *Links* (``href``): fragments (``#...``), relative paths, and ``http:``, ``https:`` and
  ``mailto:`` addresses (a click leaves the page; nothing is fetched when it opens; every link gets
  ``rel="noopener noreferrer nofollow"``). Never ``javascript:``, ``data:``, ``vbscript:``,
  ``file:`` or a protocol-relative ``//host`` address.
- *Images* (``src``): only the inlined pictures of pasted attachments
  (``data:image/png|jpeg|gif;base64,...``); an image from anywhere else loses its source.
- *MathML attributes*: layout words and numbers only; a length (``width``, ``height``, ``lspace``,
  ...) only up to :data:`MAX_MATH_LENGTH_EM` em; colours only as a name or ``#hex``; no ``href``.
- *Nested sizes* (:func:`bounded_math`): a length is in ems of the text around it, and size changes
  multiply as they nest (``\\Huge`` inside ``\\Huge``, ``mstyle mathsize`` inside ``mstyle``), so the
  sizes of one formula are bounded as a whole: along any path from a ``<math>`` inward, the product of
  the ``mathsize`` factors stays within :data:`MAX_MATH_SCALE` (a factor that would pass it is
  dropped, as is an absolute ``mathsize`` in ``px`` or ``pt``), a ``scriptlevel`` only shrinks
  (``"-1"`` is dropped), and an HTML element inside a formula is dropped (its text kept). So no
  length of a formula exceeds :data:`MAX_MATH_LENGTH_EM` × :data:`MAX_MATH_SCALE` em of the page's text.
  Behind this, the feedback page's stylesheet clips every formula to its own box
  (:data:`autograder.nbgrader_ext.feedback_html.MATH_CLIP_STYLE`): what a formula draws outside it
  (``\\smash``, ``\\raise``, ``\\moveleft``, negative space) is not painted, so no formula can draw
  over the page.
"""

from __future__ import annotations

import re

import nh3
from pygments.token import STANDARD_TYPES

#: Prefix of every ``id`` a fragment keeps (headings' anchors), and of its ``#fragment`` links.
ID_PREFIX = "user-"
#: The largest length (in em, or 16 px to the em) a MathML attribute may give; larger ones are dropped.
MAX_MATH_LENGTH_EM = 20.0
#: The most nested ``mathsize`` factors may scale a formula's text, multiplied along any path from its
#: ``<math>`` inward (``\\Huge`` is 2.49); a factor that would pass it is dropped.
MAX_MATH_SCALE = 2.5

MARKDOWN_TAGS = frozenset({
    "a", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "i", "img", "input", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul"})
MATHML_TAGS = frozenset({
    "math", "menclose", "mfrac", "mi", "mn", "mo", "mover", "mpadded", "mphantom", "mroot", "mrow", "mspace",
    "msqrt", "mstyle", "msub", "msubsup", "msup", "mtable", "mtd", "mtext", "mtr", "munder", "munderover", "none"})
#: the MathML attributes the converter writes (latex2mathml); each value must pass :func:`_math_value`
MATHML_ATTRIBUTES = frozenset({
    "accent", "accentunder", "columnalign", "columnlines", "columnspacing", "depth", "display", "displaystyle",
    "fence", "form", "frame", "height", "largeop", "linebreak", "linethickness", "lspace", "mathbackground",
    "mathcolor", "mathsize", "mathvariant", "maxsize", "minsize", "movablelimits", "notation", "rowlines",
    "rowspacing", "rspace", "scriptlevel", "separator", "stretchy", "symmetric", "voffset", "width"})
_MATH_LENGTHS = frozenset({"depth", "height", "lspace", "rspace", "voffset", "width", "mathsize", "maxsize",
                           "minsize", "linethickness"})
_MATH_COLOURS = frozenset({"mathcolor", "mathbackground"})
#: the class names Markdown's HTML may keep: Pygments' token classes, code blocks, task lists
MARKDOWN_CLASSES = {
    "span": frozenset(v for v in STANDARD_TYPES.values() if v),
    "div": frozenset({"highlight"}),
    "li": frozenset({"task-list-item"}),
    "input": frozenset({"task-list-item-checkbox"}),
    "a": frozenset({"anchor-link"}),
}
_ALIGN = frozenset({f"text-align:{a}" for a in ("left", "center", "right")})

REPORT_TAGS = frozenset({
    "a", "b", "code", "details", "div", "em", "figcaption", "figure", "h1", "h2", "h3", "li", "line", "nav", "p",
    "pre", "rect", "section", "span", "summary", "svg", "table", "tbody", "td", "text", "th", "thead", "title",
    "tr", "ul"})
#: the ids of the report's sections (its navigation's targets)
REPORT_IDS = frozenset({"glance", "how", "now", "reteach", "difficulty", "queue", "history", "changes", "students",
                        "scores", "checks", "mistakes", "faults", "similarity"})
REPORT_CLASSES = {
    "section": frozenset({"glance"}), "div": frozenset({"scroll", "glance", "side", "grid", "big"}),
    "p": frozenset({"muted", "big"}),
    "span": frozenset({"muted", "num", "big"}), "table": frozenset({"sortable", "plain", "num"}),
    "td": frozenset({"num"}), "svg": frozenset({"hist"}), "text": frozenset({"count", "tick"}),
}

_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")
_LENGTH = re.compile(r"(-?(?:\d+\.?\d*|\.\d+))\s*(em|ex|px|pt|mu|%)?")
_PER_EM = {"em": 1.0, "ex": 0.5, "px": 1 / 16, "pt": 1 / 12, "mu": 1 / 18, "%": 1 / 100, None: 1.0}
_COLOUR = re.compile(r"#[0-9A-Fa-f]{3,8}|[A-Za-z]{1,20}")
_WORDS = re.compile(r"[A-Za-z0-9 .+-]{0,64}")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_INLINE_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*")
_CONTROLS = re.compile(r"[\x00-\x20\x7f]")


def _math_value(attr: str, value: str) -> str | None:
    """``value`` if it is a harmless value of the MathML attribute ``attr``, else None."""
    v = value.strip()
    if attr in _MATH_LENGTHS:
        if v in ("", "0", "infinity", "thin", "medium", "thick"):
            return v
        m = _LENGTH.fullmatch(v)
        return v if m and abs(float(m.group(1))) * _PER_EM[m.group(2)] <= MAX_MATH_LENGTH_EM else None
    if attr in _MATH_COLOURS:
        return v if _COLOUR.fullmatch(v) else None
    return v if _WORDS.fullmatch(v) else None


def safe_href(value: str) -> str | None:
    """``value`` if a link may point there (a fragment, a relative path, an http(s) or mailto address)."""
    plain = _CONTROLS.sub("", value)
    if plain.startswith(("//", "\\\\", "/\\", "\\/")):
        return None
    scheme = _SCHEME.match(plain)
    if scheme and scheme.group(1).lower() not in _SAFE_SCHEMES:
        return None
    return value


def _feedback_attribute(tag: str, attr: str, value: str) -> str | None:
    if tag in MATHML_TAGS:
        return _math_value(attr, value)
    if attr == "href":
        href = safe_href(value)
        if href is not None and href.startswith("#") and not href.startswith("#" + ID_PREFIX):
            return "#" + ID_PREFIX + href[1:]
        return href
    if attr == "src":
        return value if _INLINE_IMAGE.fullmatch(value) else None
    return value


def _report_attribute(tag: str, attr: str, value: str) -> str | None:
    return safe_href(value) if attr == "href" else value


_FEEDBACK = nh3.Cleaner(
    tags=set(MARKDOWN_TAGS | MATHML_TAGS),
    clean_content_tags={"script", "style"},
    attributes={
        "a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"},
        "h1": {"id"}, "h2": {"id"}, "h3": {"id"}, "h4": {"id"}, "h5": {"id"}, "h6": {"id"},
        "input": {"disabled", "checked"}, "ol": {"start"}, "details": {"open"},
        **{t: set(MATHML_ATTRIBUTES) for t in MATHML_TAGS},
    },
    tag_attribute_values={"th": {"style": set(_ALIGN)}, "td": {"style": set(_ALIGN)},
                          "input": {"type": {"checkbox"}}},
    allowed_classes={t: set(c) for t, c in MARKDOWN_CLASSES.items()},
    attribute_filter=_feedback_attribute,
    url_schemes={"http", "https", "mailto", "data"},
    link_rel="noopener noreferrer nofollow",
    id_prefix=ID_PREFIX,
    strip_comments=True,
)

_REPORT = nh3.Cleaner(
    tags=set(REPORT_TAGS),
    clean_content_tags={"script", "style"},
    attributes={
        "a": {"href"}, "td": {"data-label", "data-v"}, "th": {"scope"}, "details": {"open"},
        "svg": {"viewBox", "width", "height", "role", "aria-label"}, "rect": {"x", "y", "width", "height"},
        "text": {"x", "y", "text-anchor"}, "line": {"x1", "y1", "x2", "y2", "stroke"},
    },
    tag_attribute_values={t: {"id": set(REPORT_IDS)} for t in ("section", "div", "h2")},
    allowed_classes={t: set(c) for t, c in REPORT_CLASSES.items()},
    attribute_filter=_report_attribute,
    url_schemes={"http", "https", "mailto"},
    link_rel=None,
    strip_comments=True,
)


_ANY_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)([^>]*)>")
_ATTRIBUTE = re.compile(r'\s+([^\s=>/]+)(?:="([^"]*)")?')
_VOID = frozenset({"br", "hr", "img", "input"})
_RELATIVE_SIZE = frozenset({"em", "ex", "%", "mu", None})
_SHRINKING_LEVEL = re.compile(r"\+?\d{1,3}")


def _size_factor(value: str) -> float | None:
    """The factor a ``mathsize`` value scales the text around it by, or None when it is not a
    positive relative size (an absolute ``px``/``pt`` size, a keyword, a negative number)."""
    m = _LENGTH.fullmatch(value.strip())
    if m is None or m.group(2) not in _RELATIVE_SIZE:
        return None
    factor = float(m.group(1)) * _PER_EM[m.group(2)]
    return factor if factor > 0 else None


def _bounded_tag(name: str, attributes: str, scale: float) -> tuple[str, float]:
    """The start tag of MathML element ``name`` without the size attributes that would scale its
    text past :data:`MAX_MATH_SCALE` (or enlarge it through ``scriptlevel``), and its text's scale."""
    kept = []
    for m in _ATTRIBUTE.finditer(attributes):
        attr, value = m.group(1), m.group(2) or ""
        if attr == "mathsize":
            factor = _size_factor(value)
            if factor is None or scale * factor > MAX_MATH_SCALE:
                continue
            scale *= factor
        elif attr == "scriptlevel" and not _SHRINKING_LEVEL.fullmatch(value.strip()):
            continue
        kept.append(m.group(0))
        if name == "math" and attr == "display" and value.strip().lower() == "block":
            kept.append(' tabindex="0"')  # a displayed formula wider than the page scrolls: by keyboard too
    return f"<{name}{''.join(kept)}>", scale


def bounded_math(html: str) -> str:
    """``html`` (a sanitised fragment: every ``<`` of it opens a tag) with every formula's sizes
    bounded as a whole: along any path from a ``<math>`` inward, the ``mathsize`` factors multiply
    to at most :data:`MAX_MATH_SCALE` (a factor that would pass it, or an absolute size, is
    dropped), ``scriptlevel`` only shrinks (a negative level is dropped), and an HTML element inside
    a formula is dropped, its text kept. A displayed formula (``display="block"``), which the page
    lets scroll sideways when it is wider than the text, can take the keyboard's focus
    (``tabindex="0"``), so that a keyboard scrolls it too. One pass over the fragment's tags."""
    if "<math" not in html:
        return html
    out: list[str] = []
    stack: list[tuple[str, float, bool]] = []  # the elements open inside a formula: name, scale, kept
    opened: dict[str, int] = {}  # how many of each name the stack holds
    pos = 0
    for m in _ANY_TAG.finditer(html):
        out.append(html[pos:m.start()])
        pos = m.end()
        closing, name, attributes = m.group(1) == "/", m.group(2).lower(), m.group(3)
        if not stack and name != "math":
            out.append(m.group(0))
        elif closing:
            while opened.get(name):  # (a sanitised fragment closes what it opens, innermost first)
                open_name, _, kept = stack.pop()
                opened[open_name] -= 1
                if kept:
                    out.append(f"</{open_name}>")
                if open_name == name:
                    break
        elif name in _VOID:
            continue  # (an HTML element inside a formula: dropped, its text kept; this one has none)
        else:
            kept = name in MATHML_TAGS  # an HTML element inside a formula: dropped, its text kept
            scale = stack[-1][1] if stack else 1.0
            if kept:
                tag, scale = _bounded_tag(name, attributes, scale)
                out.append(tag)
            stack.append((name, scale, kept))
            opened[name] = opened.get(name, 0) + 1
    out.append(html[pos:])
    return "".join(out)


def feedback_fragment(html: str) -> str:
    """The HTML of one Markdown cell or comment of a feedback page (Markdown's HTML with MathML),
    with only what :data:`MARKDOWN_TAGS`, :data:`MATHML_TAGS` and their attributes allow, and every
    formula's sizes bounded as a whole (:func:`bounded_math`)."""
    return bounded_math(_FEEDBACK.clean(html))


def report_fragment(html: str) -> str:
    """The body of the class report, with only the report's own elements, ids and classes."""
    return _REPORT.clean(html)

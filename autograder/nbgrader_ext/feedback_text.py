"""Text of a feedback page rendered to HTML within a size cap and a time budget per notebook.

A Markdown cell or an instructor's comment becomes HTML here, in three steps: each formula outside
code (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) to MathML (latex2mathml), the Markdown to HTML
(nbconvert's renderer, which inlines pasted attachments; the formulas reach it as placeholders and
are put back afterwards), and the result through the allow-list sanitiser
(:func:`autograder.outputs.sanitise.feedback_fragment`).

This runs in the instructor's process, outside the sandbox, on text a student chose: its cost is
bounded per notebook. A :class:`Budget` is made for each feedback page; every student cell spends
from it. A formula longer than :data:`MAX_FORMULA_CHARS`, or one met after the notebook's
formulas reached :data:`MAX_MATH_CHARS` characters or the page's time reached
:data:`RENDER_SECONDS`, is shown as its TeX in ``<code>``; a cell longer than
:data:`MAX_MARKDOWN_CHARS`, nested deeper than :data:`MAX_MARKDOWN_DEPTH`, or met after the
budget's time was spent is shown as plain, escaped text in ``<pre>``. Each such cell starts with
a one-line note saying why. The course's own cells (the same for every student) are rendered once
per process and spend nothing.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from latex2mathml.converter import convert

from autograder.outputs.sanitise import feedback_fragment

#: A formula (the TeX between its delimiters) longer than this is shown as TeX, not converted.
MAX_FORMULA_CHARS = 5_000
#: Of one notebook's student text, at most this many characters of TeX are converted to MathML.
MAX_MATH_CHARS = 100_000
#: A student cell (or comment) longer than this is shown as plain text, not rendered as Markdown.
MAX_MARKDOWN_CHARS = 200_000
#: A student cell whose lines open more than this many block quotes or list levels is shown as plain text.
MAX_MARKDOWN_DEPTH = 32
#: Seconds one notebook's feedback page may spend rendering student text; once spent, what is
#: left is shown as plain text (formulas as TeX).
RENDER_SECONDS = 2.0

_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.S)
# where a formula may open: "$$", "$" (not after a backslash or "$", not before a space or "$"), "\\[", "\\("
_OPENER = re.compile(r"\$\$|(?<![\\$])\$(?![\s$])|\\\[|\\\(")
# where an inline "$" formula may close: not after a space or a backslash, not before a digit
_DOLLAR_CLOSER = re.compile(r"(?<![\\\s])\$(?!\d)")
_TAG = re.compile(r"(<[^>]*>)")
_XMLNS = re.compile(r'\s+xmlns="http://www\.w3\.org/1998/Math/MathML"')
# what opens a nesting level at the start of a line: ">" (a quote), or indentation before a list marker
_NESTING = re.compile(r"^((?:[ \t]*>)*)([ \t]*)(?:[-+*]|\d{1,9}[.)])?", re.M)


@dataclass
class Budget:
    """What one notebook's feedback page may still spend on student text.

    ``clock`` is injectable for tests; ``notes`` collects why anything was shown as text.
    """

    seconds: float = RENDER_SECONDS
    math_chars: int = MAX_MATH_CHARS
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    def out_of_time(self) -> bool:
        """Whether the page's time is spent."""
        return self.clock() - self.started > self.seconds


def _code(tex: str) -> str:
    return f"<code>{html.escape(tex)}</code>"


def _formulas(text: str):
    """``(start, end, tex, block)`` of each formula of ``text``, left to right: ``$$...$$``,
    ``$...$`` (opened and closed as :data:`_OPENER` and :data:`_DOLLAR_CLOSER` say), ``\\[...\\]``
    and ``\\(...\\)``, each holding at least one character, the first closer ending it. Linear in
    ``len(text)`` (times a logarithm): each closer is looked up among the closers' positions, so a
    text of many unclosed ``$`` is not read again from each of them (as a lazy regular expression would).
    """
    closers = {"$$": [m.start() for m in re.finditer(r"(?=\$\$)", text)],
               "$": [m.start() for m in _DOLLAR_CLOSER.finditer(text)],
               "\\[": [m.start() for m in re.finditer(r"\\\]", text)],
               "\\(": [m.start() for m in re.finditer(r"\\\)", text)]}
    pos = 0
    while (m := _OPENER.search(text, pos)) is not None:
        opener, i = m.group(0), m.start()
        size = len(opener)
        at = closers[opener]
        k = bisect.bisect_left(at, i + size + 1)  # the content holds at least one character
        if k == len(at):
            pos = i + 1
            continue
        j = at[k]
        yield i, j + (1 if opener == "$" else 2), text[i + size : j], opener in ("$$", "\\[")
        pos = j + (1 if opener == "$" else 2)


def _mathml(source: str, tex: str, block: bool, budget: Budget | None, skipped: list[str]) -> str:
    tex = tex.strip()
    if len(tex) > MAX_FORMULA_CHARS:
        skipped.append(f"a formula of {len(tex):,} characters (more than {MAX_FORMULA_CHARS:,})")
        return _code(source)
    if budget is not None:
        if budget.math_chars < len(tex):
            skipped.append(f"formulas past the first {MAX_MATH_CHARS:,} characters of TeX in this notebook")
            return _code(source)
        if budget.out_of_time():
            skipped.append(f"formulas met after this notebook's {RENDER_SECONDS:g} s for rendering were spent")
            return _code(source)
        budget.math_chars -= len(tex)
    try:
        out = convert(tex, display="block" if block else "inline")
    except Exception:  # RecursionError too: any TeX the converter cannot read is shown as its source
        return _code(source)
    return _XMLNS.sub("", out.replace("\n", " "), count=1)


def _with_mathml(text: str, budget: Budget | None, skipped: list[str], held: _Held) -> str:
    out, pos = [], 0
    for start, end, tex, block in _formulas(text):
        out += [text[pos:start], held.hold(_mathml(text[start:end], tex, block, budget, skipped))]
        pos = end
    out.append(text[pos:])
    return "".join(out)


class _Held:
    """HTML held out of the Markdown renderer: each piece stands in the text as a placeholder of
    letters and digits (a random nonce, so a student cannot write one), which Markdown leaves alone;
    :meth:`restore` puts the pieces back into the rendered HTML's text (a placeholder that ended up
    inside a tag, in a heading's id, is dropped). So the renderer reads the short source, not the
    MathML, which can be ten times longer."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(8)
        self.pieces: list[str] = []
        self._token = re.compile(f"SAMATH{self.nonce}N([0-9]+)E")

    def hold(self, piece: str) -> str:
        self.pieces.append(piece)
        return f"SAMATH{self.nonce}N{len(self.pieces) - 1}E"

    def restore(self, rendered: str) -> str:
        if not self.pieces:
            return rendered
        parts = _TAG.split(rendered)  # text, tag, text, tag, ...
        for i, part in enumerate(parts):
            parts[i] = self._token.sub((lambda m: self.pieces[int(m.group(1))]) if i % 2 == 0 else "", part)
        return "".join(parts)


def _math_held(markdown: str, budget: Budget | None) -> tuple[str, _Held, list[str]]:
    """``markdown`` with each formula outside code held out as its MathML (or as TeX in ``<code>``
    where a cap or the ``budget`` stops it), and why any formula was left as TeX (no repeats)."""
    skipped: list[str] = []
    held = _Held()
    parts = _CODE.split(markdown)
    for i in range(0, len(parts), 2):
        parts[i] = _with_mathml(parts[i], budget, skipped, held)
    return "".join(parts), held, list(dict.fromkeys(skipped))


@functools.lru_cache(maxsize=4096)
def _course_math(markdown: str) -> tuple[str, _Held]:
    text, held, _skipped = _math_held(markdown, None)
    return text, held


def render_course(markdown: str, to_html: Callable[[str], str]) -> str:
    """One of the course's own cells as sanitised HTML; its math (the same for every student) is
    converted once per process, and spends no budget."""
    text, held = _course_math(markdown)
    return feedback_fragment(held.restore(to_html(text)))


def nesting_depth(markdown: str) -> int:
    """The most block quotes and list levels (two columns of indentation each) any line opens."""
    deepest = 0
    for m in _NESTING.finditer(markdown):
        quotes, indent = m.group(1).count(">"), len(m.group(2).expandtabs(4))
        deepest = max(deepest, quotes + indent // 2)
    return deepest


def _note(text: str) -> str:
    return f'<p><em>Feedback page: {html.escape(text)}.</em></p>'


def plain(text: str, why: str) -> str:
    """``text`` shown as it was typed (escaped, in ``<pre>``), after a one-line note saying ``why``."""
    return _note(f"shown as plain text: {why}") + f"<pre>{html.escape(text)}</pre>"


def render_student(markdown: str, to_html: Callable[[str], str], budget: Budget) -> str:
    """One student cell or comment as sanitised HTML, within ``budget``.

    Parameters
    ----------
    markdown : str
        The text (a written answer or a comment), ``n`` characters.
    to_html : callable
        Markdown to HTML, e.g. nbconvert's renderer for this cell (formulas reach it as
        placeholders, put back as MathML afterwards).
    budget : Budget
        The notebook's budget, spent by this call.
    """
    if len(markdown) > MAX_MARKDOWN_CHARS:
        return plain(markdown, f"it has {len(markdown):,} characters, more than the {MAX_MARKDOWN_CHARS:,} "
                               "a feedback page renders")
    if (depth := nesting_depth(markdown)) > MAX_MARKDOWN_DEPTH:
        return plain(markdown, f"it nests {depth} levels of quotes or lists, more than {MAX_MARKDOWN_DEPTH}")
    if budget.out_of_time():
        return plain(markdown, f"this notebook's {RENDER_SECONDS:g} s for rendering written text were spent")
    text, held, skipped = _math_held(markdown, budget)
    note = _note("shown as TeX: " + "; ".join(skipped)) if skipped else ""
    try:
        rendered = held.restore(to_html(text))
    except RecursionError:
        return plain(markdown, "its Markdown is nested too deeply to render")
    return feedback_fragment(note + rendered)

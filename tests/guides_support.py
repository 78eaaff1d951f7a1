"""The README and the guides, read as the tests of the documentation read them.

A *guide* is every Markdown file of ``docs/`` and the students' guide, ``student/START_HERE.md`` (the
bundle's ``START_HERE.md``). What the documentation names as code is what a reader types or looks
for: inline code spans and fenced code blocks.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
STUDENT_GUIDE = ROOT / "student" / "START_HERE.md"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", flags=re.M | re.S)
_SPAN = re.compile(r"(`+)(.+?)\1", flags=re.S)
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#* *$", flags=re.M)


def guides() -> list[Path]:
    """Every guide: ``docs/*.md`` and the students' guide."""
    return [*sorted((ROOT / "docs").glob("*.md")), STUDENT_GUIDE]


def documents() -> list[Path]:
    """The README and every guide."""
    return [README, *guides()]


def name(path: Path) -> str:
    """The document's path from the repository root, as a message names it."""
    return path.relative_to(ROOT).as_posix()


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def code(markdown: str) -> list[str]:
    """The code of one document: each fenced block, then each inline span outside them."""
    blocks = [m.group(1) for m in _FENCE.finditer(markdown)]
    prose = _FENCE.sub("", markdown)
    return blocks + [m.group(2).strip() for m in _SPAN.finditer(prose)]


def prose(markdown: str) -> str:
    """The document without its code (fenced blocks and inline spans)."""
    return _SPAN.sub("", _FENCE.sub("", markdown))


def links(markdown: str) -> list[str]:
    """The target of every Markdown link (images excluded) in the document's prose."""
    return _LINK.findall(prose(markdown))


def anchor(heading: str) -> str:
    """The anchor GitHub (and most Markdown renderers) give a heading: lower case, punctuation
    dropped, spaces as hyphens; inline markup (``*``, backticks) does not count."""
    plain = re.sub(r"[`*_]", "", heading).strip().lower()
    kept = "".join(c for c in plain if c in " -" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading's anchor in the document (code blocks, where ``#`` is a comment, excluded)."""
    return {anchor(h) for h in _HEADING.findall(_FENCE.sub("", markdown))}

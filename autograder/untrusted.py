"""Everything a submission hands the grader besides code: folder names, files, text.

None of it is trusted. Folder names must be plain ids; files are read only if they are regular
files (never through a symbolic link, never a FIFO or device); text that an HTML renderer will
see (a written answer, a grading note) is neutralised so that no tag, comment or autolink
survives, while every visible character stays.
"""

from __future__ import annotations

import base64
import binascii
import errno
import html
import os
import re
import stat
from pathlib import Path

#: Student and assignment ids: what nbgrader, a spreadsheet and an HTML page all take literally.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

#: A submitted notebook larger than this is not read (a real one is well under 1 MiB).
MAX_NOTEBOOK_BYTES = 32 << 20
MAX_TIMESTAMP_BYTES = 200

#: Pasted images kept in written answers (never SVG, which can carry script).
ATTACHMENT_TYPES = ("image/png", "image/jpeg", "image/gif")
ATTACHMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,127}")


class Refused(ValueError):
    """A file or folder the grader will not read; the message says why, in one line."""


def id_problem(name: str) -> str | None:
    """Why ``name`` is not acceptable as a student or assignment id, or ``None`` when it is."""
    if ID_PATTERN.fullmatch(name):
        return None
    return ("it may only hold letters, digits, '.', '_' and '-' (at most 64, starting with a letter or "
            "digit), so that no gradebook, spreadsheet or web page can misread it")


def entry_problem(path: Path, want: str) -> str | None:
    """Why ``path`` is not a real directory (``want="dir"``) or regular file (``"file"``), never following links."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if want == "dir" and not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if want == "file" and not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    return None


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes; else :class:`Refused`.

    Opened with ``O_NOFOLLOW | O_NONBLOCK``, so a symbolic link is refused and a FIFO cannot block.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("it is a symbolic link") from None
        raise Refused(f"it cannot be opened ({os.strerror(exc.errno or 0)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("it is not a regular file")
        if st.st_size > limit:
            raise Refused(f"it is larger than {limit >> 20 or limit} {'MiB' if limit >> 20 else 'bytes'}")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise Refused("it grew while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


# a "<" that an HTML or Markdown parser could take as the start of a tag, comment, declaration,
# processing instruction or autolink
_MARKUP_START = re.compile(r"<(?=[A-Za-z/!?])")
# a link's destination: inline ``](dest`` or a reference definition ``[id]: dest``
_LINK_DESTINATION = re.compile(r"(\]\(\s*|^[ ]{0,3}\[[^\]\n]+\]:[ \t]*)(\S+)", re.MULTILINE)
_SCRIPT_SCHEMES = ("javascript:", "vbscript:", "data:", "livescript:")
# an image ("![alt](dest)", "![alt][ref]", "![ref]"), except one pasted into the answer
# ("attachment:") or inlined ("data:image/"): any other destination is fetched when the page
# shows, from wherever it points (a tracking pixel in the instructor's browser)
_FETCHED_IMAGE = re.compile(r"!\[(?![^\]\n]*\]\(\s*<?\s*(?:attachment:|data:image/))")


def _as_browser_reads(url: str) -> str:
    """``url`` as a browser would take its scheme after Markdown and HTML decoding: character
    references and backslash escapes resolved (repeatedly), whitespace and controls removed."""
    previous = None
    while previous != url:
        previous, url = url, html.unescape(url).replace("\\", "")
    return re.sub(r"[\x00-\x20\x7f]", "", url).lstrip("<").lower()


def _link(m: re.Match) -> str:
    target = _as_browser_reads(m.group(2))
    if target.startswith(_SCRIPT_SCHEMES) and not target.startswith("data:image/"):
        return m.group(1) + "#blocked-link" + (")" if m.group(2).endswith(")") else "")
    return m.group(0)


def neutralise_markup(text: str) -> str:
    """``text`` with nothing an HTML or Markdown renderer would turn into markup, script or a fetch:
    :func:`disarm_markup` of :func:`link_outside_images`."""
    return disarm_markup(link_outside_images(text))


def link_outside_images(text: str) -> str:
    """``text`` with every image that is not pasted into the answer (``attachment:``) or inlined
    (``data:image/``) turned into a link to where it points: nothing is fetched until it is clicked."""
    return _FETCHED_IMAGE.sub("[", text)


def disarm_markup(text: str) -> str:
    """``text`` with every ``<`` that could open a tag, comment or autolink followed by a space
    (``<img`` becomes ``< img``, shown as typed; inside math ``a<b`` still reads ``a < b``), and
    every link whose destination would run script (``javascript:``, also when spelled with
    character references, escapes or whitespace) pointing nowhere instead."""
    return _MARKUP_START.sub("< ", _LINK_DESTINATION.sub(_link, text))


def one_line(text: object, limit: int = 300) -> str:
    """Untrusted text quoted in a grading note: on one line, at most ``limit`` characters.

    Notes are neutralised where they are rendered (:func:`note_markdown`), once.
    """
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def note_markdown(note: str) -> str:
    """One grading note as a Markdown list item that renders as the text it says."""
    return "- " + neutralise_markup(one_line(note, 2000))


def safe_attachments(attachments: object) -> tuple[dict, list[str]]:
    """The pasted images of a written answer that are safe to keep, and a note for each one dropped."""
    if not isinstance(attachments, dict):
        return {}, ([] if attachments is None else ["attachments that were not a mapping were dropped"])
    kept, dropped = {}, []
    for name, bundle in attachments.items():
        if not (isinstance(name, str) and ATTACHMENT_NAME.fullmatch(name) and isinstance(bundle, dict)):
            dropped.append(f"an attachment with an unusable name was dropped ({one_line(repr(name), 60)})")
            continue
        good = {}
        for mime, data in bundle.items():
            if mime in ATTACHMENT_TYPES and isinstance(data, str):
                try:
                    base64.b64decode(data.replace("\n", ""), validate=True)
                except (binascii.Error, ValueError):
                    continue
                good[mime] = data
        if good:
            kept[name] = good
        else:
            dropped.append(f"the attachment {name} was dropped (only PNG, JPEG and GIF images are kept)")
    return kept, dropped

"""Everything a submission hands the grader besides code: folder names, files, text.

None of it is trusted. Folder names must be plain ids; files are read only if they are regular
files (never through a symbolic link, never a FIFO or device); text that an HTML renderer will
see (a written answer, a grading note) is neutralised so that no tag, comment or autolink
survives, while every visible character stays.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import errno
import html
import json
import os
import re
import stat
from pathlib import Path

from autograder.course.ids import ID_PATTERN, id_problem  # noqa: F401 - the grader has long imported them from here
from autograder.errors import RefusedFile
from autograder.intake.stored_outputs import MAX_FILE_BYTES, MAX_KEPT_BYTES, TooIntricate, without_outputs

#: A submitted notebook file larger than this is not read; of what is read, only
#: :data:`MAX_KEPT_BYTES` may remain once the stored outputs are dropped (:mod:`autograder.intake.stored_outputs`).
MAX_NOTEBOOK_BYTES = MAX_FILE_BYTES
#: Containers nested deeper than this in a notebook's JSON are dropped (a real one nests about 5 deep).
MAX_JSON_DEPTH = 64
MAX_TIMESTAMP_BYTES = 200

#: Pasted images kept in written answers (never SVG, which can carry script).
ATTACHMENT_TYPES = ("image/png", "image/jpeg", "image/gif")
ATTACHMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,127}")


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
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes; else :class:`RefusedFile`.

    Opened with ``O_NOFOLLOW | O_NONBLOCK``, so a symbolic link is refused and a FIFO cannot block.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RefusedFile("it is a symbolic link") from None
        raise RefusedFile(f"it cannot be opened ({os.strerror(exc.errno or 0)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedFile("it is not a regular file")
        if st.st_size > limit:
            raise RefusedFile(f"it is larger than {limit >> 20 or limit} {'MiB' if limit >> 20 else 'bytes'}")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise RefusedFile("it grew while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


class NotANotebook(ValueError):
    """A file that was read but is not a notebook; the message says why, in one line."""


def read_notebook(path: Path) -> tuple[list[dict], list[str]]:
    """The cells of a handed-in notebook as plain, storable data, and a note per repair.

    The file is read as :func:`read_regular` reads (at most :data:`MAX_NOTEBOOK_BYTES`); its
    stored outputs are dropped before anything is decoded (:func:`~autograder.intake.stored_outputs.without_outputs`),
    and what remains may be at most :data:`MAX_KEPT_BYTES`. Then :func:`parse_notebook`.

    Raises
    ------
    RefusedFile
        The file was not read (a link, not a regular file, too large, too intricate).
    NotANotebook
        It was read but holds no notebook.
    """
    raw = read_regular(path, MAX_NOTEBOOK_BYTES)
    try:
        kept, _dropped = without_outputs(raw)
    except TooIntricate as exc:
        raise RefusedFile(str(exc)) from None
    del raw
    if len(kept) > MAX_KEPT_BYTES:
        raise RefusedFile(f"without its stored outputs it is still larger than {MAX_KEPT_BYTES >> 20} MiB")
    return parse_notebook(kept)


def parse_notebook(data: bytes) -> tuple[list[dict], list[str]]:
    """The cells (dicts) of a notebook's bytes, every string storable, and a note per repair.

    Bytes that are not UTF-8 (including overlong forms) become U+FFFD, a byte-order mark is
    ignored, a key given twice keeps its last value (as Jupyter reads it), numbers too large for
    a float become infinite, ``NaN`` and ``Infinity`` become null, lone surrogates and NUL
    characters become U+FFFD, containers nested deeper than :data:`MAX_JSON_DEPTH` are dropped,
    and so are the outputs of every cell. Nothing of it is graded but the cells' sources.

    Parameters
    ----------
    data : bytes, shape (n,)
        The notebook file without its stored outputs.

    Raises
    ------
    NotANotebook
        It is not JSON, or holds no list of cells.
    """
    notes: list[str] = []
    text, undecodable = _decoded(data)
    if undecodable:
        notes.append(f"The notebook held {undecodable} byte sequence(s) that are not UTF-8; each was read as "
                     "\N{REPLACEMENT CHARACTER}.")
    repeated = [0]
    try:
        doc = json.loads(text, strict=False, object_pairs_hook=lambda pairs: _object(pairs, repeated),
                         parse_int=_number, parse_constant=lambda _name: None)
    except RecursionError:
        raise NotANotebook("it is JSON nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise NotANotebook(f"it is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if repeated[0]:
        notes.append(f"The notebook held {repeated[0]} JSON object(s) with a key given twice; the last value was "
                     "used, as Jupyter does.")
    counts = {"chars": 0, "deep": 0}
    if _MAYBE_UNSTORABLE.search(text) or _too_deep(doc):
        doc = _storable(doc, 0, counts)
    if counts["chars"]:
        notes.append(f"The notebook held {counts['chars']} character(s) that cannot be stored (lone surrogates, "
                     "NUL); each was read as \N{REPLACEMENT CHARACTER}.")
    if counts["deep"]:
        notes.append(f"The notebook held {counts['deep']} value(s) nested more than {MAX_JSON_DEPTH} levels "
                     "deep; they were ignored.")
    return _cells(doc, notes), notes


def _decoded(data: bytes) -> tuple[str, int]:
    """``data`` as text (a UTF-8 byte-order mark dropped) and how many invalid sequences became U+FFFD."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        return text, text.count("\ufffd") - data.count("\ufffd".encode())


def _object(pairs: list[tuple[str, object]], repeated: list[int]) -> dict:
    """A JSON object as a dict (last value of a repeated key); a cell's outputs are dropped."""
    out = dict(pairs)
    if len(out) < len(pairs):
        repeated[0] += 1
    if "cell_type" in out and "outputs" in out:
        out["outputs"] = []
    return out


def _number(text: str) -> int | float:
    """A JSON integer; one of more than 100 digits as a float (Python refuses to parse 4300)."""
    return int(text) if len(text) <= 100 else float(text)


_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")
# how a lone surrogate or a NUL can get into decoded JSON text: an escape, or a NUL itself
_MAYBE_UNSTORABLE = re.compile(r"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)|\x00")


def _too_deep(doc: object) -> bool:
    """Whether any container in ``doc`` is nested :data:`MAX_JSON_DEPTH` levels deep or more."""
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth >= MAX_JSON_DEPTH:
            return True
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def storable(text: str) -> str:
    """``text`` with every lone surrogate and NUL character replaced by U+FFFD (so it can be written)."""
    return _UNSTORABLE.sub("\ufffd", text)


def _storable(value: object, depth: int, counts: dict[str, int]) -> object:
    """``value`` with every string (keys too) storable as UTF-8 text and nothing nested too deep."""
    if isinstance(value, str):
        if value.isascii() and "\x00" not in value:
            return value
        value, n = _UNSTORABLE.subn("\ufffd", value)
        counts["chars"] += n
        return value
    if isinstance(value, dict | list):
        if depth >= MAX_JSON_DEPTH:
            counts["deep"] += 1
            return None
        if isinstance(value, list):
            return [_storable(v, depth + 1, counts) for v in value]
        return {_storable(k, depth + 1, counts): _storable(v, depth + 1, counts) for k, v in value.items()}
    return value


def _cells(doc: object, notes: list[str]) -> list[dict]:
    """The cells of a parsed notebook; a note if its format is not nbformat 4."""
    if not isinstance(doc, dict):
        raise NotANotebook(f"it is JSON but a {type(doc).__name__}, not a notebook")
    cells = doc.get("cells")
    if not isinstance(cells, list):
        if "worksheets" in doc:
            raise NotANotebook("it is an nbformat 3 notebook; this course reads nbformat 4 (open and save it "
                               "in a current Jupyter)")
        raise NotANotebook("it has no list of cells")
    version = doc.get("nbformat")
    if version != 4:
        notes.append(f"The notebook declares nbformat {one_line(repr(version), 40)}, not 4; its cells were read "
                     "as nbformat 4.")
    kept = [c for c in cells if isinstance(c, dict)]
    if len(kept) < len(cells):
        notes.append(f"The notebook's list of cells held {len(cells) - len(kept)} entries that are not cells; "
                     "they were ignored.")
    return kept


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
    (``data:image/``) turned into a link to where it points: nothing is fetched until it is clicked.
    Repeated until nothing changes: in ``!![x](u)`` dropping one ``!`` leaves another image."""
    while (linked := _FETCHED_IMAGE.sub("[", text)) != text:
        text = linked
    return text


# an inline image of a pasted attachment, and the attachment's name as written
_ATTACHED_IMAGE = re.compile(r"!\[(?=[^\]\n]*\]\(\s*<?\s*attachment:([^)\s>]*))")
# an attachment name that Markdown renderers pass on unchanged (no escaping, no percent-encoding)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def link_missing_attachments(text: str, names: set[str]) -> str:
    """``text`` with every image of an attachment that is not among ``names`` (or whose name a
    renderer would rewrite) turned into a link: nbconvert stops on an image of a missing attachment,
    which would cost the student the feedback page."""
    return _ATTACHED_IMAGE.sub(
        lambda m: m.group(0) if m.group(1) in names and _PLAIN_NAME.fullmatch(m.group(1)) else "[", text)


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

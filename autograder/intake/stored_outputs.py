"""A notebook's stored outputs are never graded: cut them out of the file's bytes before it is parsed.

A plot or a long printout can make an honest notebook tens of megabytes, nearly all of it in the
``outputs`` of its code cells. :func:`without_outputs` finds each code cell's ``"outputs": [...]``
by scanning the bytes (strings are skipped whole by a regular expression, so a big image costs one
step) and replaces it by ``[]``; only what remains is decoded, parsed and held to a size cap
(:data:`MAX_KEPT_BYTES`). The scan needs no valid UTF-8 and parses nothing: anything it cannot
follow (a string that never ends, unbalanced brackets) is left for the JSON reader to name.

This module uses the standard library only: the student's ``hand_in.py`` imports it too, to warn
before hand-in about a notebook that grading would not read.
"""

from __future__ import annotations

import re

#: a submitted file larger than this is not read at all (outputs included)
MAX_FILE_BYTES = 256 << 20
#: what remains of a notebook without its outputs may be at most this large (a real one is well
#: under 1 MiB; pasted images in written answers count)
MAX_KEPT_BYTES = 16 << 20

#: the scan stops (and the file is not read) after this many strings and brackets: a real notebook
#: has a few dozen per cell, a flood of tiny strings or nested empty lists would cost seconds
MAX_TOKENS = 4_000_000

# a JSON string, escapes included (unrolled, so it never backtracks more than once; no possessive
# quantifiers, which Python 3.10 lacks), and a run of anything but strings and brackets
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_OTHER = re.compile(rb'[^"\[\]{}]*')
_CELL = (ord("{"), ord("["), ord("{"))  # the root object, its cells array, one cell
_OPEN = (ord("["), ord("{"))


class TooIntricate(ValueError):
    """The file holds more than :data:`MAX_TOKENS` strings and brackets; the message says so in one line."""


class _Scan:
    """Strings and brackets of ``raw`` one at a time, at most :data:`MAX_TOKENS` of them."""

    def __init__(self, raw: bytes):
        self.raw, self.steps = raw, 0

    def next(self, pos: int) -> tuple[int, int]:
        """(index, byte) of the next bracket at or after ``pos``, strings skipped whole; (len, 0) at
        the end or at a string that never ends."""
        raw = self.raw
        while True:
            pos = _OTHER.match(raw, pos).end()
            if pos >= len(raw):
                return len(raw), 0
            self.steps += 1
            if self.steps > MAX_TOKENS:
                raise TooIntricate(f"it holds more than {MAX_TOKENS:,} strings and brackets")
            if raw[pos] != 0x22:  # '"'
                return pos, raw[pos]
            string = _STRING.match(raw, pos)
            if string is None:
                return len(raw), 0
            pos = string.end()


def without_outputs(raw: bytes) -> tuple[bytes, int]:
    """``raw`` (a notebook's bytes) with every cell's ``outputs`` array emptied, and the number of
    bytes removed.

    Parameters
    ----------
    raw : bytes, shape (n,)
        The file as handed in: any bytes at all.

    Returns
    -------
    kept : bytes, shape (m,), m <= n + 2 * cells
        The same bytes with each ``"outputs": [...]`` of a cell (an object in an array in the root
        object) replaced by ``"outputs": []``. Bytes the scan cannot follow are kept as they are.
    dropped : int
        How many bytes of outputs were removed.

    Raises
    ------
    TooIntricate
        After :data:`MAX_TOKENS` strings and brackets (a few seconds of work).
    """
    parts: list[bytes] = []
    stack: list[int] = []
    scan = _Scan(raw)
    kept_from = dropped = 0
    pos, ch = scan.next(0)
    while ch:
        if ch == 0x5B and tuple(stack) == _CELL and _is_outputs_key(raw[max(0, pos - 256) : pos]):
            end = _end_of_array(scan, pos)
            if end is None:
                break
            parts += [raw[kept_from:pos], b"[]"]
            dropped += end - pos - 2
            kept_from = end
            pos, ch = scan.next(end)
            continue
        if ch in _OPEN:
            stack.append(ch)
        elif stack:
            stack.pop()
        pos, ch = scan.next(pos + 1)
    parts.append(raw[kept_from:])
    return b"".join(parts), dropped


def _is_outputs_key(before: bytes) -> bool:
    """Whether ``before`` (the bytes before a "[") ends with the key ``"outputs":``, whose opening
    quote is not inside a longer string."""
    key = before.rstrip()
    if not key.endswith(b":"):
        return False
    key = key[:-1].rstrip()
    return key.endswith(b'"outputs"') and len(key) > 9 and key[-10] in b", \t\r\n{"


def _end_of_array(scan: _Scan, start: int) -> int | None:
    """The index just after the bracket that closes the one at ``start``, or None if it never closes."""
    depth, pos, ch = 0, start, scan.raw[start]
    while ch:
        depth += 1 if ch in _OPEN else -1
        if depth == 0:
            return pos + 1
        pos, ch = scan.next(pos + 1)
    return None


def kept_size(raw: bytes) -> int:
    """The size in bytes of what grading reads of a notebook: the file without its outputs."""
    return len(without_outputs(raw)[0])

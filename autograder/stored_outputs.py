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

#: the scan stops (and the file is not read) after this many brackets: a real notebook has a few
#: per cell and per output, a flood of nested empty lists would cost seconds
MAX_BRACKETS = 4_000_000

# a run of anything but brackets, strings taken whole: one step of the scan however long
_RUN = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.S)
# the key just before a "[": `"outputs":`, its opening quote not inside a longer string
_OUTPUTS_KEY = re.compile(rb'(?<=[,{\s])"outputs"\s*:\s*\Z')
_CELL = (ord("{"), ord("["), ord("{"))  # the root object, its cells array, one cell
_OPEN = (ord("["), ord("{"))


class TooIntricate(ValueError):
    """The file holds more brackets than :data:`MAX_BRACKETS`; the message says so in one line."""


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
        After :data:`MAX_BRACKETS` brackets (a few seconds of work).
    """
    parts: list[bytes] = []
    stack: list[int] = []
    kept_from = dropped = steps = 0
    pos = _RUN.match(raw, 0).end()
    while pos < len(raw) and raw[pos] != 0x22:  # a '"' after a run is a string that never ends
        steps += 1
        if steps > MAX_BRACKETS:
            raise TooIntricate(f"it holds more than {MAX_BRACKETS:,} brackets")
        ch = raw[pos]
        if ch == 0x5B and tuple(stack) == _CELL and _OUTPUTS_KEY.search(raw, max(0, pos - 4096), pos):
            end, used = _end_of_array(raw, pos, MAX_BRACKETS - steps)
            steps += used
            if end is None:
                break
            parts += [raw[kept_from:pos], b"[]"]
            dropped += end - pos - 2
            kept_from = end
            pos = _RUN.match(raw, end).end()
            continue
        if ch in _OPEN:
            stack.append(ch)
        elif stack:
            stack.pop()
        pos = _RUN.match(raw, pos + 1).end()
    parts.append(raw[kept_from:])
    return b"".join(parts), dropped


def _end_of_array(raw: bytes, start: int, budget: int) -> tuple[int | None, int]:
    """The index just after the bracket that closes the one at ``start`` (None if it never
    closes), and how many brackets that took."""
    depth, pos, steps = 0, start, 0
    while pos < len(raw) and raw[pos] != 0x22:
        steps += 1
        if steps > budget:
            raise TooIntricate(f"it holds more than {MAX_BRACKETS:,} brackets")
        depth += 1 if raw[pos] in _OPEN else -1
        if depth == 0:
            return pos + 1, steps
        pos = _RUN.match(raw, pos + 1).end()
    return None, steps


def kept_size(raw: bytes) -> int:
    """The size in bytes of what grading reads of a notebook: the file without its outputs."""
    return len(without_outputs(raw)[0])

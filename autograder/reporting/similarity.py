"""Suspiciously similar answers, found as MOSS finds them: token n-gram fingerprints, winnowed.

An answer (the source of one graded cell) is tokenised with Python's own tokenizer; comments,
blank lines and layout disappear, every name the answer binds or reads that is not a keyword, a
builtin, ``np``/``numpy`` or an attribute becomes ``N``, every string ``S``. Hashes of each run of
``K`` consecutive tokens are winnowed (the minimum of every window of ``W`` hashes), which keeps a
fingerprint of any shared run of ``K + W - 1`` tokens whatever surrounds it.

What everybody may legitimately share is removed before comparing: the fingerprints of the
reference solution and of the released stub, and those found in more than a fraction of the
class's answers (an idiom, not a copy). Two answers are a pair when the fingerprints left to them
overlap by at least :data:`THRESHOLD` of the smaller set and in at least :data:`MIN_SHARED`
fingerprints; pairs of one exercise that chain together form a cluster.

Answers are hostile input read in the instructor's process: an answer longer than
:data:`MAX_COMPARED_CHARS` is not compared (:func:`too_long` names it), and the class report stops
comparing a notebook's exercises once :data:`NOTEBOOK_SECONDS` are spent on it, saying which were left.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import tokenize
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

K = 5  # tokens per n-gram
W = 4  # winnowing window
THRESHOLD = 0.7  # share of the smaller fingerprint set two answers must have in common
MIN_SHARED = 4  # and in absolute numbers, so that two short answers are never a pair by chance
#: An answer with fewer fingerprints of its own (once the reference's, the stub's and the class's
#: idioms are removed) is too short to tell apart from another: a one-line idiom or a short literal
#: answer is written alike by honest students. It is not compared, and the report counts it.
MIN_FINGERPRINTS = 8
COMMON = 0.25  # fingerprints in more than this share of the answers (and more than 3) are idioms
#: An answer longer than this (characters) is not compared: no copied answer needs more, and its
#: tokens would cost the report's time (an answer may hold up to 100,000 characters).
MAX_COMPARED_CHARS = 20_000
#: Seconds the class report may spend comparing the answers of one notebook (all its exercises);
#: the exercises left when they are spent are not compared, and the report says so.
NOTEBOOK_SECONDS = 2.0

_KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"np", "numpy", "self"}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
         tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT}


def normalise(source: str) -> list[str]:
    """The answer's tokens with names, strings, comments and layout normalised away.

    Source that does not tokenise (a syntax error) falls back to its whitespace-separated words.
    """
    out: list[str] = []
    previous = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in _SKIP:
                continue
            if tok.type == tokenize.NAME:
                text = tok.string if tok.string in _KEEP or previous == "." else "N"
            elif tok.type == tokenize.STRING or tok.type in getattr(tokenize, "_FSTRING_TYPES", ()):
                text = "S"
            else:
                text = tok.string
            out.append(text)
            previous = tok.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source.split()
    return out


def fingerprints(source: str, k: int = K, w: int = W) -> set[int]:
    """Winnowed hashes of the ``k``-token runs of ``source`` (empty for fewer than ``k`` tokens)."""
    tokens = normalise(source)
    hashes = [int.from_bytes(hashlib.blake2b("\x1f".join(tokens[i : i + k]).encode(), digest_size=8).digest(), "big")
              for i in range(len(tokens) - k + 1)]
    if len(hashes) <= w:
        return set(hashes)
    return {min(hashes[i : i + w]) for i in range(len(hashes) - w + 1)}


@dataclass(frozen=True)
class Pair:
    """Two students whose answers to one exercise are alike; ``score`` in [0, 1]."""

    exercise: str
    a: str
    b: str
    score: float
    shared: int


def too_long(answers: dict[str, str]) -> list[str]:
    """The students (keys of ``answers``) whose answer is longer than :data:`MAX_COMPARED_CHARS`."""
    return sorted(s for s, src in answers.items() if len(src) > MAX_COMPARED_CHARS)


def similar_pairs(exercise: str, answers: dict[str, str], excluded: Iterable[str],
                  short: list[str] | None = None) -> list[Pair]:
    """Pairs of students (keys of ``answers``) whose answers to ``exercise`` are suspiciously alike.

    ``excluded`` holds the sources everybody may share (reference solution, released stub);
    answers equal to one of them, and answers longer than :data:`MAX_COMPARED_CHARS`, are not
    compared at all; nor are answers with fewer than :data:`MIN_FINGERPRINTS` fingerprints of their
    own (too short to tell apart), whose students go to ``short``.
    """
    answers = {s: src for s, src in answers.items() if len(src) <= MAX_COMPARED_CHARS}
    base: set[int] = set()
    skip = set()
    for source in excluded:
        base |= fingerprints(source)
        skip.add(source.strip())
    prints = {s: fingerprints(src) - base for s, src in answers.items() if src.strip() not in skip}
    counts = Counter(f for fp in prints.values() for f in fp)
    limit = max(3, int(COMMON * len(prints)))
    prints = {s: {f for f in fp if counts[f] <= limit} for s, fp in prints.items()}
    students = sorted(s for s, fp in prints.items() if len(fp) >= MIN_FINGERPRINTS)
    if short is not None:
        short += sorted(s for s in prints if s not in students)
    # only answers that share a fingerprint are compared (an index from each fingerprint to its
    # answers), not every pair of the class: the cost follows the overlaps, not the class squared
    holders: dict[int, list[str]] = {}
    for student in students:
        for f in prints[student]:
            holders.setdefault(f, []).append(student)
    common: Counter[tuple[str, str]] = Counter()
    for group in holders.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                common[a, b] += 1
    pairs = []
    for (a, b), shared in common.items():
        score = shared / min(len(prints[a]), len(prints[b]))
        if shared >= MIN_SHARED and score >= THRESHOLD:
            pairs.append(Pair(exercise, a, b, round(score, 3), shared))
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def clusters(pairs: list[Pair]) -> list[list[str]]:
    """Groups of students linked by pairs (of one exercise), largest first."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(root(x), []).append(x)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))

"""A histogram of scores as data (:func:`histogram`): its bars, its axis labels placed so that no
two overlap, and its alt text (the counts in words). The class report's template draws it as
inline SVG (the ``histogram`` macro of ``autograder/templates/class_report.html.j2``); every
coordinate here is in the figure's units (:data:`WIDTH` by :data:`HEIGHT`)."""

from __future__ import annotations

from dataclasses import dataclass

#: the figure's width, the plot's height above the axis, and the margin around the plot
WIDTH, PLOT, PAD = 300, 120, 18
#: the whole figure's height (the plot, the axis labels below it)
HEIGHT = PLOT + 2 * PAD


@dataclass(frozen=True)
class Bar:
    """One bar: its box (``x``, ``y`` its top left corner; ``width``, ``height``) and the number of
    students it stands for, written above it at (``label_x``, ``label_y``) unless it is zero."""

    x: float
    y: float
    width: float
    height: float
    count: int
    label_x: float
    label_y: float


@dataclass(frozen=True)
class Tick:
    """One label under the axis: its centre ``x`` and its text (a score, or a bin's edge)."""

    x: float
    label: str


@dataclass(frozen=True)
class Histogram:
    """One figure: ``alt`` (its title and ARIA label, the counts in words), its bars left to right
    and its axis labels; the axis runs from ``left`` to ``right`` at height ``axis_y``, its labels'
    baseline at ``tick_y``."""

    alt: str
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = PAD
    right: int = WIDTH - PAD
    axis_y: int = PLOT
    tick_y: int = PLOT + 13


def _stride(labels: list[str], spacing: float) -> int:
    """Label every ``stride``-th position so that no two labels overlap: the smallest stride whose
    spacing holds the widest label (10 px text, about 6.2 px a character, plus a gap)."""
    widest = max((len(x) for x in labels), default=1) * 6.2 + 6
    return next((k for k in (1, 2, 5, 10) if k * spacing >= widest), max(1, len(labels) - 1))


def _bins(values: list[float], top: float) -> tuple[bool, list[str], list[int]]:
    """(one bar per integer score?, each bar's label, each bar's count) of ``values`` in [0, top]:
    integer scores up to 12 get one bar per score, anything else ten bins (the last one closed)."""
    integer = top > 0 and top <= 12 and float(top).is_integer() and all(float(v).is_integer() for v in values)
    if integer:
        return (True, [f"{k:g}" for k in range(int(top) + 1)],
                [sum(1 for v in values if v == k) for k in range(int(top) + 1)])
    n = 10
    width = (top or 1.0) / n
    edges = [(i * width, (i + 1) * width) for i in range(n)]
    counts = [sum(1 for v in values if lo <= v < hi or (i == n - 1 and v >= hi)) for i, (lo, hi) in enumerate(edges)]
    return False, [f"{lo:.3g}–{hi:.3g}" for lo, hi in edges], counts


def histogram(values: list[float], top: float, title: str) -> Histogram:
    """The histogram of scores ``values`` in [0, ``top``], titled ``title`` in its alt text.

    Parameters
    ----------
    values : list[float]
        One score per student.
    top : float
        The most points there are.
    title : str
        What is counted ("scores in 03-softmax-attention").

    Returns
    -------
    Histogram
        Integer scores up to 12 get one bar per score, labelled by the score under it; otherwise
        ten bins, labelled at their edges, as many edges as fit without overlapping.
    """
    integer, label, counts = _bins(values, top)
    words = "; ".join(f"{lab} points: {c}" for lab, c in zip(label, counts, strict=True))
    alt = f"Histogram of {title} ({len(values)} students, out of {top:g}): {words}."
    bar = (WIDTH - 2 * PAD) / max(1, len(counts))
    tallest = max(counts, default=0) or 1
    bars = []
    for i, c in enumerate(counts):
        bh = (PLOT - PAD) * c / tallest
        x = PAD + i * bar
        bars.append(Bar(x + 1, PLOT - bh, bar - 2, bh, c, x + bar / 2, PLOT - bh - 3))
    if integer:  # under each bar
        ticks = [Tick(PAD + i * bar + bar / 2, lab) for i, lab in enumerate(label)][::_stride(label, bar)]
    else:  # at the bin edges
        at = [f"{i * (top or 1.0) / len(counts):.3g}" for i in range(len(counts) + 1)]
        ticks = [Tick(PAD + i * bar, lab) for i, lab in enumerate(at)][::_stride(at, bar)]
    return Histogram(alt, tuple(bars), tuple(ticks))

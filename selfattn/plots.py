"""Matplotlib figures of the course, drawn the same way in the book and the notebooks."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

__all__ = ["COLORS", "fig_to_png", "heatmap", "new_figure", "png_data_uri", "weights_bar"]

#: Colour-blind-safe palette (Okabe-Ito) used for every series.
COLORS = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "red": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "grey": "#666666",
}


def new_figure(width: float = 6.0, height: float = 3.2, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    """A white-background figure (legible on dark pages and in print) with ``ncols`` axes."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), facecolor="white", layout="constrained")
    return fig, list(np.atleast_1d(axes))


def fig_to_png(fig: Figure, dpi: int = 96) -> bytes:
    """Render ``fig`` to PNG bytes and close it (so notebooks do not display it twice)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
    plt.close(fig)
    return buf.getvalue()


def png_data_uri(png: bytes) -> str:
    """``data:`` URI of PNG bytes, for an ``<img>`` that needs no file."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def weights_bar(ax: Axes, labels: Sequence[str], weights: ArrayLike, title: str = "", highlight: int | None = None):
    """Bar chart of one row of attention weights, values printed on the bars.

    Parameters
    ----------
    labels : sequence of str, length n
    weights : array_like, shape (n,)
    highlight : int, optional
        Index of a bar drawn in the accent colour.
    """
    w = np.asarray(weights, dtype=float)
    colors = [COLORS["orange"] if i == highlight else COLORS["blue"] for i in range(len(w))]
    bars = ax.bar(range(len(w)), w, color=colors)
    ax.set_xticks(range(len(w)), labels)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("attention weight")
    ax.set_xlabel("key token")
    for rect, value in zip(bars, w, strict=True):
        ax.text(rect.get_x() + rect.get_width() / 2, value + 0.02, f"{value:.3f}", ha="center", fontsize=9)
    if title:
        ax.set_title(title)
    ax.spines[["top", "right"]].set_visible(False)


def heatmap(
    ax: Axes,
    M: ArrayLike,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    title: str = "",
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str = "viridis",
    fmt: str = "{:.2f}",
    xlabel: str = "key",
    ylabel: str = "query",
):
    """Annotated heatmap of a small matrix (rows: queries, columns: keys).

    Parameters
    ----------
    M : array_like, shape (r, c)
    row_labels : sequence of str, length r
    col_labels : sequence of str, length c
    """
    A = np.asarray(M, dtype=float)
    shown = np.where(np.isfinite(A), A, np.nan)
    im = ax.imshow(shown, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(A.shape[1]), col_labels)
    ax.set_yticks(range(A.shape[0]), row_labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    lo, hi = np.nanmin(shown) if np.isfinite(shown).any() else 0, np.nanmax(shown) if np.isfinite(shown).any() else 1
    mid = (lo + hi) / 2 if vmin is None or vmax is None else (vmin + vmax) / 2
    for (i, j), value in np.ndenumerate(A):
        text = "−∞" if value == -np.inf else fmt.format(value)
        color = "black" if not np.isfinite(value) or value > mid else "white"
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
    if title:
        ax.set_title(title)
    return im

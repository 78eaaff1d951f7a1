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

__all__ = [
    "COLORS",
    "DATAFLOW_MIN_PT",
    "DENSITY",
    "MIN_TEXT_KEY",
    "contrast_ratio",
    "dataflow_diagram",
    "fig_to_png",
    "figure_img",
    "heatmap",
    "label_color",
    "new_figure",
    "png_data_uri",
    "png_size",
    "png_text",
    "relative_luminance",
    "smallest_text_px",
    "text_weights",
    "weights_bar",
]

#: Colour-blind-safe palette (Okabe-Ito, with Paul Tol's red) used for every series; each name is the hue
#: a reader sees (tests/test_book_defects.py classifies them), so a caption can name it.
COLORS = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "red": "#CC3311",  # Paul Tol's vibrant red: reads as red (Okabe-Ito's vermillion reads orange)
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "grey": "#666666",
}


def new_figure(width: float = 6.0, height: float = 3.2, ncols: int = 1, nrows: int = 1) -> tuple[Figure, list[Axes]]:
    """A white-background figure (legible on dark pages and in print) with ``nrows`` rows of ``ncols`` axes,
    listed row by row."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), facecolor="white", layout="constrained")
    return fig, list(np.ravel(axes))


#: Figures are shown at 96 CSS pixels per inch and drawn with this many device pixels per CSS pixel,
#: so they stay sharp on high-density screens, when zoomed and in print.
DENSITY = 2


#: The PNG text key under which :func:`fig_to_png` records the figure's smallest text size, in CSS
#: pixels at the figure's own size (``png_size(png)[0] // DENSITY`` wide).
MIN_TEXT_KEY = "selfattn-min-text-px"


def _drawn_text_px(fig: Figure) -> float:
    """The smallest font size among the texts of ``fig`` as last drawn, in CSS pixels."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) * 96 / 72 if sizes else float("inf")


def smallest_text_px(fig: Figure) -> float:
    """The font size, in CSS pixels at the figure's own size, of the smallest text ``fig`` draws.

    Every visible, non-empty text counts (titles, labels, tick labels, legends, annotations), after a
    draw, so tick labels exist. A point is 96/72 CSS pixels; a figure without text gives ``inf``.
    """
    fig.draw_without_rendering()
    return _drawn_text_px(fig)


def fig_to_png(fig: Figure, dpi: int = 96 * DENSITY) -> bytes:
    """Render ``fig`` to PNG bytes and close it (so notebooks do not display it twice).

    The PNG has ``DENSITY`` pixels per CSS pixel: show it ``png_size(png)[0] // DENSITY`` wide. Its
    text chunk :data:`MIN_TEXT_KEY` holds :func:`smallest_text_px`, which the phone test scales by the
    width the page shows the figure at. The figure is drawn once, on white, at ``dpi`` (what
    ``savefig`` would draw), and its pixels go straight to a 256-colour palette: no full-colour PNG is
    encoded and decoded on the way, and the text sizes are read from that same draw.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    fig.set_dpi(dpi)
    fig.patch.set_facecolor("white")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    smallest = _drawn_text_px(fig)
    width, height = canvas.get_width_height(physical=True)
    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    plt.close(fig)
    return _palette_png(image, {MIN_TEXT_KEY: f"{smallest:.2f}"}, dpi)


def _palette_png(image, text: dict[str, str], dpi: int) -> bytes:
    """``image`` (a PIL image) as a PNG with at most 256 colours and ``text`` as its ``tEXt`` chunks.

    Median cut, no dithering: the course's figures are flat fills, lines and anti-aliased text, whose
    colours a 256-colour palette keeps to within a few levels at the edges of glyphs (on every figure
    of the book the mean difference is below 0.1 of 255 levels per channel), in a PNG about 2.5 times
    smaller than the full-colour one; this keeps each chapter page within its download budget.
    """
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    for key, value in text.items():
        info.add_text(key, value)
    palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    palette.save(out, format="PNG", pnginfo=info, dpi=(dpi, dpi))
    return out.getvalue()


def png_text(png: bytes) -> dict[str, str]:
    """The ``tEXt`` chunks of PNG bytes, as {keyword: text}."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG image")
    out, at = {}, 8
    while at + 8 <= len(png):
        length, kind = int.from_bytes(png[at:at + 4], "big"), png[at + 4:at + 8]
        if kind == b"tEXt":
            key, _, value = png[at + 8:at + 8 + length].partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        if kind == b"IEND":
            break
        at += 12 + length
    return out


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels of PNG bytes, read from the IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG image")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def figure_img(fig: Figure, alt: str) -> str:
    """``fig`` as an ``<img>`` (a ``data:`` URI, ``DENSITY`` pixels per CSS pixel) that shrinks to its column."""
    import html

    png = fig_to_png(fig)
    return (f'<img src="{png_data_uri(png)}" alt="{html.escape(alt, quote=True)}" '
            f'width="{png_size(png)[0] // DENSITY}" style="max-width:100%;height:auto">')


def png_data_uri(png: bytes) -> str:
    """``data:`` URI of PNG bytes, for an ``<img>`` that needs no file."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def weights_bar(ax: Axes, labels: Sequence[str], weights: ArrayLike, title: str = "", highlight: int | None = None):
    """Bar chart of one row of attention weights, values printed on the bars.

    Parameters
    ----------
    labels : sequence of str, length T (one per key)
    weights : array_like, shape (T,)
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


def relative_luminance(color) -> float:
    """WCAG 2 relative luminance (0 for black, 1 for white) of any matplotlib colour."""
    from matplotlib.colors import to_rgb

    channels = np.array(to_rgb(color))
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast_ratio(a, b) -> float:
    """WCAG 2 contrast ratio of two colours, from 1 (equal) to 21 (black on white)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def label_color(background) -> str:
    """Black or white, whichever contrasts more with ``background`` (always at least 4.58:1)."""
    return "black" if contrast_ratio("black", background) >= contrast_ratio("white", background) else "white"


#: Fill of a masked (forbidden) cell in :func:`heatmap`.
MASKED_FILL = "#d9d9d9"


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
    masked: ArrayLike | None = None,
):
    """Annotated heatmap of a small matrix (rows: queries, columns: keys).

    Each label is black or white, whichever contrasts more with the colour of its own cell
    (computed from the colour map, not guessed from the value). Masked cells are drawn grey and
    labelled "×", so they cannot be mistaken for tiny weights; ``-inf`` entries read "−∞".

    Parameters
    ----------
    M : array_like, shape (r, c)
    row_labels : sequence of str, length r
    col_labels : sequence of str, length c
    masked : array_like of bool, shape (r, c), optional
        Cells that a mask forbids.
    """
    import matplotlib as mpl

    A = np.asarray(M, dtype=float)
    hidden = np.zeros(A.shape, bool) if masked is None else np.broadcast_to(np.asarray(masked, bool), A.shape)
    shown = np.where(np.isfinite(A) & ~hidden, A, np.nan)
    colormap = mpl.colormaps[cmap].with_extremes(bad=MASKED_FILL)
    im = ax.imshow(shown, cmap=colormap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(A.shape[1]), col_labels)
    ax.set_yticks(range(A.shape[0]), row_labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fills = im.cmap(im.norm(shown))  # (r, c, 4): every cell's colour at once, masked cells MASKED_FILL
    for (i, j), value in np.ndenumerate(A):
        if hidden[i, j]:
            text = "×"
        elif value == -np.inf:
            text = "−∞"
        else:
            text = fmt.format(value).replace("-", "−")
        cell = MASKED_FILL if np.isnan(shown[i, j]) else tuple(fills[i, j])
        # inside its cell, so it cannot move the layout: the layout engine need not measure it
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color=label_color(cell), in_layout=False)
    if title:
        ax.set_title(title)
    return im


#: The smallest font size (points) of :func:`dataflow_diagram`'s labels.
DATAFLOW_MIN_PT = 9.0


def dataflow_diagram(T: int | str = "T", d: int | str = "d", d_k: int | str = "d_k", d_v: int | str = "d_v") -> Figure:
    """The data flow of one attention head, X -> Q, K, V -> scores -> weights -> outputs, with shapes.

    Shapes are printed as given: numbers for a concrete layer, or the symbols by default.
    """
    from matplotlib.patches import FancyBboxPatch

    def sym(x) -> str:
        return str(x) if isinstance(x, int) else {"T": "T", "d": "d", "d_k": "d_k", "d_v": "d_v"}[x]

    t, dd, k, v = (sym(x) for x in (T, d, d_k, d_v))
    # Drawn top to bottom and narrow (4.6 in), so that shown across a phone's column or a printed page
    # its smallest label (DATAFLOW_MIN_PT) stays legible.
    fig = plt.figure(figsize=(4.6, 5.4), facecolor="white")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 4.6)
    ax.set_ylim(0, 5.4)
    ax.axis("off")
    narrow, wide, h = 1.3, 2.0, 0.82
    boxes = {
        "X": (2.3, 4.85, narrow, r"$\mathbf{X}$", "input", f"{t} × {dd}", COLORS["grey"]),
        "Q": (0.8, 3.55, narrow, r"$\mathbf{Q}$", "queries", f"{t} × {k}", COLORS["blue"]),
        "K": (2.3, 3.55, narrow, r"$\mathbf{K}$", "keys", f"{t} × {k}", COLORS["blue"]),
        "V": (3.8, 3.55, narrow, r"$\mathbf{V}$", "values", f"{t} × {v}", COLORS["green"]),
        "S": (1.55, 2.2, wide, r"$\mathbf{S} = \mathbf{Q}\mathbf{K}^\top/\sqrt{d_k}$", "scores (+ mask)",
              f"{t} × {t}", COLORS["orange"]),
        "A": (1.55, 0.75, wide, r"$\mathbf{A} = \mathrm{softmax}(\mathbf{S})$", "weights, rows sum to 1",
              f"{t} × {t}", COLORS["red"]),
        "O": (3.8, 0.75, narrow, r"$\mathbf{O} = \mathbf{A}\mathbf{V}$", "outputs", f"{t} × {v}", COLORS["purple"]),
    }
    for x, y, w, title, role, shape, color in boxes.values():
        ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.03", facecolor="white",
                                    edgecolor=color, linewidth=2))
        ax.text(x, y + 0.2, title, ha="center", va="center", fontsize=DATAFLOW_MIN_PT + 2, color="black")
        ax.text(x, y - 0.06, role, ha="center", va="center", fontsize=DATAFLOW_MIN_PT, color="#333333")
        ax.text(x, y - 0.28, shape, ha="center", va="center", fontsize=DATAFLOW_MIN_PT + 0.5, color="black",
                family="monospace")

    def arrow(a: str, b: str, label: str = "", side: bool = False) -> None:
        (xa, ya, wa), (xb, yb, wb) = boxes[a][:3], boxes[b][:3]
        if side:  # left to right
            start, end = (xa + wa / 2, ya), (xb - wb / 2, yb)
        else:  # top to bottom
            start, end = (xa, ya - h / 2), (xb, yb + h / 2)
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "color": "#333333", "lw": 1.2})
        if label:
            ax.text(start[0] + 0.5 * (end[0] - start[0]) + 0.08, start[1] + 0.5 * (end[1] - start[1]), label,
                    ha="left", va="center", fontsize=DATAFLOW_MIN_PT + 1, color="black",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})

    arrow("X", "Q", r"$\mathbf{W}_Q$")
    arrow("X", "K", r"$\mathbf{W}_K$")
    arrow("X", "V", r"$\mathbf{W}_V$")
    arrow("Q", "S")
    arrow("K", "S")
    arrow("S", "A")
    arrow("A", "O", side=True)
    arrow("V", "O")
    return fig


def _shown_char(c: str) -> str:
    return {" ": "␣", "\n": "↵"}.get(c, c)


def text_weights(ax: Axes, A: ArrayLike, text: str, word_start: ArrayLike, title: str = ""):
    """The weights of one causal head over a window of characters, each query's own word outlined.

    Parameters
    ----------
    A : array_like, shape (T, T)
        Row ``i``: query ``i``'s weights on keys ``0..i`` (later keys are 0 and drawn blank).
    text : str, length T
        The window's characters (space drawn ``␣``, newline ``↵``).
    word_start : array_like of int, shape (T,)
        The first key (0-based) of each query's own word; a white line marks it.
    """
    W = np.asarray(A, dtype=float)
    T = W.shape[0]
    shown = np.where(np.tri(T, dtype=bool), W, np.nan)
    im = ax.imshow(shown, cmap="viridis", vmin=0, vmax=1, aspect="equal")
    labels = [_shown_char(c) for c in text]
    ax.set_xticks(range(T), labels, fontsize=9)
    ax.set_yticks(range(T), labels, fontsize=9)
    ax.tick_params(length=0)
    ax.set_xlabel("key (character)")
    ax.set_ylabel("query (character)")
    for i, j in enumerate(np.asarray(word_start, dtype=int)):
        ax.plot([j - 0.5, j - 0.5], [i - 0.5, i + 0.5], color="white", lw=1.5)
        ax.plot([j - 0.5, i + 0.5], [i - 0.5, i - 0.5], color="white", lw=0.6)
        ax.plot([j - 0.5, i + 0.5], [i + 0.5, i + 0.5], color="white", lw=0.6)
    if title:
        ax.set_title(title)
    return im

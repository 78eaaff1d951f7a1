"""Figure text is legible: every heatmap label contrasts with its own cell by WCAG's measure."""

from __future__ import annotations

import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from selfattn.plots import MASKED_FILL, contrast_ratio, heatmap, label_color, new_figure

WCAG_AA = 4.5


def _cell_colours(ax, im, A, masked):
    """Colour of the cell under each text label, from the drawn image itself."""
    rgba = im.to_rgba(np.ma.masked_invalid(im.get_array()))
    for text in ax.texts:
        x, y = text.get_position()
        i, j = round(y), round(x)
        yield text, MASKED_FILL if (masked is not None and masked[i, j]) or not np.isfinite(A[i, j]) else rgba[i, j]


@pytest.mark.parametrize(("black", "white"), [("#000000", "#ffffff")])
def test_contrast_ratio_matches_wcag(black, white):
    assert contrast_ratio(black, white) == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert contrast_ratio("#bbbbbb", "#f4f4f4") < WCAG_AA  # the old dark-mode caption on its panel


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_label_colour_always_reaches_aa(r, g, b):
    assert contrast_ratio(label_color((r, g, b)), (r, g, b)) >= WCAG_AA


@given(
    arrays(np.float64, (4, 5), elements=st.floats(-3, 3)),
    st.sampled_from(["viridis", "RdBu_r"]),
    arrays(np.bool_, (4, 5)),
)
def test_every_heatmap_label_contrasts_with_its_cell(A, cmap, masked):
    fig, (ax,) = new_figure(4, 3)
    try:
        im = heatmap(ax, A, list("abcd"), list("vwxyz"), cmap=cmap, vmin=-3, vmax=3, masked=masked)
        fig.canvas.draw()
        low = [(t.get_text(), contrast_ratio(t.get_color(), bg)) for t, bg in _cell_colours(ax, im, A, masked)]
    finally:
        plt.close(fig)
    assert len(low) == A.size
    assert [x for x in low if x[1] < WCAG_AA] == []


def test_masked_cells_are_marked_not_zero():
    A = np.array([[1.0, 0.0], [0.4, 0.6]])
    fig, (ax,) = new_figure(3, 3)
    try:
        heatmap(ax, A, ["a", "b"], ["a", "b"], vmin=0, vmax=1, masked=np.array([[False, True], [False, False]]))
        labels = [t.get_text() for t in ax.texts]
    finally:
        plt.close(fig)
    assert labels == ["1.00", "×", "0.40", "0.60"]


def test_every_png_records_its_smallest_text():
    """fig_to_png writes the smallest font size drawn (in CSS px at the figure's own size) into the PNG, which
    the phone test scales by the width a page shows it at; tick labels count."""
    from selfattn.plots import MIN_TEXT_KEY, fig_to_png, png_text

    fig, (ax,) = new_figure(3, 2)
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=6)
    ax.set_title("a title", fontsize=14)
    assert float(png_text(fig_to_png(fig))[MIN_TEXT_KEY]) == pytest.approx(6 * 96 / 72)


@given(arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 6)), elements=st.floats(0, 1)))
def test_a_palette_png_draws_what_the_full_colour_one_draws(A):
    """fig_to_png stores at most 256 colours (a chapter page's download budget): every pixel of a heatmap
    with its numbers stays within a few levels of the full-colour rendering."""
    import io

    from PIL import Image

    from selfattn.plots import DENSITY, fig_to_png

    def drawn():
        fig, (ax,) = new_figure(3, 2)
        heatmap(ax, A, [f"q{i}" for i in range(A.shape[0])], [f"k{i}" for i in range(A.shape[1])])
        return fig

    fig = drawn()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96 * DENSITY, facecolor="white")
    plt.close(fig)
    full = np.asarray(Image.open(buf).convert("RGB"), dtype=int)
    png = fig_to_png(drawn())
    image = Image.open(io.BytesIO(png))
    assert image.mode == "P" and len(image.getcolors(256) or []) <= 256
    small = np.asarray(image.convert("RGB"), dtype=int)
    assert small.shape == full.shape
    diff = np.abs(small - full)
    assert diff.mean() < 0.5, diff.mean()
    assert np.percentile(diff.max(-1), 99) <= 16  # only some edge pixels of glyphs move further

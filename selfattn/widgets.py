"""Widgets that work with or without a kernel.

Each control switches between *precomputed* frames held in a ``Stack``.  The control and
the stack are joined by ``jslink``, a link that lives in the browser: on the static site
(no kernel) and in JupyterLab alike, moving the control shows another frame at once.
A kernel-side observer keeps the Python model in step, so code can read the state too.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import ipywidgets as W

from .plots import figure_img

__all__ = ["figure_frame", "grid_frames", "link_index", "slider_frames", "toggle_frames"]


def figure_frame(fig, alt: str, caption: str = "") -> W.HTML:
    """One frame: a matplotlib figure as an ``<img>`` with alt text and a caption.

    Without ``caption`` the alt text doubles as the visible caption (hidden from screen
    readers, which already read it as the alt text).
    """
    if caption:
        cap = f"<figcaption>{html.escape(caption)}</figcaption>"
    else:
        cap = f'<figcaption aria-hidden="true">{html.escape(alt)}</figcaption>'
    return W.HTML(
        f'<figure class="frame">{figure_img(fig, alt)}{cap}</figure>'
    )


def link_index(control: W.Widget, stack: W.Stack, trait: str = "index") -> None:
    """Show frame ``control.<trait>`` of ``stack``, in the browser and in the kernel."""
    W.jslink((control, trait), (stack, "selected_index"))

    def sync(change) -> None:
        stack.selected_index = change["new"]

    control.observe(sync, names=trait)


def slider_frames(
    values: Sequence,
    render: Callable[[object], W.Widget],
    description: str,
    start: int = 0,
    fmt: Callable[[object], str] = str,
    print_at: int | None = None,
) -> W.VBox:
    """A slider over ``values``; frame ``i`` is ``render(values[i])``.

    ``print_at`` names the frame the printed book shows (class ``print-frame-<i>``, read by
    ``scripts/book_pdf.py``); without it the starting frame is printed.
    """
    stack = W.Stack([render(v) for v in values], selected_index=start)
    slider = W.SelectionSlider(
        options=[(fmt(v), i) for i, v in enumerate(values)],
        index=start,
        description=description,
        continuous_update=True,
        style={"description_width": "initial"},
        layout=W.Layout(width="100%", max_width="480px"),  # fits a 390 px phone
    )
    link_index(slider, stack)
    if print_at is not None:
        mark_print_frame(slider, print_at)
    return W.VBox([slider, stack], layout=W.Layout(align_items="flex-start"))


def mark_print_frame(control: W.Widget, index: int) -> W.Widget:
    """Mark ``control`` (a slider or toggle buttons) so the printed book sets it to option ``index``.

    The mark is the class ``print-frame-<index>``, read by ``scripts/book_pdf.py``.
    """
    if not 0 <= index < len(control.options):
        raise ValueError(f"print frame {index} is not an option of {control.description!r}")
    control.add_class(f"print-frame-{index}")
    return control


def print_frame_of(control: W.Widget) -> int | None:
    """The option index ``control`` is marked to print at, or None when it is unmarked."""
    for cls in control._dom_classes:
        if cls.startswith("print-frame-"):
            return int(cls.removeprefix("print-frame-"))
    return None


def toggle_frames(
    labels: Sequence[str], render: Callable[[int], W.Widget], description: str = "", print_at: int | None = None
) -> W.VBox:
    """Toggle buttons; frame ``i`` is ``render(i)``; ``print_at`` as in :func:`slider_frames`."""
    stack = W.Stack([render(i) for i in range(len(labels))], selected_index=0)
    buttons = W.ToggleButtons(options=[(lab, i) for i, lab in enumerate(labels)], index=0, description=description)
    link_index(buttons, stack)
    if print_at is not None:
        mark_print_frame(buttons, print_at)
    return W.VBox([buttons, stack], layout=W.Layout(align_items="flex-start"))


def grid_frames(
    outer: W.Widget, inner: W.Widget, render: Callable[[int, int], W.Widget], n_outer: int, n_inner: int
) -> W.VBox:
    """Two controls: ``outer`` picks a row of frames, ``inner`` a frame within the row.

    Frame ``(i, j)`` is ``render(i, j)``; both controls expose an integer ``index``.
    """
    rows = []
    for i in range(n_outer):
        row = W.Stack([render(i, j) for j in range(n_inner)], selected_index=inner.index)
        link_index(inner, row)
        rows.append(row)
    grid = W.Stack(rows, selected_index=outer.index)
    link_index(outer, grid)
    return W.VBox([outer, inner, grid], layout=W.Layout(align_items="flex-start"))

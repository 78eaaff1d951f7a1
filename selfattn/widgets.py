"""Widgets that work with or without a kernel.

Each control switches between frames held in a ``Stack``.  The control and the stack are joined
by ``jslink``, a link that lives in the browser: on the static site (no kernel) and in JupyterLab
alike, moving the control shows another frame at once. A kernel-side observer keeps the Python
model in step, so code can read the state too.

When the frames are drawn depends on where the widget is shown. In a notebook (a kernel is there
to draw) a frame is drawn the first time it is shown, and kept: building the widget draws only its
starting frame, and Restart & Run All does not wait for frames nobody has looked at. The book's
pages are exported without a kernel, so there every frame must be in the page: importing
:mod:`selfattn.book` (which every page's set-up cell does) calls :func:`draw_up_front`, and each
widget then draws all its frames when it is built. A frame is the same whenever it is drawn.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Hashable, Sequence

import ipywidgets as W

from .plots import figure_img

__all__ = ["PENDING", "draw_up_front", "drawn_up_front", "figure_frame", "grid_frames", "link_index",
           "slider_frames", "toggle_frames"]

#: What a frame not drawn yet shows, for the moment its kernel takes to draw it.
PENDING = '<p class="frame-pending" role="status">drawing this frame…</p>'

_UP_FRONT = False


def draw_up_front(on: bool = True) -> bool:
    """Make every widget built from now on draw all its frames when it is built (``on``), or each
    frame when it is first shown (``on=False``, the default in a notebook); returns the previous
    setting. The book's export calls it (see the module's docstring)."""
    global _UP_FRONT
    previous, _UP_FRONT = _UP_FRONT, bool(on)
    return previous


def drawn_up_front() -> bool:
    """Whether widgets built now draw every frame up front (:func:`draw_up_front`)."""
    return _UP_FRONT


class _Frames:
    """The frames of one widget, keyed by the controls' indices, each drawn by ``render`` once.

    Drawn lazily (the default), each frame sits in a slot (a ``Box``): the frame shown when the
    widget is built is drawn into its slot at once, every other slot holds :data:`PENDING` until
    :meth:`show` draws its frame. Drawn up front (:func:`drawn_up_front` when the widget is built),
    the frames themselves are the stack's children.
    """

    def __init__(self, render: Callable[..., W.Widget], shown: tuple[int, ...]) -> None:
        self.render = render
        self.up_front = _UP_FRONT
        self.shown = shown
        self.slots: dict[Hashable, W.Box] = {}
        self.drawn: set[Hashable] = set()

    def frame(self, *key: int) -> W.Widget:
        """The widget that stands for frame ``key`` in its stack: the frame itself when drawn up
        front, else its slot (drawn if it is the frame shown first)."""
        if self.up_front:
            return self.render(*key)
        if key == self.shown:
            self.drawn.add(key)
        self.slots[key] = W.Box([self.render(*key) if key == self.shown else W.HTML(PENDING)])
        return self.slots[key]

    def show(self, *key: int) -> None:
        """Draw frame ``key`` into its slot, unless it is drawn already."""
        if key in self.drawn or key not in self.slots:
            return
        self.drawn.add(key)
        slot = self.slots[key]
        pending, slot.children = slot.children, (self.render(*key),)
        for widget in pending:  # gone from the kernel (and from the widget state JupyterLab saves)
            widget.close()


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
    frames = _Frames(lambda i: render(values[i]), (start,))
    stack = W.Stack([frames.frame(i) for i in range(len(values))], selected_index=start)
    slider = W.SelectionSlider(
        options=[(fmt(v), i) for i, v in enumerate(values)],
        index=start,
        description=description,
        continuous_update=True,
        style={"description_width": "initial"},
        layout=W.Layout(width="100%", max_width="480px"),  # fits a 390 px phone
    )
    link_index(slider, stack)
    _draw_when_shown(frames, stack)
    if print_at is not None:
        mark_print_frame(slider, print_at)
    return W.VBox([slider, stack], layout=W.Layout(align_items="flex-start"))


def _draw_when_shown(frames: _Frames, stack: W.Stack) -> None:
    """Draw each frame ``stack`` shows the first time it shows it."""
    stack.observe(lambda change: frames.show(change["new"]), names="selected_index")


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
    frames = _Frames(render, (0,))
    stack = W.Stack([frames.frame(i) for i in range(len(labels))], selected_index=0)
    buttons = W.ToggleButtons(options=[(lab, i) for i, lab in enumerate(labels)], index=0, description=description)
    link_index(buttons, stack)
    _draw_when_shown(frames, stack)
    if print_at is not None:
        mark_print_frame(buttons, print_at)
    return W.VBox([buttons, stack], layout=W.Layout(align_items="flex-start"))


def grid_frames(
    outer: W.Widget, inner: W.Widget, render: Callable[[int, int], W.Widget], n_outer: int, n_inner: int
) -> W.VBox:
    """Two controls: ``outer`` picks a row of frames, ``inner`` a frame within the row.

    Frame ``(i, j)`` is ``render(i, j)``; both controls expose an integer ``index``.
    """
    frames = _Frames(render, (outer.index, inner.index))
    rows = []
    for i in range(n_outer):
        row = W.Stack([frames.frame(i, j) for j in range(n_inner)], selected_index=inner.index)
        link_index(inner, row)
        rows.append(row)
    grid = W.Stack(rows, selected_index=outer.index)
    link_index(outer, grid)

    def show(_change=None) -> None:  # the frame shown: the outer control's row at the inner one's place
        frames.show(grid.selected_index, rows[grid.selected_index].selected_index)

    grid.observe(show, names="selected_index")
    for row in rows:
        row.observe(show, names="selected_index")
    return W.VBox([outer, inner, grid], layout=W.Layout(align_items="flex-start"))

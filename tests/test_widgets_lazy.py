"""When a widget's frames are drawn: in a notebook each frame the first time it is shown (Restart &
Run All waits for one frame per widget, not all of them), on the book's pages every frame up front
(the site has no kernel to draw one later). A frame is the same bytes whenever it is drawn."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import ipywidgets as W
import nbformat
import pytest
from myst_nb.core.read import read_myst_markdown_notebook
from nbclient import NotebookClient

from selfattn import demos, widgets

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lazy() -> Iterator[None]:
    previous = widgets.draw_up_front(False)
    yield
    widgets.draw_up_front(previous)


@pytest.fixture
def up_front() -> Iterator[None]:
    previous = widgets.draw_up_front(True)
    yield
    widgets.draw_up_front(previous)


def _frames(box: W.VBox) -> list[W.Widget]:
    """Every frame of a widget, in its controls' order (a grid: row by row)."""
    stack = box.children[-1]
    if all(isinstance(child, W.Stack) for child in stack.children):  # a grid: a stack of rows
        return [frame for row in stack.children for frame in row.children]
    return list(stack.children)


def _html(frame: W.Widget) -> str:
    """What a frame shows: its HTML, or its slot's (a lazily drawn frame sits in a Box)."""
    if isinstance(frame, W.Box):
        (frame,) = frame.children
    assert isinstance(frame, W.HTML)
    return frame.value


def _drawn(box: W.VBox) -> list[int]:
    return [i for i, frame in enumerate(_frames(box)) if _html(frame) != widgets.PENDING]


def test_a_slider_draws_its_starting_frame_then_each_frame_once_when_first_shown(lazy):
    drawn: list[float] = []

    def render(theta: float) -> W.HTML:
        drawn.append(theta)
        return W.HTML(f"<p>frame {theta}</p>")

    box = widgets.slider_frames([0.5, 1.0, 2.0, 4.0], render, "θ", start=1)
    slider, stack = box.children
    assert drawn == [1.0] and _drawn(box) == [1], "only the starting frame is drawn when the widget is built"
    slider.index = 3
    assert drawn == [1.0, 4.0] and stack.selected_index == 3 and _html(stack.children[3]) == "<p>frame 4.0</p>"
    slider.index = 1
    slider.index = 3
    assert drawn == [1.0, 4.0], "a frame shown before is kept, not drawn again"


@pytest.mark.parametrize("build", [demos.temperature, demos.masks, demos.cost_calculator],
                         ids=["slider", "toggle", "grid"])
def test_a_demo_built_in_a_notebook_draws_only_the_frame_it_shows(lazy, build: Callable[[], W.VBox]):
    box = build()
    frames = _frames(box)
    assert len(_drawn(box)) == 1 < len(frames)
    control = box.children[0] if build is not demos.cost_calculator else box.children[1]
    other = (control.index + 1) % len(control.options)
    control.index = other
    assert len(_drawn(box)) == 2, "moving the control draws the frame it now shows"


def test_a_grid_draws_the_frame_at_both_controls(lazy):
    box = demos.cost_calculator()
    outer, inner, grid = box.children
    n, (i, j) = len(inner.options), (outer.index, inner.index)
    assert _drawn(box) == [i * n + j] and i > 0 and j > 0
    outer.index = 0  # the first row, at the same place
    inner.index = 0  # then its first frame
    assert _drawn(box) == [0, j, i * n + j]
    assert "d = 768, T = 512" in _html(grid.children[0].children[0])


def _every_frame_shown(box: W.VBox) -> None:
    """Move the controls over every frame of ``box`` (a grid: every pair)."""
    controls = [c for c in box.children if hasattr(c, "options")]
    if len(controls) == 1:
        for i in range(len(controls[0].options)):
            controls[0].index = i
        return
    outer, inner = controls
    for i in range(len(outer.options)):
        outer.index = i
        for j in range(len(inner.options)):
            inner.index = j


DEMOS: dict[str, Callable[[], W.VBox]] = {
    "temperature": demos.temperature,  # a slider
    "masks": demos.masks,  # toggle buttons
    "cost_calculator": demos.cost_calculator,  # a grid of HTML frames
    "saturation": lambda: demos.saturation(widths=(4, 16, 256), trials=200),  # a grid of figures
}


@pytest.mark.parametrize("name", DEMOS)
def test_every_frame_drawn_when_first_shown_is_the_frame_drawn_up_front(name):
    previous = widgets.draw_up_front(True)
    try:
        eager = [_html(f) for f in _frames(DEMOS[name]())]
        widgets.draw_up_front(False)
        box = DEMOS[name]()
        _every_frame_shown(box)
    finally:
        widgets.draw_up_front(previous)
    lazy = [_html(f) for f in _frames(box)]
    assert widgets.PENDING not in lazy, "every frame was shown, so every frame is drawn"
    assert [s.encode() for s in lazy] == [s.encode() for s in eager]


def test_importing_the_books_helpers_draws_every_frame_up_front(lazy):
    import selfattn.book

    widgets.draw_up_front(False)  # as a notebook starts; the book's page imports selfattn.book afresh
    import importlib

    importlib.reload(selfattn.book)
    assert widgets.drawn_up_front()
    box = demos.temperature()
    assert _drawn(box) == list(range(len(_frames(box))))


def _widget_htmls(nb) -> list[str]:
    """The values of the HTML widgets in a notebook's stored widget state (what an export embeds)."""
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return [m["state"].get("value", "") for m in state.values() if m["model_name"] == "HTMLModel"]


def _frames_in(htmls: list[str]) -> int:
    return sum(bool(re.search(r'<figure class="frame"><img src="data:image/png;base64,', h)) for h in htmls)


@pytest.mark.pipeline
def test_the_book_page_embeds_every_frame_and_the_notebook_only_the_one_it_shows():
    """Chapter 3's page, executed as the book's build executes it (a kernel, the widget state stored
    for the export), holds all seven frames of its temperature slider; the released notebook 03,
    run to its widget in a kernel, holds one, the others waiting to be drawn."""
    page = read_myst_markdown_notebook((ROOT / "book" / "03-scores-softmax.md").read_text())
    setup = next(i for i, c in enumerate(page.cells) if c.cell_type == "code")
    shown = next(i for i, c in enumerate(page.cells) if "demos.temperature()" in c.source)
    page.cells = [page.cells[setup], page.cells[shown]]
    NotebookClient(page, timeout=300, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(ROOT / "book")}}).execute()
    htmls = _widget_htmls(page)
    assert _frames_in(htmls) == 7 and widgets.PENDING not in htmls, "the page embeds every frame"

    notebook = nbformat.read(ROOT / "notebooks" / "attention" / "03-softmax-attention.ipynb", as_version=4)
    shown = next(i for i, c in enumerate(notebook.cells) if c.source.strip() == "demos.temperature()")
    notebook.cells = notebook.cells[: shown + 1]
    NotebookClient(notebook, timeout=300, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(ROOT / "notebooks" / "attention")}}).execute()
    htmls = _widget_htmls(notebook)
    assert _frames_in(htmls) == 1 and htmls.count(widgets.PENDING) == 6, "the notebook draws the frame it shows"

"""Small defects a reader of the book saw, each held by a test on the chapters' sources and widgets.

- A colour a caption names is the colour the figure draws: every palette name is the hue a reader sees,
  and every colour word of a figure's caption or alt text is a palette colour the cell drawing it uses.
- Chapter 9's sharpness slider covers the same range as the code printed above it.
- Chapter 8's cost bar has a legend naming each of its colours.
- Chapter 7 says that padded queries are left out of the loss.
"""

from __future__ import annotations

import colorsys
import re
from pathlib import Path

import pytest
from matplotlib.colors import to_rgb

from selfattn import demos, widgets
from selfattn.plots import COLORS

BOOK = Path(__file__).resolve().parent.parent / "book"

#: Hue ranges (degrees) of the colour words a caption may use; "grey" is any colour of low saturation.
HUES: dict[str, tuple[float, float]] = {
    "red": (345, 15), "orange": (15, 45), "yellow": (45, 70), "green": (70, 175), "blue": (175, 255),
    "sky": (175, 255), "purple": (255, 345),
}
WORDS = re.compile(r"\b(red|orange|yellow|green|blue|sky|purple|pink|grey|gray)\b", re.I)


def seen_as(colour: str) -> str:
    """The colour word a reader would use for ``colour``: "grey" or the hue range it lies in."""
    h, s, v = colorsys.rgb_to_hsv(*to_rgb(colour))
    if s < 0.15 or v < 0.1:
        return "grey"
    hue = 360 * h
    for word, (lo, hi) in HUES.items():
        if (lo <= hue < hi) if lo < hi else (hue >= lo or hue < hi):
            return word
    raise AssertionError(f"{colour}: hue {hue:.0f}° lies in no named range")


@pytest.mark.parametrize("name", sorted(COLORS))
def test_every_palette_name_is_the_colour_a_reader_sees(name):
    seen = seen_as(COLORS[name])
    allowed = {"sky": {"blue", "sky"}}.get(name, {name})
    assert seen in allowed, f"COLORS[{name!r}] = {COLORS[name]} reads as {seen}, not {name}"


def _figures() -> list[tuple[str, str, str, str]]:
    """(chapter, glued name, caption and alt text, source of the cell that glues it) of every glued figure."""
    out = []
    for md in sorted(BOOK.glob("*.md")):
        text = md.read_text(encoding="utf-8")
        cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)\n```", text, flags=re.S)
        for name, body in re.findall(r"```\{glue:figure\} (\S+)\n(.*?)\n```", text, flags=re.S):
            drawing = [c for c in cells if re.search(rf"glue\(\s*[\"']{re.escape(name)}[\"']", c)]
            assert len(drawing) == 1, f"{md.name}: {len(drawing)} cells glue {name}"
            out.append((md.name, name, body, drawing[0]))
    return out


FIGURES = _figures()


def test_the_chapters_have_figures_with_colour_words():
    assert sum(bool(WORDS.search(body)) for *_, body, _ in FIGURES) >= 3, "no caption names a colour any more?"


@pytest.mark.parametrize(("chapter", "name", "caption", "code"), FIGURES, ids=[f[1] for f in FIGURES])
def test_a_colour_a_caption_names_is_drawn(chapter, name, caption, code):
    """Each colour word of the caption (or alt text) is a palette colour its cell draws with."""
    drawn = set(re.findall(r"COLORS\[\s*[\"'](\w+)[\"']\s*\]", code))
    if re.search(r"COLORS\[\s*\w+\s*\]", code):  # a colour picked through a variable: the names the cell lists
        drawn |= {w for w in re.findall(r"[\"'](\w+)[\"']", code) if w in COLORS}
    named = {w.lower().replace("gray", "grey") for w in WORDS.findall(caption)}
    missing = sorted(named - drawn)
    assert missing == [], f"{chapter} {name}: the caption names {missing}, the figure draws {sorted(drawn)}"


def test_chapter_9s_slider_covers_the_range_of_the_code_above_it():
    text = (BOOK / "09-problem-20.md").read_text(encoding="utf-8")
    loop = re.search(r"for beta in (.+?):\s*(?:#.*)?$", text, flags=re.M)
    assert loop, "chapter 9's code no longer loops over beta"
    printed = list(eval(loop.group(1), {"demos": demos}))  # the chapter's own expression
    slider = demos.lookup_sharpness().children[0]
    shown = [float(label) for label in slider._options_labels]
    assert (min(shown), max(shown)) == (min(printed), max(printed)), \
        f"the slider runs {min(shown):g} to {max(shown):g}, the code above it {min(printed):g} to {max(printed):g}"


def _html_values(widget) -> list[str]:
    found, todo = [], [widget]
    while todo:
        w = todo.pop()
        todo.extend(getattr(w, "children", ()))
        if type(w).__name__ == "HTML":
            found.append(w.value)
    return found


def test_chapter_8s_cost_bar_has_a_legend_for_each_colour():
    # as the page shows it: the book draws every frame up front (it has no kernel to draw one later), and
    # this test must not depend on another test having imported the book's helpers first
    previous = widgets.draw_up_front(True)
    try:
        frames = _html_values(demos.cost_calculator())
    finally:
        widgets.draw_up_front(previous)
    assert frames, "the cost calculator shows no HTML frame"
    for value in frames:
        bar, _, legend = value.partition('class="cost-legend"')
        assert legend, f"a cost frame has no legend: {value[:120]}"
        in_bar = set(re.findall(r"background:(#[0-9A-Fa-f]{6})", bar))
        keyed = dict(re.findall(r"background:(#[0-9A-Fa-f]{6})\"></span>([^<(]+)", legend))
        assert in_bar and set(keyed) == in_bar, f"bar colours {in_bar}, legend keys {keyed}"
        assert sorted(v.strip() for v in keyed.values()) == ["attention", "projections + MLP"]


def test_chapter_7_says_padded_queries_are_left_out_of_the_loss():
    text = " ".join((BOOK / "07-masking.md").read_text(encoding="utf-8").split())
    assert "padded queries are left out of the loss" in text
    assert "out[real]" in text, "the code no longer shows which output rows the loss reads"

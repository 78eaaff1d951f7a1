"""The formulas of the site's search snippets read as the page shows them (book/_ext/math_text.py): the
symbols a typeset formula shows, never its TeX."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "book" / "_ext"))
from math_text import tex_as_text

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("tex", "shown"), [
    (r"s_{ij} = \frac{\langle \mathbf{q}_i, \mathbf{k}_j \rangle}{\sqrt{d_k}}", "sᵢⱼ = ⟨𝐪ᵢ, 𝐤ⱼ⟩/√dₖ"),
    (r"\mathbf{X}\mathbf{X}^\top", "𝐗𝐗ᵀ"),
    (r"\frac{a+b}{2}", "(a + b)/2"),
    (r"\sqrt{d_k + 1}", "√(dₖ + 1)"),
    (r"-\infty", "−∞"),
    (r"x = -1, \quad y", "x = −1, y"),
    (r"\mathbf{W}_Q \in \mathbb{R}^{d \times d_k}", "𝐖_Q ∈ ℝ^(d×dₖ)"),
    (r"\begin{aligned} a &= b \\ c &= \hat{x}^\top \end{aligned}", "a = b; c = x̂ᵀ"),
    (r"\operatorname{softmax}(\mathbf{z})_i", "softmax(𝐳)ᵢ"),
    (r"\text{row } t \text{ of } \mathbf{E}", "row t of 𝐄"),
    (r"j \in \{1, \dots, T\}", "j ∈ {1, …, T}"),
])
def test_a_formula_reads_as_it_is_shown(tex, shown):
    assert tex_as_text(tex) == shown


def test_a_formula_latex2mathml_refuses_keeps_its_symbols():
    assert tex_as_text(r"\frac{a}{").replace(" ", "") in ("a", "a/")


# Pieces of the book's formulas, joined at random: whatever the result, its text holds no TeX.
PIECES = [r"\mathbf{q}", r"\mathbf{K}^\top", r"_{ij}", r"^{2}", r"\frac{", r"}{", r"}", r"\sqrt{", r"\sum_{j=1}^{T}",
          r"\langle", r"\rangle", r"\in", r"\mathbb{R}", r"\times", r"d_k", r"\text{cat}", r"&", r"\\", r"=", r"-",
          r"\infty", r"\hat{x}", r"\begin{aligned}", r"\end{aligned}", r"\,", r"\quad", r"(", r")", r"x", r"1", r"$"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12))
def test_no_tex_survives_any_formula(pieces):
    text = tex_as_text(" ".join(pieces))
    assert not any(c in text for c in "\\{}$&"), f"{' '.join(pieces)!r} -> {text!r}"

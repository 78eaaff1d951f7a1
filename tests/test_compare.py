"""compare(): the student's function beside the package's own, on the lecture's example.

What a student sees: the verdict line and the HTML (heatmaps or a table). It must never raise.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import selfattn
from selfattn.compare import EXAMPLES, compare

ROOT = Path(__file__).resolve().parent.parent


def _images(html: str) -> int:
    return len(re.findall(r'<img src="data:image/png;base64,', html))


def test_a_correct_attention_agrees_and_draws_both_heatmaps_in_one_picture():
    shown = compare(selfattn.attention)
    assert shown.agrees is True
    assert shown.verdict.startswith("✓ attention agrees with the reference")
    assert _images(shown.html) == 1
    assert "beside your attention, same colour scale" in shown.html


def test_softmax_over_the_wrong_axis_is_shown_as_a_difference_and_named():
    def attention(Q, K, V, mask=None):
        return selfattn.softmax(Q @ K.T / np.sqrt(K.shape[-1]), axis=0) @ V

    shown = compare(attention)
    assert shown.agrees is False
    assert shown.verdict.startswith("✗ attention differs from the reference: largest difference [")
    assert "axis 0" in shown.verdict  # the public check's diagnosis names the mistake
    assert "\n" not in shown.verdict
    assert _images(shown.html) == 1


def test_an_unwritten_function_says_not_answered_yet_and_still_shows_the_reference():
    def causal_mask(T):
        raise NotImplementedError

    shown = compare(causal_mask)
    assert shown.agrees is None
    assert "not answered yet" in shown.verdict
    assert _images(shown.html) == 1
    assert "beside your" not in shown.html


def test_a_crashing_function_shows_its_error_in_one_line():
    def softmax_jacobian(a):
        raise ValueError("boom\nsecond line")

    shown = compare(softmax_jacobian)
    assert shown.agrees is False
    assert shown.verdict == "✗ softmax_jacobian(array of shape (4,)) raised ValueError: boom second line"


@pytest.mark.parametrize("returned", [None, "text", {"a": 1}, np.zeros(3)])
def test_a_wrong_return_is_shown_not_raised(returned):
    shown = compare(lambda T: returned, name="causal_mask")
    assert shown.agrees is False
    assert shown.verdict.startswith("✗ causal_mask")


def test_numbers_are_a_table_and_a_wrong_row_is_marked():
    def attention_flops(T, d):
        return 2 * T * T * d  # only one of the two products

    shown = compare(attention_flops)
    assert shown.agrees is False
    assert "<table" in shown.html and _images(shown.html) == 0
    assert shown.html.count("✗</td>") == 3
    assert "yours 102400, reference 204800" in shown.verdict
    assert compare(selfattn.attention_flops).html.count("✓</td>") == 3


def test_a_secret_answer_is_not_revealed_where_the_student_is_wrong():
    def shape_answers():
        return np.array([(10, 64)] * 5)  # Q Kᵀ wrong: (10, 10)

    shown = compare(shape_answers)
    assert shown.agrees is False
    assert "10, 10" not in shown.html
    assert "yours 64." in shown.verdict and "reference 10" not in shown.verdict
    assert "(hidden until yours is right)" in shown.html
    assert compare(lambda: selfattn.lecture_shapes(), name="shape_answers").agrees is True


@pytest.mark.parametrize("function", sorted(EXAMPLES))
def test_every_example_agrees_with_its_own_reference(function):
    shown = compare(EXAMPLES[function].reference, name=function)
    assert shown.agrees is True, shown.verdict


def test_no_example_and_no_function_are_messages_too():
    assert "no lecture example" in compare(print).verdict
    assert "is not a function yet" in compare(None, name="embed").verdict


def test_each_notebook_compares_its_exercise_right_after_its_checks():
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        ids = [c.metadata.get("nbgrader", {}).get("grade_id", "") for c in nb.cells]
        compared = [i for i, gid in enumerate(ids) if gid.startswith("compare-")]
        if path.name.startswith("09"):
            assert not compared  # no package function answers Problem 20's exercise
            continue
        (at,) = compared
        function = ids[at].removeprefix("compare-")
        assert function in EXAMPLES
        assert ids[at - 1].startswith(f"{function}-") and nb.cells[at - 1].metadata["nbgrader"]["grade"]
        assert nb.cells[at].source.endswith(f"compare({function})")
        assert not nb.cells[at].metadata["nbgrader"]["locked"]

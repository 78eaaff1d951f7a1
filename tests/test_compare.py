"""compare(): the student's function beside the package's own, on the lecture's example.

What a student sees: the verdict line and the HTML (heatmaps or a table). It must never raise.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

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


def test_an_answer_that_is_a_value_is_shown_alone_and_its_check_says_what_it_cannot_judge():
    """The package does not hold shape_answers' answer: compare() shows the student's rows alone,
    judges how they fit together (the public check) and says the values are checked when graded."""
    def shape_answers():
        return np.array([(10, 64)] * 5)  # Q Kᵀ is not square

    shown = compare(shape_answers)
    assert shown.agrees is False and "Q Kᵀ compares every query with every key: it is square" in shown.verdict
    assert "10, 10" not in shown.html and "reference" not in shown.html
    transposed = compare(lambda: np.array([(64, 10)] * 3 + [(10, 10), (64, 10)]), name="shape_answers")
    assert transposed.agrees is False and "each shape is (rows, columns)" in transposed.verdict
    right = compare(lambda: selfattn.lecture_shapes(), name="shape_answers")
    assert right.agrees is True and "its values are checked only when graded" in right.verdict
    assert right.html.count("<tr>") == 6 and "10, 64" in right.html  # the student's own rows


def _lookup(targets, values, beta):
    """Problem 20 answered right (the package holds no such function: it would give the answer away)."""
    m = len(targets)
    return beta * np.eye(m)[np.asarray(targets)], np.eye(m), np.asarray(values, dtype=float)


#: Correct answers where the example's reference is not one (it returns what is drawn instead, or
#: there is none: an answer that is a value is not in the package).
RIGHT = {"lookup_table_weights": _lookup, "shape_answers": lambda: selfattn.lecture_shapes()}


@pytest.mark.parametrize("function", sorted(EXAMPLES))
def test_every_example_agrees_with_its_own_reference(function):
    shown = compare(RIGHT.get(function, EXAMPLES[function].reference), name=function)
    assert shown.agrees is True, shown.verdict


def _pngs(html: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r'data:image/png;base64,([^"]+)', html)]


def test_problem_20_lookup_stored_in_w_v_shows_the_weights_missing_their_targets():
    def lookup_table_weights(targets, values, beta):  # every token reads itself; values pre-permuted
        m = len(targets)
        return beta * np.eye(m), np.eye(m), np.asarray(values, dtype=float)[np.asarray(targets)]

    right, wrong = compare(_lookup, name="lookup_table_weights"), compare(lookup_table_weights)
    assert wrong.agrees is False and "\n" not in wrong.verdict
    assert wrong.verdict.startswith("✗ lookup_table_weights differs from the lookup asked for: query c→e (row 0) "
                                    "puts 0.00 of its weight on the key e, most of it on c")
    assert "not be stored in W_V" in wrong.verdict  # the public check names the mistake
    assert _pngs(wrong.html) != _pngs(right.html) and len(_pngs(wrong.html)) == 1
    assert wrong.html.count("✓</td>") == 5  # the outputs are right: only the weights give it away


@pytest.mark.parametrize("answer, where, mistake, weights_wrong", [
    (lambda t, v, b: (np.eye(len(t))[np.asarray(t)], np.eye(len(t)), np.asarray(v, dtype=float)),
     "puts 0.28 of its weight on the key e", "grows with beta", True),
    (lambda t, v, b: (b * np.eye(len(t))[np.asarray(t)].T, np.eye(len(t)), np.asarray(v, dtype=float)),
     "query a→d (row 2) puts 0.00 of its weight on the key d, most of it on b", "check which key each query", True),
    (lambda t, v, b: (b * np.eye(len(t))[np.asarray(t)], np.eye(len(t)), np.asarray(v, dtype=float)[np.asarray(t)]),
     "the output of c→e (row 0) is 3, 30, its target's value is 5, 50", "row t of W_V must be values[t]", False),
], ids=["beta-forgotten", "inverse-permutation", "looked-up-twice"])
def test_problem_20_a_wrong_lookup_differs_in_the_picture_and_the_verdict_names_the_mistake(
        answer, where, mistake, weights_wrong):
    wrong, right = compare(answer, name="lookup_table_weights"), compare(_lookup, name="lookup_table_weights")
    assert wrong.agrees is False
    assert where in wrong.verdict and "Likely mistake: " in wrong.verdict and mistake in wrong.verdict
    # the weights' heatmap shows a mistake in the weights; the table of rows read shows the rest
    assert (_pngs(wrong.html) != _pngs(right.html)) is weights_wrong
    assert wrong.html.count("✗</td>") >= 2 and right.html.count("✗</td>") == 0


@pytest.mark.parametrize("returned, message", [
    ((np.eye(3), np.eye(3), np.eye(3)), "W_Q has shape (3, 3): for 5 token types it needs 5 rows"),
    ((np.eye(5), np.eye(5), np.ones((5, 3))), "W_V has shape (5, 3): it needs 2 columns"),
    ((np.eye(5), np.eye(5)), "returned 2 values where 3 are expected: return the flat tuple (W_Q, W_K, W_V)"),
    ([np.eye(5)] * 3, "returned one array of shape (3, 5, 5)"),
])
def test_problem_20_unusable_matrices_are_named_not_drawn(returned, message):
    shown = compare(lambda targets, values, beta: returned, name="lookup_table_weights")
    assert shown.agrees is False and message in shown.verdict, shown.verdict
    assert len(_pngs(shown.html)) == 1 and "beside your" not in shown.html  # the lookup asked for alone


def test_problem_20_never_shows_matrices_that_answer_it():
    """Unanswered, the released notebook's cell shows the lookup asked for (weights, value rows),
    which the exercise states; no W_Q, W_K or W_V of the course is computed anywhere in it."""
    def lookup_table_weights(targets, values, beta):
        raise NotImplementedError

    shown = compare(lookup_table_weights)
    assert shown.agrees is None and "not answered yet" in shown.verdict
    assert "W_Q" not in shown.html and "reference (selfattn)" not in shown.html
    import selfattn.compare as module
    assert not any("lookup_table_weights" == getattr(f, "__name__", "") for f in vars(module).values())


def test_no_example_and_no_function_are_messages_too():
    assert "no lecture example" in compare(print).verdict
    assert "is not a function yet" in compare(None, name="embed").verdict


def _unwritten(*args, **kwargs):
    raise NotImplementedError


def _crashing(*args, **kwargs):
    raise ValueError("name 'x' is not defined")  # words like another error's: the mark does not read them


@pytest.mark.parametrize("function", sorted(EXAMPLES))
@pytest.mark.parametrize("fn", [None, _unwritten, _crashing, lambda *a, **k: None, lambda *a, **k: 0.5])
def test_the_verdicts_mark_is_made_from_agrees(function, fn):
    """The verdict line starts with the mark of ``agrees`` (· nothing to judge, ✓ agrees, ✗ not):
    one structured fact, rendered once."""
    shown = compare(fn, name=function)
    assert shown.verdict[:2] == {None: "· ", True: "✓ ", False: "✗ "}[shown.agrees], (shown.agrees, shown.verdict)
    assert (shown.agrees is None) is (fn in (None, _unwritten)), shown.verdict


def test_each_exercise_with_an_example_is_compared_right_after_its_checks():
    shown = {}
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        ids = [c.metadata.get("nbgrader", {}).get("grade_id", "") for c in nb.cells]
        answers = [gid for gid, c in zip(ids, nb.cells, strict=True)
                   if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
        compared = [i for i, gid in enumerate(ids) if gid.startswith("compare-")]
        shown[path.stem] = [ids[at].removeprefix("compare-") for at in compared]
        assert shown[path.stem] and shown[path.stem] == [a for a in answers if a in EXAMPLES], path.name
        for at in compared:
            function = ids[at].removeprefix("compare-")
            assert ids[at - 1].startswith(f"{function}-") and nb.cells[at - 1].metadata["nbgrader"]["grade"]
            assert nb.cells[at].source.endswith(f"compare({function})")
            assert not nb.cells[at].metadata["nbgrader"]["locked"]
    assert shown["05-saturation"] == ["softmax_jacobian", "softmax_vjp"]


@settings(max_examples=60, deadline=None)
@given(ref=arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 4)),
                  elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)),
       bad=st.sampled_from([np.nan, np.inf, -np.inf]), data=st.data())
def test_a_non_number_beside_a_number_is_the_largest_difference(ref, bad, data):
    """NaN or an infinity where the reference holds a number is a difference, and the one reported:
    the verdict never says 'yours 0.81, reference 0.81' of two entries that differ."""
    from selfattn.compare import EXAMPLES as examples
    from selfattn.compare import _difference

    at = data.draw(st.tuples(st.integers(0, ref.shape[0] - 1), st.integers(0, ref.shape[1] - 1)))
    got = ref.copy()
    got[at] = bad
    said = _difference([got], [ref], examples["attention"])
    assert f"[{at[0]}, {at[1]}]" in said, said
    shown = re.search(r"yours (\S+), reference (\S+)", said)
    assert shown and shown.group(1) != shown.group(2), said


def test_the_same_non_numbers_in_the_same_places_are_no_difference():
    from selfattn.compare import EXAMPLES as examples
    from selfattn.compare import _difference

    ref = np.array([[0.5, -np.inf], [np.nan, 1.0]])
    assert _difference([ref.copy()], [ref], examples["attention"]) == "values differ"

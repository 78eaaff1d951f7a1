"""An answer that is a value (shape_answers) is not in the student package, so its public check
judges only how the shapes fit together; grading judges the values too (its hidden check, in the
same test cell), and the cell's points need both."""

from __future__ import annotations

from grading_support import SOLUTIONS, feedback_text, grade, place, scores, with_answers

NOTEBOOK = "02-queries-keys-values"
ANSWERS = {
    "alice": None,  # the instructor's answer
    "bob": "np.array([(64, 10)] * 3 + [(10, 10), (64, 10)])",  # transposed: the public check names it
    "carol": "np.array([(5, 64)] * 3 + [(5, 5), (5, 64)])",  # shapes that fit, for another T: values wrong
}


def test_the_values_of_an_answer_that_is_a_value_are_graded(tmp_path):
    raw = (SOLUTIONS / f"{NOTEBOOK}.ipynb").read_text()
    for student, value in ANSWERS.items():
        text = raw if value is None else with_answers(raw, {"shape_answers": f"def shape_answers():\n"
                                                                            f"    return {value}\n"})
        place(tmp_path, student, NOTEBOOK, text)
    run = grade(tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    got = {s: scores(tmp_path, s, NOTEBOOK)["shape_answers-public"] for s in ANSWERS}
    assert got == {"alice": (2.0, 2.0), "bob": (0.0, 2.0), "carol": (0.0, 2.0)}, got
    carol = feedback_text(tmp_path, "carol", NOTEBOOK)
    assert "✓ shape_answers: five shapes that fit together" in carol
    assert "✗ shape_answers: hidden check: the shapes of the lecture's example: wrong values" in carol
    assert "hidden check: the shapes of the lecture's example: each shape is (rows, columns)" in feedback_text(
        tmp_path, "bob", NOTEBOOK)

"""The arithmetic of the final score that every place shows (formgrader's lists, the feedback, the
exports, the report): the late penalty of a notebook is taken from its whole score, hand grades
included, never more than the score; a submission's final score is the sum of its notebooks'; and
formgrader's averages are the averages of the final scores."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.late.policy import Policy, final_score
from autograder.nbgrader_ext.formgrader_scores import finalise, finalise_average

DAY, HOUR = 86400.0, 3600.0
points = st.floats(0, 100, allow_nan=False)
seconds = st.floats(-DAY, 30 * DAY, allow_nan=False)
policies = st.builds(Policy, st.sampled_from(["none", "zero", "percent"]), st.floats(0, 100),
                     st.sampled_from(["day", "hour"]), st.floats(0, 100), st.floats(0, 2 * DAY))


def share(policy: Policy, late: float) -> float:
    """The test's own reading of a policy: the part of a score taken for ``late`` seconds."""
    if policy.method == "none" or late <= 0 or late <= policy.grace_seconds:
        return 0.0
    if policy.method == "zero":
        return 1.0
    unit = DAY if policy.per == "day" else HOUR
    return min(policy.cap, policy.percent * math.ceil(late / unit), 100.0) / 100


@given(policies, points, points, seconds)
def test_the_penalty_is_taken_from_the_hand_graded_total(policy, auto, hand, late):
    taken = policy.notebook_penalty(auto + hand, late)
    if policy.method == "none" or late <= 0:
        assert taken is None  # nothing recorded: on time, or no policy
        return
    assert 0.0 <= taken <= auto + hand
    assert taken == pytest.approx((auto + hand) * share(policy, late))
    assert final_score(auto + hand, taken) == pytest.approx((auto + hand) * (1 - share(policy, late)))
    # a hand grade never lowers the penalty: what was taken from the autograded points alone is too little
    assert (policy.notebook_penalty(auto, late) or 0.0) <= taken + 1e-9


@given(policies, st.lists(points, min_size=1, max_size=4), seconds)
def test_a_submissions_final_score_is_the_sum_of_its_notebooks(policy, scores, late):
    taken = [policy.notebook_penalty(s, late) or 0.0 for s in scores]
    whole = final_score(sum(scores), sum(taken))
    assert whole == pytest.approx(sum(final_score(s, t) for s, t in zip(scores, taken, strict=True)))


@given(policies, st.lists(st.tuples(points, seconds), min_size=1, max_size=8))
def test_formgraders_rows_and_averages_are_of_final_scores(policy, class_):
    taken = [policy.notebook_penalty(s, late) or 0.0 for s, late in class_]
    rows = [finalise({"score": s}, t) for (s, _), t in zip(class_, taken, strict=True)]
    for row, (s, _), t in zip(rows, class_, taken, strict=True):
        assert row == {"raw_score": s, "late_penalty": t, "score": final_score(s, t)}
    average = finalise_average({"average_score": sum(s for s, _ in class_) / len(class_)}, sum(taken), len(class_))
    assert average["average_score"] == pytest.approx(sum(r["score"] for r in rows) / len(rows), abs=1e-9)
    assert average["raw_average_score"] == pytest.approx(sum(s for s, _ in class_) / len(class_))


def test_rows_without_a_score_and_empty_averages_are_left_alone():
    assert finalise(None, 1.0) is None
    assert finalise({"name": "attention"}, 1.0) == {"name": "attention"}
    assert finalise_average({"average_score": 0.0}, 0.0, 0) == {"average_score": 0.0, "raw_average_score": 0.0}

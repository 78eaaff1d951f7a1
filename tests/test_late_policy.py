"""The late policies (none, zero, percent per day or hour with a cap and a grace period), the way a
lateness reads, the due-dates file and the lines that say whose grade changed."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from traitlets.config import Config

from autograder.errors import RefusedInput
from autograder.late import due_dates
from autograder.late.penalties import change_line, score_changes
from autograder.late.policy import Policy, final_score, lateness, policy_of

DAY, HOUR = 86400.0, 3600.0
late = st.floats(0, 30 * DAY, allow_nan=False)
score = st.floats(0, 500, allow_nan=False)
grace = st.floats(0, 2 * DAY, allow_nan=False)


@given(score, late, grace)
def test_none_never_takes_anything(points, seconds, g):
    assert Policy("none", grace_seconds=g).penalty(points, seconds) == 0.0


@given(score, late, grace)
def test_zero_takes_everything_once_past_the_grace(points, seconds, g):
    taken = Policy("zero", grace_seconds=g).penalty(points, seconds)
    assert taken == (points if seconds > g else 0.0)
    assert final_score(points, taken) == (0.0 if seconds > g else points)


@given(score, late, grace, st.floats(0, 100), st.floats(0, 100), st.sampled_from(["day", "hour"]))
def test_percent_takes_a_share_per_started_unit_up_to_the_cap(points, seconds, g, pct, cap, per):
    policy = Policy("percent", pct, per, cap, g)
    unit = DAY if per == "day" else HOUR
    expected = 0.0 if seconds <= g else points * min(cap, pct * math.ceil(seconds / unit)) / 100
    assert policy.penalty(points, seconds) == pytest.approx(expected)
    assert 0.0 <= policy.penalty(points, seconds) <= points * cap / 100 + 1e-9


@given(score, late, late, st.floats(0, 100), st.floats(0, 100), st.sampled_from(["day", "hour"]), grace)
def test_later_never_costs_less(points, a, b, pct, cap, per, g):
    policy = Policy("percent", pct, per, cap, g)
    early, later = sorted((a, b))
    assert policy.penalty(points, early) <= policy.penalty(points, later)


def test_percent_boundaries():
    p = Policy("percent", 10, "day", 30, 15 * 60)
    assert p.penalty(50, 15 * 60) == 0.0  # inside the grace period
    assert p.penalty(50, 15 * 60 + 1) == pytest.approx(5.0)  # a started day
    assert p.penalty(50, DAY) == pytest.approx(5.0)
    assert p.penalty(50, DAY + 1) == pytest.approx(10.0)
    assert p.penalty(50, 20 * DAY) == pytest.approx(15.0)  # the cap: 30 %
    assert Policy("percent", 5, "hour", 100).penalty(40, 2.5 * HOUR) == pytest.approx(6.0)


def test_lateness_reads_in_minutes_hours_and_days():
    assert lateness(36) == "1 min"
    assert lateness(59 * 60) == "59 min"
    assert lateness(3 * HOUR + 20 * 60) == "3 h 20 min"
    assert lateness(3 * DAY + 2 * HOUR) == "3 d 2 h"


def test_the_policy_is_read_from_nbgraders_own_option():
    c = Config()
    c.LateSubmissionPlugin.penalty_method = "percent"
    c.LateSubmissionPlugin.percent = 20
    c.LateSubmissionPlugin.per = "hour"
    c.LateSubmissionPlugin.cap = 60
    c.LateSubmissionPlugin.grace_minutes = 5
    assert policy_of(c) == Policy("percent", 20.0, "hour", 60.0, 300.0)
    assert "20% of the score per started hour late, at most 60%, 5 min of grace" == policy_of(c).describe()


@pytest.mark.parametrize("name, value, word", [("penalty_method", "percentage", "penalty_method"),
                                               ("cap", 150.0, "cap"), ("percent", -1.0, "percent"),
                                               ("per", "week", "per"), ("grace_minutes", -5.0, "grace_minutes")])
def test_a_value_the_policy_cannot_take_is_one_line_naming_it(name, value, word):
    c = Config()
    c.LateSubmissionPlugin[name] = value
    with pytest.raises(RefusedInput) as info:
        policy_of(c)
    text = str(info.value)
    assert "\n" not in text and word in text and "c.LateSubmissionPlugin" in text, text


def test_due_dates_file_round_trip_and_refusals(tmp_path):
    path = tmp_path / "due-dates.csv"
    due_dates.set_row(path, due_dates.DueDate("attention", "", datetime(2026, 11, 1, 12)))
    due_dates.set_row(path, due_dates.DueDate("attention", "carol", datetime(2026, 11, 3, 12)))
    due_dates.set_row(path, due_dates.DueDate("attention", "carol", datetime(2026, 11, 4, 12)))  # replaces
    rows = due_dates.read(path)
    assert [(r.student, r.due) for r in rows] == [("", datetime(2026, 11, 1, 12)), ("carol", datetime(2026, 11, 4, 12))]
    assert due_dates.parse_time("2026-11-03 13:00 Europe/Berlin") == datetime(2026, 11, 3, 12)
    for text, word in [("assignment,student,due\nattention,,soon\n", "line 2"),
                       ("assignment,student,due\nattention,a b,2026-11-01\n", "'a b'"),
                       ("assignment,due\nattention,2026-11-01\n", "first line"),
                       ("assignment,student,due\nattention,,2026-11-01\nattention,,2026-11-02\n", "twice")]:
        path.write_text(text)
        with pytest.raises(RefusedInput) as info:
            due_dates.read(path)
        assert word in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_changed_lines_say_old_and_new():
    before = {"alice/attention": 7.0, "bob/attention": 10.0}
    after = {"alice/attention": 0.0, "bob/attention": 10.0, "carol/attention": 3.0}
    assert [change_line(*c) for c in score_changes(before, after)] == ["alice/attention: 7 -> 0"]


def test_students_see_the_due_date_and_how_late_handing_in_now_would_be(tmp_path):
    import json

    from autograder.late.clock import hand_in_lines

    path = tmp_path / "due-dates.json"
    path.write_text(json.dumps({"due": {"attention": "2026-11-01T12:00:00"}, "policy": "late work scores 0"}))
    on_time = hand_in_lines(path, now=datetime(2026, 11, 1, 11, 0))
    late = hand_in_lines(path, now=datetime(2026, 11, 1, 12, 0, 36))
    assert on_time == ["attention: due 2026-11-01 12:00 UTC; handed in now, it is on time"]
    assert late == ["attention: due 2026-11-01 12:00 UTC; handed in now, it is 1 min late (late work scores 0; "
                    "an extension you were granted replaces this date)"]
    assert hand_in_lines(tmp_path / "none.json") == []


def test_the_bundle_carries_due_dates_but_no_students_extension(tmp_path):
    path = tmp_path / "due-dates.csv"
    path.write_text("assignment,student,due\nattention,,2026-11-01 12:00 UTC\nattention,carol,2026-11-05 12:00 UTC\n")
    assert due_dates.bundle_data(path) == {"attention": "2026-11-01T12:00:00"}

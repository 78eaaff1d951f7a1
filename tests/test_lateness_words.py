"""How a lateness reads (autograder/late/clock.py), at its edges and for any number of seconds: the
words the grading summary, the feedback and the student's ``hand_in.py`` all show. A part of a
minute counts as a minute; an hour, two days, and a hand-in at the due date itself are the edges.
The rest of the late policy is tests/test_late_policy.py; docs/mutation.md holds this file's score.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from autograder.late.clock import hand_in_lines, lateness

MINUTE, HOUR, DAY = 60, 3600, 86400


def test_each_edge_reads_as_the_unit_that_begins_there():
    assert [lateness(s) for s in (-5.0, 0, 0.001, 60, 60.5, 59 * MINUTE, 59 * MINUTE + 1, HOUR, HOUR + 1)] == [
        "0 min", "0 min", "1 min", "1 min", "2 min", "59 min", "1 h", "1 h", "1 h 1 min"]
    assert [lateness(s) for s in (48 * HOUR - MINUTE, 48 * HOUR - 1, 48 * HOUR, 48 * HOUR + HOUR, 3 * DAY)] == [
        "47 h 59 min", "2 d", "2 d", "2 d 1 h", "3 d"]


def _minutes(text: str) -> int:
    """The minutes a lateness's words say."""
    units = {"d": 24 * 60, "h": 60, "min": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+) (d|h|min)\b", text))


#: any lateness, and latenesses at and around each edge (a minute, an hour, two days)
SECONDS = st.one_of(
    st.floats(min_value=-1e6, max_value=1e8, allow_nan=False),
    st.builds(lambda m, f: m * 60.0 + f, st.sampled_from([0, 1, 59, 60, 61, 119, 2879, 2880, 2881, 2940]),
              st.sampled_from([-1.0, -0.5, 0.0, 0.5])))


@given(SECONDS, st.floats(min_value=0, max_value=1e6))
def test_the_words_say_the_minutes_begun_and_never_less_for_a_longer_lateness(seconds, more):
    """Under two days the words say every minute begun; from two days, the hours begun are cut to
    whole hours; never a unit of zero, never fewer minutes for a longer lateness."""
    text = lateness(seconds)
    begun = math.ceil(max(seconds, 0.0) / MINUTE)
    assert _minutes(text) == (begun if begun < 48 * 60 else begun - begun % 60), text
    assert re.fullmatch(r"\d+ min|[1-9]\d* h( [1-9]\d* min)?|[1-9]\d* d( [1-9]\d* h)?", text), text
    if text != "0 min":
        assert not re.search(r"\b0 ", text), text
    assert ("d" in text) == (begun >= 48 * 60) and (text.endswith(" min") and " h " not in text) == (begun < 60)
    assert _minutes(lateness(seconds + more)) >= _minutes(text)


def test_a_hand_in_at_the_due_date_itself_is_on_time_and_a_second_after_is_late(tmp_path):
    path = tmp_path / "due-dates.json"
    path.write_text(json.dumps({"due": {"b": "2026-11-01T12:00:00", "a": "2026-11-02T12:00:00"},
                                "policy": "late work scores 0"}))
    due = datetime(2026, 11, 1, 12)
    assert hand_in_lines(path, now=due) == [
        "a: due 2026-11-02 12:00 UTC; handed in now, it is on time",
        "b: due 2026-11-01 12:00 UTC; handed in now, it is on time"]
    assert hand_in_lines(path, now=due + timedelta(seconds=1))[1] == (
        "b: due 2026-11-01 12:00 UTC; handed in now, it is 1 min late (late work scores 0; an extension you "
        "were granted replaces this date)")
    path.write_text("{not json")
    assert hand_in_lines(path) == []
    path.write_text(json.dumps({"policy": "no due dates yet"}))
    assert hand_in_lines(path) == []


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


@given(data=JSON | st.fixed_dictionaries({"due": st.dictionaries(st.text(max_size=8), JSON, max_size=3)},
                                         optional={"policy": JSON}))
def test_any_due_dates_file_gives_lines_and_never_stops_hand_in(tmp_path_factory, data):
    """The bundle's file is the student's to edit: whatever JSON it holds, ``hand_in.py``'s lines come out
    (a date no one wrote is passed over), and a file with no policy in words leaves no empty part."""
    path = tmp_path_factory.mktemp("due") / "due-dates.json"
    path.write_text(json.dumps(data))
    for line in hand_in_lines(path, now=datetime(2030, 1, 1)):
        assert "(;" not in line and "; )" not in line and ": due " in line, line


def test_a_late_line_without_a_policy_names_the_extension_only(tmp_path):
    path = tmp_path / "due-dates.json"
    path.write_text(json.dumps({"due": {"a": "2026-11-01T12:00:00"}}))
    assert hand_in_lines(path, now=datetime(2026, 11, 1, 13)) == [
        "a: due 2026-11-01 12:00 UTC; handed in now, it is 1 h late (an extension you were granted replaces "
        "this date)"]

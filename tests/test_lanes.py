"""Each test runs in exactly one lane: its own lane marker if it has one, else its file's (LANES)."""

from __future__ import annotations

import pytest
from conftest import LANE_NAMES, LANES


def _lanes(request: pytest.FixtureRequest) -> set[str]:
    return {m.name for m in request.node.iter_markers() if m.name in LANE_NAMES}


def test_a_test_without_a_marker_runs_in_its_files_lane(request):
    assert _lanes(request) == {LANES["test_lanes.py"]}


@pytest.mark.pipeline
def test_a_tests_own_lane_marker_replaces_its_files_lane(request):
    assert _lanes(request) == {"pipeline"}

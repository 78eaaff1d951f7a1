"""Each test runs in exactly one lane: its own lane marker if it has one, else its file's (LANES)."""

from __future__ import annotations

import pytest
from conftest import BY_PAGE, LANE_NAMES, LANES, MACHINE_SCOPE, MACHINE_WIDE, SHARED_UNITS, SPREAD, xdist_scope


def _lanes(request: pytest.FixtureRequest) -> set[str]:
    return {m.name for m in request.node.iter_markers() if m.name in LANE_NAMES}


def test_a_test_without_a_marker_runs_in_its_files_lane(request):
    assert _lanes(request) == {LANES["test_lanes.py"]}


@pytest.mark.pipeline
def test_a_tests_own_lane_marker_replaces_its_files_lane(request):
    assert _lanes(request) == {"pipeline"}


def test_the_xdist_units_name_test_files_and_tests_that_exist():
    """Every file a unit of :data:`SHARED_UNITS` or :data:`SPREAD` names has a lane and is in one of
    them only."""
    named = [name for files in SHARED_UNITS.values() for name in files] + list(SPREAD)
    assert len(named) == len(set(named)), named
    assert set(BY_PAGE) <= set(SPREAD), BY_PAGE
    for name in named:
        assert name in LANES, name


def test_machine_wide_files_share_one_unit_and_spread_files_split():
    assert {xdist_scope(f"tests/{name}::test_x[a]") for name in MACHINE_WIDE} == {MACHINE_SCOPE}
    assert xdist_scope("tests/test_grading.py::test_a[x]") == xdist_scope("tests/test_grading.py::test_b") \
        == "tests/test_grading.py"
    assert xdist_scope("tests/test_site.py::test_a[x]") == "tests/test_site.py::test_a[x]"
    page = "tests/test_site_phone.py::book/04-scaling.html"
    assert xdist_scope("tests/test_site_phone.py::test_a[book/04-scaling.html-390-True]") == page
    assert xdist_scope("tests/test_site_phone.py::test_b[book/04-scaling.html]") == page
    assert xdist_scope("tests/test_site_phone.py::test_c[print]") == "tests/test_site_phone.py::test_c[print]"
    spread = "tests/test_notation.py::test_x"
    assert xdist_scope(f"{spread}[dark]") == f"{spread}[dark]" != xdist_scope(f"{spread}[light]")
    a11y = "tests/test_site_a11y.py"
    assert xdist_scope(f"{a11y}::test_x[book/intro.html-dark]") == f"{a11y}::book/intro.html"

"""Collect's rules on their own (autograder/intake/inbound.py), as properties: the hand-in time
is never earlier than the grader side observed (less the tolerance) nor in the future, and the
byte caps hold for any sizes of files, counted while copying.

The whole path, with real accounts and nbgrader's collect, is tests/test_exchange_collect.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.errors import RefusedHandin
from autograder.intake.inbound import Caps, copy_handin, handin_time

BASE = datetime(2026, 12, 7, 12, 0, 0)
seconds = st.floats(min_value=-3 * 86400, max_value=3 * 86400, allow_nan=False)


@given(claimed=seconds, observed=seconds, after=st.floats(min_value=0, max_value=86400), tolerance=st.sampled_from(
    [0.0, 1.0, 60.0]))
def test_the_handin_time_is_never_before_what_was_observed_nor_in_the_future(claimed, observed, after, tolerance):
    seen = BASE + timedelta(seconds=observed)
    now = seen + timedelta(seconds=after)  # the grader side saw the files change before it looked
    claim = BASE + timedelta(seconds=claimed)
    when, why = handin_time(claim, seen, now, tolerance)
    slack = timedelta(seconds=tolerance)
    assert seen - slack <= when <= now + slack
    if seen - slack <= claim <= now + slack:
        assert (when, why) == (claim, None)
    else:
        assert when == seen and why


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(min_value=0, max_value=5000), min_size=1, max_size=6),
       file_cap=st.integers(min_value=0, max_value=5000), handin_cap=st.integers(min_value=0, max_value=12000))
def test_the_byte_caps_hold_for_any_sizes(sizes, file_cap, handin_cap):
    tmp = Path(tempfile.mkdtemp())
    try:
        src = tmp / "handin"
        src.mkdir()
        for i, size in enumerate(sizes):
            (src / f"f{i}").write_bytes(os.urandom(size))
        dest = tmp / "copy"
        kept = [s for s in sizes if s <= file_cap]
        caps = Caps(file_bytes=file_cap, handin_bytes=handin_cap, entries=100)
        if sum(kept) > handin_cap:
            with pytest.raises(RefusedHandin):
                copy_handin(src, dest, os.geteuid(), caps)
            return
        refused = copy_handin(src, dest, os.geteuid(), caps)
        copied = {p.name: p.read_bytes() for p in dest.iterdir()}
        assert copied == {f"f{i}": (src / f"f{i}").read_bytes() for i, s in enumerate(sizes) if s <= file_cap}
        assert len(refused) == len(sizes) - len(kept) and all("larger than the cap" in r for r in refused)
    finally:
        shutil.rmtree(tmp)

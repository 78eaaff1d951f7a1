"""The guide's testing section fits on one screen and cites costs ``make bench`` prints; the xdist
scheduling rules are written once, next to the code (``tests/conftest.py``)."""

from __future__ import annotations

import re

from grading_support import ROOT

from benchmarks.dev_loop import LOOP

GUIDE = ROOT / "docs" / "contributing.md"


def _section() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    body = text.split("\n## Testing\n", 1)[1].split("\n## ", 1)[0]
    return [ln for ln in body.splitlines() if ln.strip()]


def test_the_testing_section_fits_on_one_screen():
    lines = _section()
    assert len(lines) <= 16, f"docs/contributing.md, Testing: {len(lines)} lines (a screen is 16)"
    assert not re.search(r"\d+(\.\d+)? ?(s|min)\b", "\n".join(lines)), "timings belong to make bench, not the guide"


def test_each_cost_the_section_cites_is_a_line_make_bench_prints():
    rows = [ln.split("|")[1:-1] for ln in _section() if ln.startswith("| ") and "---" not in ln][1:]
    assert [r[0].strip() for r in rows] == ["one test file", "one lane", "one exercise", "everything"]
    for what, typed, cost in rows:
        (cited,) = re.findall(r'"([^"]+)"', cost)
        measured = [" ".join(a for a in c if a != "-s") for label, c in LOOP if label.startswith(cited)]
        assert measured, f"make bench prints no {cited!r}"
        target = re.search(r"make [\w-]+|tests/\w+\.py", typed)
        assert target and target.group(0) in measured[0], (what, typed, measured[0])


def test_the_xdist_rules_are_written_once_next_to_the_code():
    conftest = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    block = conftest.split("# --- Scheduling under pytest-xdist", 1)[1].split("\n\n", 1)[0]
    for name in ("MACHINE_WIDE", "STUDENT_BUNDLE", "SPREAD", "BY_PAGE", "-n 3 --dist loadscope", "local_ports.py"):
        assert name in block, name
    assert "Scheduling under pytest-xdist" in "\n".join(_section())
    assert "loadscope" not in GUIDE.read_text(encoding="utf-8")

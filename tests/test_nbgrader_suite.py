"""``make test-nbgrader`` (tests/nbgrader_suite/): the comparison of nbgrader's own tests, vanilla and
with the course's drop-ins, fails on an unlisted or stale difference; the drop-ins are active where
it says they are. (The suite itself runs in its own target: about a quarter of an hour.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from nbgrader_suite import run

ROOT = Path(__file__).resolve().parents[1]


def test_an_unlisted_a_stale_and_a_mislisted_difference_each_fail_in_one_line():
    vanilla = {"a::same": "passed", "a::refused": "passed", "a::fixed": "passed", "a::other": "passed"}
    dropins = {"a::same": "passed", "a::refused": "failed", "a::fixed": "passed", "a::other": "error"}
    listed = {"a::refused": {"vanilla": "passed", "dropins": "failed", "reason": "by design"}}
    assert run.compare(vanilla, dropins, listed) == [
        "a::other: passed on vanilla nbgrader, error with the course's drop-ins; not listed in differences.json"]
    listed["a::fixed"] = {"vanilla": "passed", "dropins": "failed", "reason": "merged gradebook"}
    listed["a::other"] = {"vanilla": "passed", "dropins": "failed", "reason": "?"}
    listed["a::gone"] = {"vanilla": "passed", "dropins": "failed", "reason": "?"}
    assert run.compare(vanilla, dropins, listed) == [
        "a::fixed: listed as differing, but passed in both runs: remove its entry from differences.json",
        "a::other: passed vanilla, error with drop-ins; listed as passed / failed",
        "a::gone: listed in differences.json but run in neither"]


_OUTCOMES = st.sampled_from(["passed", "failed", "error", "skipped"])
_RUNS = st.dictionaries(st.sampled_from([f"m.T::t{i}" for i in range(8)]), st.tuples(_OUTCOMES, _OUTCOMES))


@given(_RUNS, st.data())
def test_listing_exactly_the_differences_passes_and_each_missing_or_extra_entry_is_one_line(pairs, data):
    vanilla = {k: v for k, (v, _) in pairs.items()}
    dropins = {k: d for k, (_, d) in pairs.items()}
    differing = {k: {"vanilla": v, "dropins": d, "reason": "r"} for k, (v, d) in pairs.items() if v != d}
    assert run.compare(vanilla, dropins, differing) == []
    if differing:
        gone = data.draw(st.sampled_from(sorted(differing)))
        problems = run.compare(vanilla, dropins, {k: e for k, e in differing.items() if k != gone})
        assert len(problems) == 1 and problems[0].startswith(f"{gone}: ") and "not listed" in problems[0]
    same = [k for k, (v, d) in pairs.items() if v == d]
    if same:
        extra = data.draw(st.sampled_from(same))
        problems = run.compare(vanilla, dropins, {**differing, extra: {"vanilla": "passed", "dropins": "failed",
                                                                        "reason": "r"}})
        assert len(problems) == 1 and problems[0].startswith(f"{extra}: listed as differing")


def test_junit_outcomes_and_the_list_of_differences_are_read(tmp_path):
    junit = tmp_path / "run.xml"
    junit.write_text('<testsuites><testsuite>'
                     '<testcase classname="apps.test_x.TestX" name="test_ok"/>'
                     '<testcase classname="apps.test_x.TestX" name="test_bad"><failure message="x"/></testcase>'
                     '<testcase classname="apps.test_x.TestX" name="test_broken"><error message="x"/></testcase>'
                     '<testcase classname="apps.test_x.TestX" name="test_skip"><skipped message="x"/></testcase>'
                     '</testsuite></testsuites>')
    assert run.outcomes(junit) == {"apps.test_x.TestX::test_ok": "passed", "apps.test_x.TestX::test_bad": "failed",
                                   "apps.test_x.TestX::test_broken": "error", "apps.test_x.TestX::test_skip": "skipped"}
    listed = run.listed_differences()  # the project's list: every entry has both outcomes and a reason
    assert all(e["reason"].strip() for e in listed.values())
    bad = tmp_path / "differences.json"
    bad.write_text('{"differences": {"a::b": {"vanilla": "passed", "dropins": "failed"}}}')
    try:
        run.listed_differences(bad)
    except ValueError as exc:
        assert str(exc) == "differences.json: a::b needs reason"
    else:
        raise AssertionError("an entry without its reason was accepted")


def test_the_drop_in_run_has_the_course_s_drop_ins_and_the_vanilla_run_has_none(tmp_path):
    probe = ("import nbgrader.api, nbgrader.preprocessors as p\n"
             "from nbgrader.apps.baseapp import NbGrader\n"
             "from nbgrader.converters import Autograde, GenerateFeedback, GenerateAssignment\n"
             "names = [c.__name__ for c in Autograde().sanitize_preprocessors + Autograde().autograde_preprocessors"
             " + GenerateFeedback().preprocessors + GenerateAssignment().preprocessors]\n"
             "extra = NbGrader().build_extra_config()\n"
             "print(p.OverwriteCells.__name__, nbgrader.api.create_engine.__name__, sorted(set(names)),"
             " extra.GenerateFeedback.exporter_class, extra.ExportApp.plugin_class)\n")
    shown = {}
    for name in ("vanilla", "dropins"):
        env = run._environment(name == "dropins", tmp_path)
        assert env["AUTOGRADER_WORKDIR"] == str(tmp_path / "work")  # the course's work folder: the run's own
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shown[name] = done.stdout
    for course in ("OverwriteCellsPreloaded", "SaveAutoGradesPreloaded", "CheckCellMetadataCompiled",
                   "GetGradesWithQueue", "shared_engine", "OfflineFeedbackExporter", "QuotedCsvExportPlugin"):
        assert course in shown["dropins"] and course not in shown["vanilla"], course
    assert "'OverwriteCells'" not in shown["dropins"] and "'CheckCellMetadata'" not in shown["dropins"]
    assert os.environ.get("SELFATTN_NBGRADER_DROPINS") != "1"  # this process stays vanilla

"""Shared test configuration: the lanes of the suite, no skipped tests, and a hypothesis profile
sized for 2-core CI machines.

Every test file belongs to one lane, declared in :data:`LANES` (a file missing there stops the run
with one line saying where to add it). The lanes are pytest markers:

- ``unit``: in this process or a few quick subprocesses; no built site, no browser, no graded class,
  no new environment. ``make test-fast`` runs ruff and this lane only.
- ``pipeline``: grades submissions (sandbox runs, nbgrader's own commands, a Dask or Slurm cluster).
- ``browser``: reads the built site, the PDF or a page in headless Chromium (needs ``make book``).
- ``sweep``: in this process, but many seeds over every catalogued mistake (minutes of CPU); not in
  ``make test-fast``, always in ``make test``.
- ``install``: builds and installs something in a fresh environment (the student bundle).

A single test may carry its own lane marker (``@pytest.mark.unit`` in a pipeline file, say): that
lane replaces its file's, so a cheap in-process test in a slow file runs in the fast loop too.

``make test`` runs every lane on three pytest-xdist workers; how its work is shared out is the
comment block *Scheduling under pytest-xdist* below, the one place it is written down. A test that
cannot run here fails with its reason: a skip counts as a failure (the suite must never pass by not
running).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "course", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("course")

#: The lane of every test file (see the module docstring).
LANES: dict[str, str] = {
    "test_answer.py": "unit",
    "test_architecture.py": "unit",
    "test_architecture_page.py": "unit",
    "test_no_silent_workspace.py": "unit",
    "test_catalogue_headers.py": "unit",
    "test_cell_metadata.py": "unit",
    "test_class_report_sections.py": "unit",
    "test_feedback_budget.py": "unit",
    "test_checks.py": "unit",
    "test_judging_edges.py": "unit",
    "test_sweep_support.py": "unit",
    "test_compare.py": "unit",
    "test_widgets_lazy.py": "unit",
    "test_findings.py": "unit",
    "test_findings_edges.py": "unit",
    "test_results_as_data.py": "unit",
    "test_float32_answers.py": "unit",
    "test_import_graph.py": "unit",
    "test_problem20_reading.py": "unit",
    "test_public_checks_catch.py": "unit",
    "test_dependency_inputs_covered.py": "unit",
    "test_dependency_contracts.py": "unit",
    "test_ignored_notebooks.py": "pipeline",
    "test_public_cases_cover_hidden_kinds.py": "unit",
    "test_identities.py": "unit",
    "test_notes_data.py": "unit",
    "test_staging_repairs.py": "unit",
    "test_heads.py": "unit",
    "test_training.py": "unit",
    "test_text_layer.py": "unit",
    "test_book_defects.py": "unit",
    "test_hidden_draws.py": "sweep",
    "test_inbound_rules.py": "unit",
    "test_error_tree.py": "unit",
    "test_verdict_record.py": "unit",
    "test_run_workspace_edges.py": "unit",
    "test_grade_commands.py": "unit",
    "test_contributing_guide.py": "unit",
    "test_inbound_entries.py": "unit",
    "test_untrusted_input.py": "unit",
    "test_intake_zips.py": "unit",
    "test_intake_refusals.py": "unit",
    "test_history.py": "unit",
    "test_history_edges.py": "unit",
    "test_blame_logic.py": "unit",
    "test_hidden_inputs.py": "unit",
    "test_sanitise.py": "unit",
    "test_sanitise_bounds.py": "unit",
    "test_settings_chain.py": "unit",
    "test_lecture_numbers.py": "unit",
    "test_lms_exports.py": "unit",
    "test_lms_rows.py": "unit",
    "test_late_policy.py": "unit",
    "test_late_gradebook.py": "unit",
    "test_final_score_arithmetic.py": "unit",
    "test_numerics.py": "unit",
    "test_python_versions.py": "unit",
    "test_readme.py": "unit",
    "test_regrade_reason.py": "unit",
    "test_sandbox_seccomp.py": "unit",
    "test_result_channel.py": "unit",
    "test_sandbox_user.py": "unit",
    "test_site_figures.py": "unit",
    "test_math_text.py": "unit",
    "test_measure.py": "unit",
    "test_nbgrader_contract.py": "unit",
    "test_nbgrader_internals.py": "unit",
    "test_nbgrader_suite.py": "unit",
    "test_gradebook_engine.py": "unit",
    "test_grades_csv_order.py": "unit",
    "test_spreadsheet_cells.py": "unit",
    "test_grading_cost.py": "unit",
    "test_report_gradebook_bulk.py": "unit",
    "test_report_template.py": "unit",
    "test_grade_startup.py": "unit",
    "test_withheld.py": "unit",
    "test_verdict_key.py": "unit",
    "test_decide_parts.py": "unit",
    "test_lanes.py": "unit",
    "test_exercise_tools.py": "unit",
    "test_distributed.py": "pipeline",
    "test_exchange_collect.py": "pipeline",
    "test_hub_commands.py": "pipeline",
    "test_hub_course_packages.py": "pipeline",
    "test_grading_cost_identical.py": "pipeline",
    "test_intake_grades.py": "pipeline",
    "test_documented_commands.py": "pipeline",
    "test_fault_blame.py": "pipeline",
    "test_grading.py": "pipeline",
    "test_loop_defects.py": "pipeline",
    "test_malformed.py": "pipeline",
    "test_nbgrader_setup.py": "pipeline",
    "test_notebooks_execute.py": "pipeline",
    "test_page_loads.py": "unit",
    "test_plain_nbgrader.py": "pipeline",
    "test_release.py": "pipeline",
    "test_release_aside.py": "pipeline",
    "test_late_work.py": "pipeline",
    "test_new_exercise.py": "pipeline",
    "test_sandbox_caps.py": "pipeline",
    "test_security.py": "pipeline",
    "test_value_answer_grading.py": "pipeline",
    "test_settings.py": "pipeline",
    "test_side_channels.py": "pipeline",
    "test_slurm.py": "pipeline",
    "test_warm_sandbox.py": "pipeline",
    "test_warm_sandbox_channels.py": "pipeline",
    "test_oracle.py": "pipeline",
    "test_oracle_limits.py": "unit",
    "test_oracle_flood.py": "pipeline",
    "test_decisions.py": "pipeline",
    "test_pool_start_methods.py": "pipeline",
    "test_registration_cache.py": "pipeline",
    "test_feedback_page.py": "browser",
    "test_hostile_tex_pages.py": "browser",
    "test_hand_grading_loop.py": "browser",
    "test_same_score_everywhere.py": "browser",
    "test_formgrader_raw_labels.py": "browser",
    "test_hub.py": "browser",
    "test_hub_control.py": "unit",
    "test_hub_accounts.py": "unit",
    "test_hub_caps.py": "unit",
    "test_hub_class.py": "browser",
    "test_hub_formgrader_publish.py": "browser",
    "test_hub_roster.py": "browser",
    "test_hub_term.py": "browser",
    "test_hub_publish_parts.py": "unit",
    "test_hub_publish_targets.py": "unit",
    "test_students_site.py": "unit",
    "test_browser_driver.py": "browser",
    "test_hub_slurm.py": "browser",
    "test_instructor_loop.py": "browser",
    "test_no_answers_shipped.py": "browser",
    "test_report.py": "browser",
    "test_site.py": "browser",
    "test_site_training.py": "browser",
    "test_site_a11y.py": "browser",
    "test_site_pdf.py": "browser",
    "test_site_phone.py": "browser",
    "test_site_render.py": "browser",
    "test_site_reading.py": "browser",
    "test_notation.py": "browser",
    "test_term.py": "browser",
    "test_check_agrees_with_grader.py": "install",
    "test_hand_in.py": "install",
    "test_hand_in_drawing.py": "unit",
    "test_hand_in_list.py": "unit",
    "test_hand_in_syntax.py": "unit",
    "test_module_state.py": "pipeline",
    "test_stale_answer.py": "pipeline",
    "test_install_requirements.py": "pipeline",
    "test_student_bundle.py": "install",
    "test_student_install.py": "install",
    "test_intake_scan.py": "unit",
    "test_ignored_notebook_names.py": "unit",
    "test_lateness_words.py": "unit",
    "test_json_formats.py": "unit",
    "test_decide_runs.py": "unit",
}
LANE_NAMES = ("unit", "pipeline", "browser", "sweep", "install")

# --- Scheduling under pytest-xdist ---------------------------------------------------------------
# ``make test`` runs pytest with ``-n 3 --dist loadscope``, in units of work :func:`xdist_scope`
# defines, each unit on one worker with its tests in file order (:func:`pytest_xdist_make_scheduler`):
#
# - MACHINE_WIDE: the files that use what the machine has one of (fixed system accounts, the one-node
#   Slurm, the hub, Dask clusters) form one unit that starts first and never runs beside itself. A new
#   file that starts users, Slurm, a hub or a cluster joins it.
# - STUDENT_BUNDLE: the files sharing the session's student bundle and its install, one unit, so both
#   are built once.
# - Every other file is a unit of its own, so its module fixtures (a graded class, say) are built once;
#   a new file needs nothing.
# - LONG_FIRST: a file that is one long unit (the term on a hub) starts next, on a worker of its own.
# - SPREAD: the files whose tests only read the built site (or sweep seeds) are shared out one by one,
#   last, so the workers end together; BY_PAGE files page by page, because the tests of one page read
#   what a single load of it measured (``PageLoads`` and ``measured()`` in ``tests/browser_support.py``):
#   a new check of a page joins its file's load rather than opening the page again.
#
# Three workers on two cores: the hub, formgrader, Slurm and browser tests spend much of their time
# waiting on servers and page loads, and a third worker fills that wait (with two, the cores were
# about 90 % busy; with three, 96-99 %). A server a test starts takes its port below the ephemeral
# range (``scripts/local_ports.py``, as ``free_port()`` in ``tests/browser_support.py``), where no
# browser or port-0 server of another worker can take it first. A sweep judging many answers on the
# same cases takes :func:`remembered_tolerances` (a case's float32 tolerance, computed once per module).
# What each lane costs is printed by ``make bench`` (``python -m benchmarks --only loop``).

#: Test files that use what this machine has one of: fixed system accounts (the hub's, the Slurm
#: hub's), a one-node Slurm and its munge, the hub's state and ports, Dask clusters. Under
#: pytest-xdist (``make test``: ``-n 3 --dist loadscope``, see :class:`CourseScheduling`) they run on
#: one worker, one after another in file order, never beside each other; they start first, being the
#: longest chain.
MACHINE_WIDE = ("test_distributed.py", "test_hub.py", "test_hub_slurm.py", "test_slurm.py", "test_hub_commands.py",
                "test_hub_course_packages.py")
MACHINE_SCOPE = "machine-wide"
#: Files that use the session's student bundle and its install (the ``student_bundle`` and
#: ``installed_student_course`` fixtures): one unit of work, so that each is built once.
STUDENT_BUNDLE = ("test_check_agrees_with_grader.py", "test_hand_in.py", "test_no_answers_shipped.py",
                  "test_student_bundle.py", "test_student_install.py")
#: Files that are one long unit of work (a whole term on a hub of its own, about 12 minutes): they
#: start right after the machine-wide chain, each on a worker of its own, so that no worker is left
#: with one at the end.
LONG_FIRST = ("test_hub_term.py",)
#: The units of work that span files: name -> its files
SHARED_UNITS: dict[str, tuple[str, ...]] = {MACHINE_SCOPE: MACHINE_WIDE, "student-bundle": STUDENT_BUNDLE}
#: Files whose tests are shared out one by one between the xdist workers: each test stands alone and
#: the file's module fixtures are cheap (a Chromium started), so running them on every worker costs
#: less than it gains. Not a file that keeps what one page load measured for its other tests
#: (``tests/test_site_render.py``): shared out, each worker would load every page again; nor a file
#: with an expensive fixture (a graded class: the class report's audit lives in ``test_report.py``).
#: Every other file runs whole on one worker, its module fixtures built once as in a serial run.
SPREAD: tuple[str, ...] = ("test_site_phone.py", "test_site_a11y.py", "test_site.py", "test_site_reading.py",
                           "test_notation.py", "test_hidden_draws.py", "test_float32_answers.py")


#: Files of :data:`SPREAD` whose tests of one page of the site read what a single load of that page
#: measured: they are shared out page by page (the page's path in the test's parameters), each page's
#: tests on one worker.
BY_PAGE = ("test_site_phone.py", "test_site_a11y.py", "test_site.py")


def xdist_scope(nodeid: str) -> str:
    """The unit of work ``nodeid`` belongs to under pytest-xdist: one of :data:`SHARED_UNITS`, its
    file, its page of the site (:data:`BY_PAGE`) or the test alone (:data:`SPREAD`). Tests of one unit
    run on one worker, in collection order."""
    path, _, rest = nodeid.partition("::")
    name = Path(path).name
    for unit, files in SHARED_UNITS.items():
        if name in files:
            return unit
    if name not in SPREAD:
        return path
    page = re.search(r"[\w./-]+?\.html", rest.partition("[")[2]) if name in BY_PAGE else None
    return f"{path}::{page.group(0)}" if page else nodeid


def _run_order(item: pytest.Item) -> int:
    """Where a test's unit of work comes in an xdist run: the machine-wide chain first, then the long
    files (:data:`LONG_FIRST`), then whole files, then the tests shared out one by one (small units
    last, so the workers end together)."""
    scope = xdist_scope(item.nodeid)
    if scope == MACHINE_SCOPE:
        return 0
    if Path(scope.partition("::")[0]).name in LONG_FIRST:
        return 1
    return 3 if scope == item.nodeid else 2


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadscope`` with the units of :func:`xdist_scope`, in the order the workers collected
    (:func:`_run_order`) rather than by their number of tests."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CourseScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    config.option.loadscopereorder = False
    return CourseScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its lane (its own marker, else its file's); a file without one is a
    usage error. In an xdist worker, order the tests by :func:`_run_order` (a serial run keeps file
    order)."""
    unknown = sorted({Path(str(item.fspath)).name for item in items} - set(LANES))
    if unknown:
        raise pytest.UsageError(f"test files without a lane: {', '.join(unknown)}: add each to LANES in "
                                f"tests/conftest.py (one of {', '.join(LANE_NAMES)})")
    for item in items:
        own = [m.name for m in item.iter_markers() if m.name in LANE_NAMES]
        if len(set(own)) > 1:
            raise pytest.UsageError(f"{item.nodeid}: more than one lane marker ({', '.join(sorted(set(own)))})")
        if not own:
            item.add_marker(getattr(pytest.mark, LANES[Path(str(item.fspath)).name]))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_run_order)


@pytest.fixture(scope="session")
def student_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The student bundle as ``make student`` builds it (``selfattn-course/`` and its zip), built once
    for every test of the bundle (they read it; each unpacks its own copy to change,
    ``student_support.unpacked_course``)."""
    from student_support import built_bundle

    return built_bundle(tmp_path_factory)


@pytest.fixture(scope="session")
def student_install(student_bundle: Path, tmp_path_factory: pytest.TempPathFactory):
    """The bundle unpacked and installed as START HERE says, by the system python3, after an install
    stopped by Ctrl-C, one killed and an older one's broken ``.venv`` (``student_support.InstallAttempts``,
    which records what each left): one pip install of the course for the whole session."""
    from student_support import installed_course

    return installed_course(student_bundle, tmp_path_factory)


@pytest.fixture(scope="session")
def installed_student_course(student_install) -> Path:
    """The installed course folder of :func:`student_install`, for the tests that use a student's
    install (they add files of their own to it, never change what is there)."""
    return student_install.course


@pytest.fixture(scope="module")
def remembered_tolerances() -> Iterator[dict]:
    """The records' comparisons with :func:`selfattn.checks.record.tolerance` remembered per case for
    one test module (``sweep_support``): a sweep meets the same cases with every wrong answer of an
    exercise. Returns the table of what was computed."""
    from sweep_support import remember_tolerances

    with pytest.MonkeyPatch.context() as patch:
        yield remember_tolerances(patch)


@pytest.fixture(scope="session")
def site_browser() -> Iterator[tuple[str, Any]]:
    """The built site served on loopback and read in one headless Chromium profile
    (:func:`browser_support.served_browser`), shared by the files that only read the site: one browser
    start per test process, and each page's scripts compiled once for all of them. Pages share the
    profile's cache, nothing else (:class:`browser_support.SiteBrowser`)."""
    from browser_support import served_browser

    with served_browser() as pair:
        yield pair


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course's Dask TLS certificates, as ``make dask-certs`` writes them (one set per module)."""
    from autograder.pipeline import dask_tls

    folder = tmp_path_factory.mktemp("certs") / "dask-tls"
    dask_tls.write(folder)
    return folder


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A skipped test fails, with its reason: the suite never passes by not running something."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"a test may not be skipped (it must run, or fail with its reason): {reason}"


#: a child of this test process that no test knows of (:func:`_ends_no_process_it_did_not_start`)
_SENTINEL: list = []


@pytest.fixture(autouse=True)
def _ends_no_process_it_did_not_start(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that ends a process it did not start: this process keeps a sentinel child (as it keeps
    Playwright's driver, which a test standing this process in for the hub once ended for every later
    browser test of its worker); a test after which the sentinel has ended fails in its teardown, named."""
    import subprocess
    import sys

    if not _SENTINEL or _SENTINEL[0].poll() is not None:
        _SENTINEL[:] = [subprocess.Popen([sys.executable, "-c", "import time\ntime.sleep(10**6)"],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)]
    yield
    if _SENTINEL[0].poll() is not None:
        code = _SENTINEL.pop().returncode
        pytest.fail(f"{request.node.nodeid} ended a process it did not start: a child of the test process "
                    f"(exit status {code}); end only the processes the test started", pytrace=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop this process's Playwright (``browser_support.driver``), if a test started it, and the sentinel."""
    import sys

    support = sys.modules.get("browser_support")
    if support is not None:
        support.stop_driver()
    while _SENTINEL:
        sentinel = _SENTINEL.pop()
        sentinel.kill()
        sentinel.wait()

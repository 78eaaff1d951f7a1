"""The instructors' guide's commands (``docs/instructors.md``), run as it writes them: ``./nbgrader ...``
(and ``make nbgrader``, ``make collect``) from the repository root and from another folder; nbgrader
typed at the root fails in one line and leaves nothing there; ``nbgrader export --to`` and
nbgrader's own export options; the placeholder site address; ``make grade``'s progress read line by
line from a pipe. (That every guide types the instructors' nbgrader commands through ``./nbgrader``
is read, without running anything, in ``tests/test_readme.py``.)

Each test grades or registers into a temporary course and work folder (``AUTOGRADER_COURSE``,
``AUTOGRADER_WORKDIR``) with a temporary user configuration (``JUPYTER_CONFIG_DIR``), so the
repository's own ``autograder/`` is never written.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS, answer_cell, place, with_answers
from nbgrader.api import Gradebook
from traitlets.config import Config

from autograder.course import site_address
from autograder.nbgrader_ext.cli import resolve_paths
from autograder.outputs.csv_export import QuotedCsvExportPlugin

BIN = Path(sys.executable).parent
WRAPPER = ROOT / "nbgrader"


@pytest.fixture
def course(tmp_path: Path) -> dict[str, str]:
    """An environment with a one-notebook course, an empty work folder and an empty user config."""
    (tmp_path / "course" / "solutions" / "attention").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "01-embeddings.ipynb", tmp_path / "course" / "solutions" / "attention")
    (tmp_path / "course" / "notebooks" / "attention").mkdir(parents=True)
    shutil.copy(RELEASE / "01-embeddings.ipynb", tmp_path / "course" / "notebooks" / "attention")
    for name in ("work", "config", "elsewhere", "exchange"):
        (tmp_path / name).mkdir()
    (tmp_path / "config" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(tmp_path / 'exchange')!r}\n")
    return dict(os.environ, AUTOGRADER_COURSE=str(tmp_path / "course"), AUTOGRADER_WORKDIR=str(tmp_path / "work"),
                JUPYTER_CONFIG_DIR=str(tmp_path / "config"), PYDEVD_DISABLE_FILE_VALIDATION="1")


def run(args: list[str], cwd: Path, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if ok:
        assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result


def students(work: Path) -> set[str]:
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        return {s.id for s in gb.students}


# --- the wrapper and the make targets ------------------------------------------------------------

def test_wrapper_works_from_the_root_and_from_any_folder(course):
    work, elsewhere = Path(course["AUTOGRADER_WORKDIR"]), Path(course["AUTOGRADER_COURSE"]).parent / "elsewhere"
    # as the instructors' guide writes it, from the repository root, with a plain PATH (no environment activated)
    env = dict(course, PATH="/usr/bin:/bin")
    run(["./nbgrader", "db", "student", "add", "alice", "--first-name", "Alice"], ROOT, env)
    # a roster file named relative to where the command is typed, from another folder
    (elsewhere / "roster.csv").write_text("id,first_name,last_name,email\nbob,Bob,B,bob@example.invalid\n")
    run([str(WRAPPER), "db", "student", "import", "roster.csv"], elsewhere, env)
    assert students(work) == {"alice", "bob"}
    listed = run([str(WRAPPER), "db", "student", "list"], elsewhere, env)
    assert "alice" in listed.stdout + listed.stderr
    assert not (ROOT / "gradebook.db").exists() and not (elsewhere / "gradebook.db").exists()


def test_make_targets_run_nbgrader_with_the_course_configuration(course):
    work, elsewhere = Path(course["AUTOGRADER_WORKDIR"]), Path(course["AUTOGRADER_COURSE"]).parent / "elsewhere"
    run(["make", "-s", "nbgrader", "ARGS=db student add carol --first-name Carol"], ROOT, course)
    run(["make", "-s", "-C", str(ROOT), "nbgrader", "ARGS=db student add dave"], elsewhere, course)
    assert students(work) == {"carol", "dave"}
    # the guide's release and collect through the exchange, a student fetching and submitting between
    run(["make", "-s", "nbgrader", "ARGS=generate_assignment attention --force"], ROOT, course)
    run([str(WRAPPER), "release_assignment", "attention"], elsewhere, course)
    home = elsewhere / "carol"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(elsewhere.parent / 'exchange')!r}\n"
        "c.CourseDirectory.course_id = 'self-attention'\n")
    student = dict(course, HOME=str(home), JUPYTER_CONFIG_DIR=str(home))
    run([str(BIN / "nbgrader"), "fetch_assignment", "attention", "--student=carol"], home, student)
    run([str(BIN / "nbgrader"), "submit", "attention", "--student=carol"], home, student)
    run(["make", "-s", "collect"], ROOT, course)
    assert (work / "submitted" / "carol" / "attention" / "01-embeddings.ipynb").exists()
    missing = run(["make", "-s", "nbgrader"], ROOT, course, ok=False)
    assert missing.returncode != 0 and 'ARGS="collect attention"' in missing.stderr
    assert not (ROOT / "gradebook.db").exists()


def test_make_formgrader_passes_port_and_token():
    dry = run(["make", "-n", "formgrader", "PORT=8899", "TOKEN=s3cret"], ROOT, dict(os.environ))
    assert "-m autograder.formgrader --port 8899 --token s3cret" in dry.stdout
    from autograder import formgrader
    argv = formgrader.command(port=8899, token="s3cret")
    assert "--port=8899" in argv and "--IdentityProvider.token=s3cret" in argv


def test_relative_file_names_mean_what_they_meant_where_typed(tmp_path):
    (tmp_path / "roster.csv").write_text("id\n")
    (tmp_path / "attention").mkdir()
    args = ["db", "student", "import", "roster.csv", "attention", "--to", "out.csv", "--CsvExportPlugin.to=b.csv"]
    assert resolve_paths(args, tmp_path) == [
        "db", "student", "import", str(tmp_path / "roster.csv"), "attention",
        "--to", str(tmp_path / "out.csv"), f"--CsvExportPlugin.to={tmp_path / 'b.csv'}"]


# --- nbgrader from the wrong folder ---------------------------------------------------------------

def test_nbgrader_at_the_repository_root_fails_in_one_line_and_leaves_nothing(course):
    before = set(os.listdir(ROOT))
    try:
        result = run([str(BIN / "nbgrader"), "collect", "attention"], ROOT, dict(course, PATH=f"{BIN}:/usr/bin:/bin"),
                     ok=False)
        assert result.returncode != 0
        lines = [ln for ln in (result.stdout + result.stderr).splitlines() if ln.strip()]
        assert len(lines) == 1, lines
        assert "./nbgrader collect attention" in lines[0] and "autograder/" in lines[0]
        assert set(os.listdir(ROOT)) == before
    finally:  # on the old code: the litter this test is about
        for name in set(os.listdir(ROOT)) - before:
            if name == "gradebook.db":
                (ROOT / name).unlink()


def test_the_root_guard_leaves_student_commands_and_servers_alone(course):
    # a student command at the root still runs (the guard is only for the instructor's commands)
    listed = run([str(BIN / "nbgrader"), "list"], ROOT, dict(course, PATH=f"{BIN}:/usr/bin:/bin"))
    assert "autograder/" not in listed.stderr
    # nbgrader's Jupyter extensions load the configuration of the server's root folder (the repository)
    load = "from nbgrader.apps import NbGrader; app = NbGrader(); app.load_config_file(); print('loaded')"
    loaded = run([sys.executable, "-c", load], ROOT, dict(course, TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR="1"))
    assert loaded.stdout.strip() == "loaded"


# --- nbgrader export ------------------------------------------------------------------------------

def test_nbgrader_export_honours_to_and_nbgraders_options(course):
    work, elsewhere = Path(course["AUTOGRADER_WORKDIR"]), Path(course["AUTOGRADER_COURSE"]).parent / "elsewhere"
    run([str(WRAPPER), "db", "assignment", "add", "attention"], ROOT, course)
    run([str(WRAPPER), "db", "student", "add", "=cmd|x", "--last-name", "@SUM(A1)"], ROOT, course)
    run([str(WRAPPER), "export", "--to", "mine.csv"], elsewhere, course)
    run([str(WRAPPER), "export", "--CsvExportPlugin.to=theirs.csv"], elsewhere, course)
    assert not (work / "grades.csv").exists()
    for name in ("mine.csv", "theirs.csv"):
        text = (elsewhere / name).read_text()
        assert text.startswith('"assignment","duedate"'), text  # every field quoted
        rows = list(csv.DictReader(text.splitlines()))
        assert [(r["student_id"], r["last_name"]) for r in rows] == [("'=cmd|x", "'@SUM(A1)")]  # formulas neutralised
    # with no option: the course's grades.csv, as before
    run([str(WRAPPER), "export"], elsewhere, course)
    assert (work / "grades.csv").exists() and not (elsewhere / "grades.csv").exists()
    # a user-level c.CsvExportPlugin.to reaches nbgrader export (nbgrader's documented class) ...
    Path(course["JUPYTER_CONFIG_DIR"], "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CsvExportPlugin.to = {str(elsewhere / 'configured.csv')!r}\n")
    run([str(WRAPPER), "export"], ROOT, course)
    assert (elsewhere / "configured.csv").exists()


def test_the_course_plugin_is_nbgraders_csv_plugin_and_make_grade_keeps_its_file(tmp_path):
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.plugins import CsvExportPlugin
    from traitlets import Instance
    from traitlets.config import Configurable

    from autograder.errors import RefusedInput
    from autograder.nbgrader_ext.course_folders import course_directory
    from autograder.workspace import Workspace

    class App(Configurable):  # what the plugin reads of nbgrader's ExportApp, its parent
        coursedir = Instance(CourseDirectory)

    assert issubclass(QuotedCsvExportPlugin, CsvExportPlugin)
    for ws in (Workspace(tmp_path / "one", ROOT), Workspace(tmp_path / "two", ROOT)):  # the run's own folder
        app = App(coursedir=CourseDirectory(**course_directory(ws)))
        assert QuotedCsvExportPlugin(parent=app).to == str(ws.grades_csv)
    with pytest.raises(RefusedInput, match="no --to and no nbgrader app"):
        _ = QuotedCsvExportPlugin().to
    config = Config({"CsvExportPlugin": {"to": "/elsewhere.csv"}})
    assert QuotedCsvExportPlugin(config=config).to == "/elsewhere.csv"
    # ... while make grade (autograder.nbgrader_ext.steps.export) writes grades.csv where the guide says
    assert QuotedCsvExportPlugin(config=config, to=str(ws.grades_csv)).to == str(ws.grades_csv)


# --- the site address -----------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "placeholder"), [
    ("https://self-attention-course.example.invalid/", True), ("", True), ("https://uni.example/x/", True),
    ("https://example.org/", True), ("https://course.uni-example.edu/attention/", False),
    ("https://someone.github.io/self-attention/", False)])
def test_placeholder_site_addresses(url, placeholder):
    assert site_address.is_placeholder(url) is placeholder


def test_release_and_student_warn_in_one_line_until_the_site_address_is_set(tmp_path):
    assert site_address.is_placeholder(site_address.configured(ROOT / "_config.yml"))  # the repository's placeholder
    for target in ("release", "student"):
        dry = run(["make", "-n", target], ROOT, dict(os.environ))
        lines = [ln for ln in dry.stdout.splitlines() if not ln.startswith("make[")]  # make -w under make
        assert "autograder.course.site_address" in lines[0], dry.stdout
    warned = run(["make", "-s", "site-address"], ROOT, dict(os.environ))
    assert warned.stdout == ""
    assert warned.stderr.count("\n") == 1 and warned.stderr.startswith("warning: ")
    assert "html: baseurl:" in warned.stderr and "example.invalid" in warned.stderr
    refused = run(["make", "-s", "site-address", "REQUIRE_SITE=1"], ROOT, dict(os.environ), ok=False)
    assert refused.returncode != 0 and refused.stderr.startswith("error: the site address")
    config = tmp_path / "_config.yml"
    config.write_text('html:\n  baseurl: "https://course.uni-example.edu/attention/"\n')
    assert site_address.main(["--strict", "--config", str(config)]) == 0


# --- make grade's progress ------------------------------------------------------------------------

def test_progress_lines_arrive_as_the_work_happens_with_an_honest_rate(course):
    """``python -m autograder.grade`` writing into a pipe (as ``make grade | tee`` or a CI log): each
    progress line is read when it is written, timestamped here, and its rate agrees with the times."""
    work = Path(course["AUTOGRADER_WORKDIR"])
    text = (SOLUTIONS / "01-embeddings.ipynb").read_text()
    # each run of the answer's cell waits a moment, so that the work takes a known time whatever
    # the machine's speed (a warm sandbox grades this notebook in a tenth of a second)
    embed = "".join(answer_cell(json.loads(text), "embed")["source"])
    text = with_answers(text, {"embed": "import time\ntime.sleep(0.3)\n" + embed})
    total = 6
    for i in range(total):
        place(work, f"s{i}", "01-embeddings", text)
    env = {k: v for k, v in course.items() if k != "PYTHONUNBUFFERED"}  # as in an instructor's shell
    proc = subprocess.Popen([sys.executable, "-m", "autograder.grade", "--workers", "2"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    t0, arrivals = time.perf_counter(), []
    for line in proc.stdout:
        arrivals.append((time.perf_counter() - t0, line.rstrip()))
    end = time.perf_counter() - t0
    assert proc.wait(timeout=60) == 0, "\n".join(text for _, text in arrivals)[-3000:]
    print("\n".join(f"{t:6.2f} s  {line}" for t, line in arrivals))
    progress = [(t, line) for t, line in arrivals if re.match(r"\[\d+/\d+\]", line)]
    assert len(progress) == total, arrivals
    first, last = progress[0][0], progress[-1][0]
    # the lines come while grading runs (the nbgrader steps follow), spread over the work
    assert end - last > 0.5, f"progress arrived only at the end: {arrivals}"
    assert last - first > 0.2, f"progress arrived in one burst: {arrivals}"
    for k, (t, line) in enumerate(progress, start=1):
        rate = re.search(r"([\d.]+) notebooks/s", line)
        if rate and t > first:
            observed = (k - 1) / (t - first)
            assert float(rate.group(1)) < 2 * observed + 0.5, f"{line!r} at {t:.2f} s; observed {observed:.2f}/s"

"""The hub's lifecycle pieces that need no hub: when its environments are built again, and how a
stop that runs late is reported, and the signals it starts with."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kind", ["student", "grader"])
def test_a_hub_environment_is_rebuilt_when_anything_its_build_reads_changes(kind, tmp_path, monkeypatch):
    """Every file the hub's environment build hands to the installer, and the installer itself, is in
    the digest its stamp holds (a change to any of them builds the environment again)."""
    from autograder.hub import environments

    read: list[Path] = []

    class Installer:
        @staticmethod
        def install(env, files, log=print, bytecode_from=None):  # what it copies only saves compiling
            read.extend(files)

        @staticmethod
        def build_wheel(out):
            return out / "selfattn.whl"

    def script(name):
        read.append(ROOT / "scripts" / f"{name}.py")
        return Installer

    monkeypatch.setattr(environments, "_script", script)
    monkeypatch.setattr(environments, "_pip", lambda env, *args: None)
    monkeypatch.setattr(environments.subprocess, "run", lambda *a, **k: None)
    assert environments.build(tmp_path / "env", kind, log=lambda line: None)
    sources = set(environments._sources(kind))
    missing = sorted(str(p.relative_to(ROOT)) for p in read if p not in sources)
    assert read and not missing, f"read by the {kind}s' environment build but not in its digest: {missing}"


@given(st.sampled_from(["selfattn/checks/exercises.py", "selfattn/new.py", "pyproject.toml",
                        "scripts/build_student.py"]), st.binary(min_size=1, max_size=32))
def test_the_students_environment_is_its_requirements_only(tmp_path_factory, changed, extra):
    """A change of the course's code (``selfattn``, how its wheel is built) leaves the students'
    environment's digest as it was (``make hub`` after a publish rebuilds nothing); a change of its
    requirements changes it."""
    from autograder.hub import environments

    root = tmp_path_factory.mktemp("repo")
    for name in ("student/requirements.txt", "requirements-hub.txt", "requirements-setup.txt",
                 "scripts/install_requirements.py", "selfattn/checks/exercises.py", "pyproject.toml",
                 "scripts/build_student.py", "requirements.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(name.encode())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(environments, "ROOT", root)
        mp.setattr(environments, "HUB_REQUIREMENTS", root / "requirements-hub.txt")
        mp.setattr(environments, "SETUP_REQUIREMENTS", root / "requirements-setup.txt")
        mp.setattr(environments, "INSTALLER", root / "scripts" / "install_requirements.py")
        before = environments.digest("student"), environments.requirements_digest("student")
        (root / changed).write_bytes((root / changed).read_bytes() + extra if (root / changed).exists() else extra)
        assert (environments.digest("student"), environments.requirements_digest("student")) == before, changed
        (root / "student/requirements.txt").write_bytes(b"numpy==1\n" + extra)
        assert environments.digest("student") != before[0]


def _stand_in_hub(layout, body: str, where: Path | None = None) -> subprocess.Popen:
    """A Python program named ``jupyterhub`` in ``layout``'s graders' environment, started in the hub's
    folder (or ``where``) as :func:`autograder.hub.control.launch` starts the hub."""
    program = layout.grader_env / "bin" / "jupyterhub"
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(f"#!{sys.executable}\n{body}")
    program.chmod(0o755)
    layout.hub.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([str(program), "-f", "config.py"], cwd=where or layout.hub, stdout=subprocess.PIPE,
                            text=True)


@pytest.mark.parametrize("stranger", ["another program", "another state folder's hub"])
def test_a_pid_file_left_by_a_hub_that_is_gone_names_no_running_hub(tmp_path, stranger):
    """After a crash or a reboot the pid file stays, and its process id may be another process's by then
    (ids are reused): ``make hub`` does not take that process for the running hub, and ``make hub-stop``
    leaves it alone. Only a process named ``jupyterhub`` working in the hub's own folder is the hub."""
    from autograder.hub import control
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs", port=1)
    if stranger == "another program":
        layout.hub.mkdir(parents=True)
        other = subprocess.Popen([sys.executable, "-c", "print('ready', flush=True)\nimport time\ntime.sleep(60)"],
                                 cwd=layout.hub, stdout=subprocess.PIPE, text=True)
    else:
        elsewhere = tmp_path / "other-state" / "hub"
        elsewhere.mkdir(parents=True)
        other = _stand_in_hub(layout, "print('ready', flush=True)\nimport time\ntime.sleep(60)\n", where=elsewhere)
    try:
        assert other.stdout.readline().strip() == "ready"
        layout.pid_file.write_text(f"{other.pid}\n")
        assert control.running_pid(layout) is None, f"{stranger} (pid {other.pid}) taken for the running hub"
        said: list[str] = []
        control.stop(layout, log=said.append, timeout=1)
        assert said == ["the hub is not running"] and other.poll() is None, f"make hub-stop ended {stranger}"
    finally:
        other.kill()
        other.wait()


def test_the_running_hub_is_found_by_its_pid_file(tmp_path):
    """The converse: the process the pid file names, running ``jupyterhub`` in the hub's folder, is the hub."""
    from autograder.hub import control
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs", port=1)
    hub = _stand_in_hub(layout, "print('ready', flush=True)\nimport time\ntime.sleep(60)\n")
    try:
        assert hub.stdout.readline().strip() == "ready"
        layout.pid_file.write_text(f"{hub.pid}\n")
        assert control.running_pid(layout) == hub.pid
    finally:
        hub.kill()
        hub.wait()


def test_a_hub_that_does_not_stop_in_time_is_named_with_its_log(tmp_path):
    """``make hub-stop`` on a hub that outlives its deadline fails in one line naming the hub's log and
    what it said last (what a late stop was doing is in that line, not lost)."""
    from autograder.hub import control
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs", port=1)
    stubborn = _stand_in_hub(layout, "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                             "print('ready', flush=True)\ntime.sleep(60)\n")
    try:
        assert stubborn.stdout.readline().strip() == "ready"
        layout.pid_file.write_text(f"{stubborn.pid}\n")
        layout.log.parent.mkdir(parents=True, exist_ok=True)
        layout.log.write_text("[I] Cleaning up 2 services...\n[I] waiting for formgrader\n")
        with pytest.raises(RuntimeError) as raised:
            control.stop(layout, log=lambda line: None, timeout=1)
    finally:
        stubborn.kill()
        stubborn.wait()
    message = str(raised.value)
    assert "\n" not in message and str(layout.log) in message and "waiting for formgrader" in message, message


def test_the_hub_starts_with_interrupts_it_can_pass_on_though_its_caller_ignores_them(tmp_path):
    """A caller that ignores SIGINT (``make hub &`` in a script) does not hand that on to the hub, and
    through it to formgrader, which would then ignore the SIGINT a stop sends it: the process
    ``control.launch`` starts (here a stand-in ``jupyterhub`` that prints its ignored signals into the
    hub's log) ignores neither SIGINT nor SIGQUIT."""
    from autograder.hub import control
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs", port=1)
    layout.hub.mkdir(parents=True)
    stand_in = layout.grader_env / "bin" / "jupyterhub"
    stand_in.parent.mkdir(parents=True)
    stand_in.write_text("#!/bin/sh\nexec grep '^SigIgn' /proc/self/status\n")
    stand_in.chmod(0o755)
    before = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    try:
        assert control.launch(layout, {"PATH": "/usr/bin:/bin"}).wait(timeout=30) == 0
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGQUIT, before[1])
    ignored = int(layout.log.read_text().split()[1], 16)
    for sig in (signal.SIGINT, signal.SIGQUIT):
        assert not ignored & (1 << (sig - 1)), f"the hub would start with {sig.name} ignored (SigIgn {ignored:x})"


def test_the_environments_action_builds_both_where_the_environment_says(tmp_path, monkeypatch):
    """``python -m autograder.hub.control environments`` (``make hub-test-envs``, run by ``make test`` beside
    the book) builds the students' and the graders' environments in ``$SELFATTN_HUB_ENVS``, as ``make hub``
    does on start, and starts nothing."""
    from autograder.hub import control

    built: list[tuple[Path, str]] = []
    monkeypatch.setattr(control.environments, "build", lambda env, kind, log=print: built.append((env, kind)))
    monkeypatch.setattr(control, "launch", lambda *a, **k: pytest.fail("the environments action started the hub"))
    monkeypatch.setenv("SELFATTN_HUB_ENVS", str(tmp_path / "envs"))
    monkeypatch.setenv("SELFATTN_HUB_STATE", str(tmp_path / "state"))
    control.main(["environments"])
    assert sorted(built) == [(tmp_path / "envs" / "grader", "grader"), (tmp_path / "envs" / "student", "student")]
    assert not (tmp_path / "state").exists()


@given(st.lists(st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True), min_size=2, max_size=6,
                unique=True),
       st.sampled_from(["", "https://hub.example.edu", "http://courses.example.org:8443/"]))
def test_every_users_server_and_formgrader_has_a_host_of_its_own(names, public):
    """The hub, each login's server and each course's formgrader are on distinct hosts under the hub's
    name (JupyterHub's subdomain_host), so no page a student's server serves shares an origin with
    formgrader, the hub or another student; a login that JupyterHub would encode is not guessed."""
    from urllib.parse import urlsplit

    from autograder.hub.layout import HubLayout, course_problem

    layout = HubLayout(state=Path("/nonexistent"), envs=Path("/nonexistent"), port=8123, public=public)
    logins = [n for n in names if "--" not in n]
    courses = [n for n in names if course_problem(n) is None]

    def origin(url: str) -> tuple[str, str, int | None]:
        parts = urlsplit(url)
        return parts.scheme, parts.hostname or "", parts.port

    hub = origin(layout.url)
    users = {origin(layout.user_url(n)) for n in logins}
    services = {origin(layout.service_url(c)) for c in courses}
    assert len(users) == len(logins) and len(services) == len(courses)
    assert not users & services and hub not in users | services
    assert all(host.endswith("." + layout.domain) for _, host, _ in users | services)
    assert urlsplit(layout.bind_url).hostname == "127.0.0.1"
    for name in names:
        if "--" in name:
            with pytest.raises(ValueError, match="encoded host"):
                layout.user_url(name)
            assert "single '-'" in (course_problem(name) or "")


@pytest.mark.parametrize("public", ["hub.example.edu", "ftp://hub.example.edu", "https://hub.example.edu/jupyter"])
def test_a_public_address_the_hub_cannot_serve_under_is_refused(public):
    from autograder.hub.layout import from_environment

    with pytest.raises(ValueError, match="SELFATTN_HUB_PUBLIC"):
        from_environment({"SELFATTN_HUB_PUBLIC": public})


def test_the_class_in_the_course_copy_is_the_rosters_students_with_their_lms_columns(tmp_path):
    """make hub writes each course's class (its students, not its instructors and TAs) into the course
    copy's roster.csv with the columns nbgrader and the LMS files read; every other column stays out."""
    import csv
    import io

    from autograder.hub.layout import HubLayout
    from autograder.hub.prepare import class_roster

    layout = HubLayout(state=tmp_path, envs=tmp_path / "envs")
    layout.rosters.mkdir(parents=True)
    layout.roster("c1").write_text(
        "id,first_name,last_name,email,role,sis_user_id,password\n"
        "ann,Ann,Lee,ann@x.edu,student,S1,secret\nivy,Ivy,Ng,,instructor,,\nbob,Bob,Roe,,,S2,\ntom,T,M,,TA,,\n")
    rows = list(csv.DictReader(io.StringIO(class_roster(layout, "c1"))))
    assert [r["id"] for r in rows] == ["ann", "bob"]
    assert rows[0] == {"id": "ann", "first_name": "Ann", "last_name": "Lee", "email": "ann@x.edu", "sis_user_id": "S1"}


@pytest.mark.parametrize(("script", "said"), [
    ("echo 'slurm_load_partitions: Unable to contact slurm controller (connect failure)' >&2; exit 1",
     "the Slurm cluster does not answer (slurm_load_partitions: Unable to contact slurm controller"),
    ("exit 0", "no Slurm node responds"),
    ("echo 'down*'; echo drain", "no responding Slurm node can take a job (their states: down, drain)"),
    ("sleep 30", "did not answer sinfo within 0.5 s"),
    ("echo idle", None),
    ("echo 'mix~'", None),
])
def test_a_slurm_hub_asks_the_cluster_before_it_starts(script, said, tmp_path, monkeypatch):
    """make hub SPAWNER=slurm asks sinfo first and says in one line what is wrong (students got "500
    Unhandled error" and the cause was only in the hub's log)."""
    from autograder.hub import control

    fake = tmp_path / "sinfo"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    problem = control.slurm_problem(timeout=0.5)
    assert (problem is None) if said is None else (problem is not None and said in problem), problem
    if problem is not None:
        assert "\n" not in problem


def test_a_hub_whose_last_spawner_was_slurm_asks_the_cluster_too(tmp_path, monkeypatch):
    """A start without SPAWNER serves as last time: a hub that ran on Slurm asks the cluster again."""
    from autograder.hub import control
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs")
    layout.hub.mkdir(parents=True)
    layout.spawner_file.write_text("slurm\n")
    asked: list[bool] = []
    monkeypatch.setattr(control, "slurm_problem", lambda: asked.append(True) or "the Slurm cluster does not answer")
    monkeypatch.setattr(control.os, "geteuid", lambda: 0)
    monkeypatch.setattr(control.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(ValueError, match="spawner 'slurm': the Slurm cluster does not answer"):
        control.start(layout, {}, log=lambda line: None)
    assert asked == [True]


def test_formgraders_stop_sends_sigkill_only_to_processes_still_running(monkeypatch):
    """Ending a course's formgrader (``make publish``) sends SIGKILL after the grace period only to the
    processes SIGTERM did not end: an ended one's process id may be another process's by then."""
    from autograder.hub import formgrader_restart

    running = {101: True, 202: True}
    sent: list[tuple[int, int]] = []

    def kill(pid: int, sig: int) -> None:
        sent.append((pid, sig))
        if pid == 101:  # ends on SIGTERM; 202 ignores it
            running[pid] = False

    monkeypatch.setattr(formgrader_restart.os, "kill", kill)
    monkeypatch.setattr(formgrader_restart, "_ended", lambda pid: not running[pid])
    formgrader_restart._end([101, 202], grace=0.3)
    assert (202, signal.SIGKILL) in sent and (101, signal.SIGKILL) not in sent, sent

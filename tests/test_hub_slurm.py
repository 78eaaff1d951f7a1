"""Students' servers as jobs of a real one-node Slurm (``make hub SPAWNER=slurm``, batchspawner).

The test starts Debian's Slurm (``scripts/one_node_slurm.py``) and a hub as root whose spawner
submits each student's server as a Slurm job run as that student, and fails with the reason when
either cannot start. A student logs in in Chromium and gets JupyterLab from inside her job
(squeue lists it as hers, running; the server's process belongs to the job and listens on
loopback only), fetches and submits
through it; stopping her server from the hub ends the job. Everything it made is removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from browser_support import CHROMIUM_ARGS, chromium_path
from grading_support import ROOT
from hub_support import own_hub
from test_hub import ASSIGNMENT, NB, STOP_TIMEOUT, _api, _as_grader, _lab, _xsrf

from autograder.course.ids import COURSE_ID

sys.path.insert(0, str(ROOT / "scripts"))
from one_node_slurm import OneNodeSlurm, SlurmUnavailable

EVE = "saslurm-eve"


@pytest.fixture(scope="module")
def slurm_hub():
    if os.geteuid() != 0:
        pytest.fail("the Slurm hub test must run as root (it makes system users and starts Slurm)")
    folder = Path(tempfile.mkdtemp(prefix="selfattn-slurm-hub-"))  # munged must reach it: not under 0700
    node = OneNodeSlurm(folder)
    try:
        try:
            node.start()
        except SlurmUnavailable as exc:
            pytest.fail(f"this machine cannot run the one-node Slurm the test needs: {exc}")
        with own_hub("slurm", {COURSE_ID: f"{EVE},E,Eve,,student\n"}, start_timeout=180, stop_timeout=STOP_TIMEOUT,
                     spawner="slurm", env=node.env) as (layout, passwords, _):
            _as_grader(layout, "generate_assignment", ASSIGNMENT, "--force")
            _as_grader(layout, "release_assignment", ASSIGNMENT)
            yield layout, node, passwords[EVE]
    finally:
        node.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _jobs(node: OneNodeSlurm) -> list[list[str]]:
    """Slurm's queue: user, job name, state of each job."""
    done = node.run("squeue", "-h", "-o", "%u %j %T %i")
    return [line.split() for line in done.stdout.splitlines()]


def test_a_students_server_is_a_slurm_job_of_hers(slurm_hub):
    layout, node, password = slurm_hub
    from browser_support import driver

    assert layout.spawner() == "slurm"
    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context, page = _lab(browser, layout, EVE, password)
            jobs = _jobs(node)
            assert [j[:3] for j in jobs] == [[EVE, "spawner-jupyterhub", "RUNNING"]], (jobs, node.log())
            job = jobs[0][3]
            # the server that answered is a process of that job, run as eve
            pids = [line.split()[0] for line in node.run("scontrol", "listpids", job).stdout.splitlines()[1:]]
            owners = {Path(f"/proc/{pid}").stat().st_uid for pid in pids if Path(f"/proc/{pid}").exists()}
            cmdlines = " ".join(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                                for pid in pids if Path(f"/proc/{pid}").exists())
            assert owners == {int(subprocess.check_output(["id", "-u", EVE]))}, (owners, pids)
            assert "jupyterhub-singleuser" in cmdlines, cmdlines
            # the job's server has the environment the hub gives it: her course's package and the table of
            # her courses' packages (sbatch --export of the spawner's environment)
            environs = [Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") for pid in pids
                        if Path(f"/proc/{pid}").exists()]
            given = {f"PYTHONPATH={layout.students_site}:{layout.course_package(COURSE_ID)}".encode(),
                     f"SELFATTN_COURSE_PACKAGES={COURSE_ID}={layout.course_package(COURSE_ID)}".encode()}
            assert any(given <= set(e) for e in environs), \
                [sorted(v for v in e if v.startswith((b"PYTHONPATH", b"SELFATTN"))) for e in environs]
            listening = {conn.laddr.ip for pid in pids if psutil.pid_exists(int(pid))
                         for conn in psutil.Process(int(pid)).net_connections("tcp") if conn.status == "LISTEN"}
            assert listening == {"127.0.0.1"}, listening  # one node: the server is reachable from here only
            base = layout.user_url(EVE)
            form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
            _api(page, context, "POST", f"{base}/assignments/fetch", form=form)
            assert Path(f"/home/{EVE}/{COURSE_ID}/{ASSIGNMENT}/{NB}.ipynb").is_file()
            assert _api(page, context, "POST", f"{base}/assignments/submit", form=form)["success"]
            assert [p.name.split("+")[0] for p in (layout.course_exchange() / "inbound").iterdir()] == [EVE]
            # Stop My Server (the hub's home page calls this API): the job ends
            page.goto(f"{layout.url}/hub/home", wait_until="domcontentloaded")
            stopped = page.request.delete(f"{layout.url}/hub/api/users/{EVE}/server",
                                          headers=_xsrf(context, f"{layout.url}/hub/"))
            assert stopped.status in (202, 204), (stopped.status, stopped.text())
            deadline = time.monotonic() + 120
            while _jobs(node) and time.monotonic() < deadline:
                time.sleep(1)
            assert _jobs(node) == [], (_jobs(node), node.log())
            context.close()
        finally:
            browser.close()

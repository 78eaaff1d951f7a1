"""The hub's lifecycle pieces that need no hub: when its environments are built again, and how a
stop that runs late is reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kind", ["student", "grader"])
def test_a_hub_environment_is_rebuilt_when_anything_its_build_reads_changes(kind, tmp_path, monkeypatch):
    """Every file the hub's environment build hands to the installer, and the installer itself, is in
    the digest its stamp holds (a change to any of them builds the environment again)."""
    from autograder.hub import environments

    read: list[Path] = []

    class Installer:
        @staticmethod
        def install(env, files, log=print):
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


def test_a_hub_that_does_not_stop_in_time_is_named_with_its_log(tmp_path):
    """``make hub-stop`` on a hub that outlives its deadline fails in one line naming the hub's log and
    what it said last (what a late stop was doing is in that line, not lost)."""
    from autograder.hub import control
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs", port=1)
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                                 "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert stubborn.stdout.readline().strip() == "ready"
        layout.pid_file.parent.mkdir(parents=True, exist_ok=True)
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


def test_the_hub_starts_with_interrupts_it_can_pass_on_though_its_caller_ignores_them():
    """A caller that ignores SIGINT (``make hub &`` in a script) does not hand that on to the hub, and
    through it to formgrader, which would then ignore the SIGINT a stop sends it."""
    probe = ("import signal, subprocess, sys\n"
             "from autograder.hub.control import default_signals\n"
             "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
             "show = ['grep', '^SigIgn', '/proc/self/status']\n"
             "print(subprocess.run(show, capture_output=True, text=True).stdout.split()[1])\n"
             "print(subprocess.run(show, capture_output=True, text=True, preexec_fn=default_signals)"
             ".stdout.split()[1])\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    inherited, started = (int(mask, 16) for mask in done.stdout.split())
    sigint = 1 << (2 - 1)
    assert inherited & sigint, "the probe's own child should inherit the ignored SIGINT"
    assert not started & sigint, f"the hub's process would start with SIGINT ignored (SigIgn {started:x})"

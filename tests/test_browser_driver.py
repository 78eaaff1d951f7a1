"""The test harness's Playwright driver: one whose Node process was ended under it is replaced at the
next use, and the run's summary says so (a warning), so one lost driver fails no later browser test of
its worker. Run in a Python of its own: ending this process's driver would end the browsers other tests
of this worker hold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = r"""
import os, signal, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import browser_support as b

with b.driver() as pw:
    pw.chromium.launch(executable_path=b.chromium_path(), args=b.CHROMIUM_ARGS, headless=True).close()
first = list(b._DRIVER_PIDS)
assert first, "no driver process was recorded"
for pid in first:
    os.kill(pid, signal.SIGKILL)
for _ in range(100):
    if not any(b._running(p) for p in first):
        break
    time.sleep(0.05)
with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always")
    with b.driver() as pw:
        pw.chromium.launch(executable_path=b.chromium_path(), args=b.CHROMIUM_ARGS, headless=True).close()
print("warned:", [str(w.message) for w in said])
print("pids:", first, b._DRIVER_PIDS)
b.stop_driver()
"""


def test_a_driver_whose_process_ended_is_replaced_and_said():
    tests = Path(__file__).resolve().parent
    done = subprocess.run([sys.executable, "-c", PROBE, str(tests)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    warned = next(line for line in done.stdout.splitlines() if line.startswith("warned:"))
    assert "Playwright driver" in warned and "had ended (at " in warned and ", during " in warned, done.stdout
    pids = next(line for line in done.stdout.splitlines() if line.startswith("pids:"))
    first, now = pids.removeprefix("pids: ").split("] [")
    assert first.strip("[]") != now.strip("[]"), f"the same driver process: {pids}"

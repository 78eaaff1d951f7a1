"""Fair blame for faults: a ``softmax`` that loops forever, exhausts memory, kills its interpreter
or floods the output costs ``softmax``'s points only.

Each submission is notebook 03 answered with the course's own code except ``softmax``, graded
through :func:`autograder.verdicts.grade_one` in the real sandbox with a 2 s CPU limit (the
default 60 s would make a looping answer take minutes). ``attention``, which calls that
``softmax``, must keep its points with a note naming ``softmax``; ``softmax`` must score nothing,
with a message that says what went wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: name -> (the cell of softmax, words its failure message must contain)
FAULTS = {
    "loops-forever": ("def softmax(S, axis=-1):\n    while True:\n        pass\n", "CPU time"),
    "exhausts-memory": ("def softmax(S, axis=-1):\n    hoard = []\n    while True:\n"
                        "        hoard.append(np.ones(1 << 22))\n", "MemoryError"),
    "os-exit": ("import os\n\ndef softmax(S, axis=-1):\n    os._exit(0)\n", "ended before returning results"),
    "kills-itself": ("import os\nimport signal\n\ndef softmax(S, axis=-1):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
                     "killed (signal 9)"),
    "exits-on-definition": ("import os\nos._exit(3)\n", "ended before returning results (exit status 3"),
    "floods-stdout-and-stderr": ("import os\nimport sys\n\ndef softmax(S, axis=-1):\n    while True:\n"
                                 "        print('x' * 100_000)\n        print('y' * 100_000, file=sys.stderr)\n"
                                 "        os.write(1, b'z' * 100_000)\n", "CPU time"),
}

GRADE = """
import json, sys, time
import nbformat
from autograder import blame, sandbox, verdicts
from autograder.paths import WORK

NOTEBOOK = "03-softmax-attention"
limits = sandbox.Limits(cpu_seconds=2, memory_bytes=512 << 20)
out = {}
for student, softmax in json.load(sys.stdin).items():
    nb = nbformat.read(verdicts.release_path("attention", NOTEBOOK), as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution"):  # the course's answer, but softmax
            cell.source = softmax if grade_id == "softmax" else blame.reference_cell("attention", NOTEBOOK, grade_id)
    path = WORK / "submitted" / student / "attention" / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    t0 = time.perf_counter()
    v = verdicts.grade_one(student, "attention", NOTEBOOK, limits=limits)
    out[student] = {"cells": v["cells"], "notes": v["notes"], "seconds": time.perf_counter() - t0}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(tmp_path_factory.mktemp("faults")))
    run = subprocess.run([sys.executable, "-c", GRADE], input=json.dumps({k: v[0] for k, v in FAULTS.items()}),
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_faulty_softmax_costs_softmax_its_points_only(graded, fault):
    verdict = graded[fault]
    cells, notes = verdict["cells"], verdict["notes"]
    print(f"{fault}: graded in {verdict['seconds']:.1f} s")
    for gid in ("softmax-public", "softmax-hidden"):
        assert not cells[gid]["passed"], f"{gid}: {cells[gid]['lines']}"
    assert FAULTS[fault][1] in cells["softmax-public"]["lines"][0], cells["softmax-public"]["lines"]
    for gid in ("scaled_scores-public", "scaled_scores-hidden", "attention-public", "attention-hidden"):
        assert cells[gid]["passed"], f"{gid}: {cells[gid]['lines']} (notes: {notes})"
    assert any(n.startswith("`attention` is right, but it calls your `softmax`, which fails: fix `softmax`")
               for n in notes), notes
    assert not any("scaled_scores` is right" in n or "locked cell" in n for n in notes), notes

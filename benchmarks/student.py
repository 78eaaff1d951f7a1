"""Speed a student feels: one check cell and one ``compare()`` cell in a running kernel, Restart &
Run All of each answered notebook, ``hand_in.py`` over nine answered notebooks, and ``install.py``
from the package cache.  Run alone: ``python -m benchmarks.student``
(``--no-install`` skips the install, the slow one).

Each figure is wall time on this machine as it is (shared: the CPU seconds beside it say how much
of the wall time was work), printed beside its target."""

from __future__ import annotations

import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from .grading import ROOT, SOLUTIONS, handed_in

sys.path.insert(0, str(ROOT / "scripts"))
import build_student

SYSTEM_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3") or sys.executable
CHECK_TARGET_S, COMPARE_TARGET_S, RUN_ALL_TARGET_S, HAND_IN_TARGET_S, INSTALL_TARGET_S = 0.3, 0.5, 10.0, 10.0, 60.0
#: a softmax without its row maximum, and an attention that adds the mask after the softmax: the
#: slowest check, which also judges the dependency and re-runs with the reference's
WRONG = {"softmax": "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)\n",
         "attention": "def attention(Q, K, V, mask=None):\n    S = scaled_scores(Q, K)\n    W = softmax(S)\n"
                      "    if mask is not None:\n        W = W + mask\n    return W @ V\n"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _course(dest: Path) -> Path:
    build_student.build(dest)
    return dest / build_student.NAME


def check_cells(notebook: str = "03-softmax-attention") -> dict[str, float]:
    """Seconds of each check cell as a kernel runs it (cell ids sent, as JupyterLab does), in the
    notebook answered correctly and with :data:`WRONG`, each saved in its folder first."""
    times: dict[str, list[float]] = {"right": [], "wrong": []}
    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        for kind in times:
            replace = WRONG if kind == "wrong" else {}
            text = handed_in(notebook)
            nb = nbformat.reads(text, as_version=4)
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("grade_id") in replace:
                    cell.source = replace[cell.metadata["nbgrader"]["grade_id"]]
            path = Path(tmp) / f"{notebook}.ipynb"
            nbformat.write(nb, path)
            NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True, record_timing=True,
                           resources={"metadata": {"path": tmp}}).execute()
            for cell in nb.cells:
                if cell.cell_type == "code" and cell.source.lstrip().startswith("# Public checks"):
                    times[kind].append(_cell_seconds(cell))
    every = times["right"] + times["wrong"]
    return {"cells": len(every), "median_s": statistics.median(every), "max_s": max(every),
            "max_right_s": max(times["right"]), "max_wrong_s": max(times["wrong"])}


def _cell_seconds(cell) -> float:
    """Seconds from the kernel starting ``cell`` to its reply (``record_timing`` of nbclient)."""
    t = cell.metadata["execution"]
    start = datetime.fromisoformat(t["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(t["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def run_all() -> dict[str, dict[str, float]]:
    """Restart & Run All of each answered notebook (a new kernel, every cell in order), in seconds:
    ``wall_s`` from starting the kernel to the last reply, ``cpu_s`` the CPU seconds of its kernel,
    ``slowest_s`` its slowest cell, and ``compare_s`` its slowest ``compare()`` cell (``compare_cpu_s``
    the most CPU seconds a ``compare()`` cell took)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-run-all-") as tmp:
        for path in sorted(SOLUTIONS.glob("*.ipynb")):
            nb = nbformat.reads(handed_in(path.stem), as_version=4)
            code = [c for c in nb.cells if c.cell_type == "code"]
            nb.cells = [nbformat.v4.new_code_cell(CELL_CPU), *nb.cells, nbformat.v4.new_code_cell(CELL_CPU_REPORT)]
            cpu, t0 = _children_cpu(), time.perf_counter()
            NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True, record_timing=True,
                           resources={"metadata": {"path": tmp}}).execute()
            wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu  # the kernel's, once it has ended
            cell_cpu = json.loads(nb.cells[-1].outputs[0]["text"])[1:]  # one per cell of the notebook
            compares = [(_cell_seconds(c), used) for c, used in zip(code, cell_cpu, strict=True)
                        if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("compare-")]
            slowest = max(code, key=_cell_seconds)
            out[path.stem] = {"wall_s": wall, "cpu_s": cpu, "slowest_s": _cell_seconds(slowest),
                              "slowest_cell": slowest.source.splitlines()[0][:50],
                              "compare_s": max(compares, default=(0.0, 0.0))[0],
                              "compare_cpu_s": max((used for _, used in compares), default=0.0)}
    return out


#: Cells put around a notebook that Restart & Run All measures: the kernel's CPU seconds of each
#: cell (its display included), printed as JSON by the last; the first number is this cell's own.
CELL_CPU = """import json as _json, time as _time
_cell_cpu = {"start": _time.process_time(), "cells": []}
def _cell_started(*_):
    _cell_cpu["start"] = _time.process_time()
def _cell_ended(*_):
    _cell_cpu["cells"].append(_time.process_time() - _cell_cpu["start"])
get_ipython().events.register("pre_run_cell", _cell_started)
get_ipython().events.register("post_run_cell", _cell_ended)"""
CELL_CPU_REPORT = 'print(_json.dumps(_cell_cpu["cells"]))'


def hand_in(repeat: int = 2) -> dict[str, float]:
    """Seconds of ``hand_in.py`` (validating) over the nine notebooks answered, best of ``repeat``;
    with the CPU seconds of that run."""
    with tempfile.TemporaryDirectory(prefix="bench-hand-in-") as tmp:
        course = _course(Path(tmp))
        for path in sorted(SOLUTIONS.glob("*.ipynb")):
            (course / "notebooks" / "attention" / path.name).write_text(handed_in(path.stem))
        best = (float("inf"), 0.0)
        for _ in range(repeat):
            cpu, t0 = _children_cpu(), time.perf_counter()
            run = subprocess.run([sys.executable, "hand_in.py", "ada"], cwd=course, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if run.returncode != 0 or sum(ln.startswith("ok   ") for ln in run.stdout.splitlines()) != 9:
                raise RuntimeError(f"hand_in.py did not pass the nine answered notebooks:\n{run.stdout[-3000:]}")
            best = min(best, (wall, _children_cpu() - cpu))
    return {"notebooks": 9, "wall_s": best[0], "cpu_s": best[1]}


def install() -> dict[str, float]:
    """Seconds of ``install.py`` run by the system's python3 in a fresh course folder (pip's cache warm)."""
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        course = _course(Path(tmp))
        cpu, t0 = _children_cpu(), time.perf_counter()
        run = subprocess.run([SYSTEM_PYTHON, "install.py"], cwd=course, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if run.returncode != 0:
            raise RuntimeError(f"install.py failed:\n{run.stderr[-3000:]}")
    return {"wall_s": wall, "cpu_s": _children_cpu() - cpu}


def print_student(with_install: bool = True) -> None:
    """Print each figure beside its target."""
    c = check_cells()
    print(f"one check cell in a kernel ({c['cells']:.0f} cells, answers right and wrong): "
          f"median {c['median_s']:.3f} s, "
          f"slowest {c['max_s']:.3f} s (right {c['max_right_s']:.3f} s, wrong {c['max_wrong_s']:.3f} s)"
          f"  [target <= {CHECK_TARGET_S:g} s]")
    runs = run_all()
    print(f"compare() cell in a kernel, slowest of the {len(runs)} notebooks: "
          f"{max(r['compare_s'] for r in runs.values()):.3f} s "
          f"(at most {max(r['compare_cpu_s'] for r in runs.values()):.3f} CPU s)  [target <= {COMPARE_TARGET_S:g} s]")
    print("Restart & Run All, answered notebook (kernel start to last reply; its slowest cell):")
    for name, r in runs.items():
        print(f"  {name}: {r['wall_s']:.1f} s ({r['cpu_s']:.1f} CPU s of its kernel; "
              f"slowest cell {r['slowest_s']:.1f} s: {r['slowest_cell']}; "
              f"compare() {r['compare_s']:.2f} s, {r['compare_cpu_s']:.2f} CPU s)  [target <= {RUN_ALL_TARGET_S:g} s]")
    h = hand_in()
    print(f"hand_in.py, {h['notebooks']:.0f} answered notebooks validated: {h['wall_s']:.1f} s "
          f"({h['cpu_s']:.1f} CPU s)  [target <= {HAND_IN_TARGET_S:g} s]")
    if with_install:
        i = install()
        print(f"install.py from pip's cache ({SYSTEM_PYTHON}): {i['wall_s']:.0f} s ({i['cpu_s']:.0f} CPU s)"
              f"  [target <= {INSTALL_TARGET_S:g} s]")


if __name__ == "__main__":
    print_student(with_install="--no-install" not in sys.argv[1:])

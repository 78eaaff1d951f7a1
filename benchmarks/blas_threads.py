"""What a second OpenBLAS thread buys this project's numerics: the Makefile runs every process with one
(``OPENBLAS_NUM_THREADS=1``), as the grading sandbox does.

Chapter 10's text layer is trained for ``steps`` Adam steps in a fresh process with one and with two
BLAS threads, side by side with the same run in a second process (as the two test workers and the
book's kernels run on two cores); each process's CPU seconds and wall seconds are read off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The CPU one thread may cost against two (the target: no more).
TARGET_CPU_RATIO = 1.0

_RUN = """
import json, resource, time
from selfattn import text_layer as tl
corpus = tl.Corpus.from_text(tl.zen())
x, y = corpus.windows(tl.WINDOW, tl.STRIDE)
start = time.perf_counter()
tl.train_layer(x, y, len(corpus.types), tl.SEEDS, tl.WIDTH, {steps})
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"wall_s": time.perf_counter() - start, "cpu_s": use.ru_utime + use.ru_stime}}))
"""


def _pair(threads: int, steps: int) -> dict[str, float]:
    """Two processes training at once with ``threads`` BLAS threads each: their mean CPU and wall seconds."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    runs = [subprocess.Popen([sys.executable, "-c", _RUN.format(steps=steps)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, text=True) for _ in range(2)]
    out = [json.loads(run.communicate()[0].strip().splitlines()[-1]) for run in runs]
    if any(run.returncode for run in runs):
        raise RuntimeError(f"a training run failed ({[run.returncode for run in runs]})")
    return {key: sum(o[key] for o in out) / len(out) for key in ("wall_s", "cpu_s")}


def blas_threads(steps: int = 60) -> dict[str, float]:
    """CPU and wall seconds of chapter 10's training with one and with two BLAS threads."""
    one, two = _pair(1, steps), _pair(2, steps)
    return {"one_cpu_s": one["cpu_s"], "two_cpu_s": two["cpu_s"], "one_wall_s": one["wall_s"],
            "two_wall_s": two["wall_s"], "cpu_ratio": one["cpu_s"] / two["cpu_s"],
            "wall_ratio": one["wall_s"] / two["wall_s"]}


def print_blas_threads() -> None:
    r = blas_threads()
    print(f"chapter 10's training, two at once, one BLAS thread each / two each: CPU {r['cpu_ratio']:.2f}"
          f" ({r['one_cpu_s']:.1f} s vs {r['two_cpu_s']:.1f} s), wall {r['wall_ratio']:.2f}"
          f" ({r['one_wall_s']:.1f} s vs {r['two_wall_s']:.1f} s)  [target CPU <= {TARGET_CPU_RATIO:.1f}]")


if __name__ == "__main__":
    print_blas_threads()

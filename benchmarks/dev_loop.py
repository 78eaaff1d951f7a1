"""What a contributor's loop costs: one test file, one lane (``make test-fast``), one exercise
(``make test-exercise``) and, with ``--full``, everything (``make test``), each as wall seconds and
the CPU seconds of every process it ran (from the children's resource usage), so the guide's testing
section cites figures this prints rather than a diary of timings (``docs/contributing.md``).

Each command runs in the checkout as a contributor types it; one that fails says so beside its figures.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (what it is, the command), cheapest first; the last runs only with ``--full``.
LOOP: tuple[tuple[str, list[str]], ...] = (
    ("one test file", [sys.executable, "-m", "pytest", "tests/test_numerics.py", "-q", "-p", "no:randomly"]),
    ("one lane (ruff and the unit lane)", ["make", "-s", "test-fast"]),
    ("one exercise", ["make", "-s", "test-exercise", "FN=scaled_scores"]),
    ("everything (the book, the PDF, every lane)", ["make", "-s", "test"]),
)


def measure(command: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of every process it ran, exit status) of ``command`` in the checkout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def print_dev_loop(full: bool = False) -> None:
    """Print each step of :data:`LOOP` (``make test`` only with ``full``): its command and cost."""
    for label, command in LOOP[:None if full else -1]:
        wall, cpu, status = measure(command)
        shown = " ".join("python" if c == sys.executable else c for c in command)
        failed = f"  (FAILED, exit status {status})" if status else ""
        print(f"  {label}, `{shown}`: {wall:.0f} s wall, {cpu:.0f} CPU s{failed}")
    if not full:
        print("  everything, `make test`: measured with --full")


if __name__ == "__main__":
    print_dev_loop(full="--full" in sys.argv[1:])

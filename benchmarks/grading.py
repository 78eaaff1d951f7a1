"""Grading throughput: make grade against plain nbgrader autograde, and 1 against 2 workers."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from grading_support import RELEASE, SOLUTIONS, PlainCourse, entries, place  # noqa: E402


def handed_in(notebook: str, replace: tuple[str, str] | None = None) -> str:
    """What a student hands in: the released notebook with the instructor's answers typed into its
    answer cells (its locked cells untouched), and ``replace`` = (grade id, source) if given."""
    answers = {c["metadata"]["nbgrader"]["grade_id"]: c["source"]
               for c in json.loads((SOLUTIONS / f"{notebook}.ipynb").read_text())["cells"]
               if c["metadata"].get("nbgrader", {}).get("solution")}
    if replace is not None:
        answers[replace[0]] = replace[1]
    nb = json.loads((RELEASE / f"{notebook}.ipynb").read_text())
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if cell["metadata"].get("nbgrader", {}).get("solution") and gid in answers:
            cell["source"] = answers[gid]
    return json.dumps(nb)


def sample_class(n: int, notebooks: list[str]) -> dict[str, dict[str, str]]:
    """``n`` honest submissions of released notebooks: blank, fully answered, and answered with
    one known mistake (from the catalogue), in turn."""
    wrong = [e for e in entries("catalogue/wrong") if e.notebook in notebooks and e.kind == "cell"]
    out = {}
    for i in range(n):
        subs = {}
        for nb in notebooks:
            if i % 4 == 0:
                subs[nb] = (RELEASE / f"{nb}.ipynb").read_text()
            else:
                mistakes = [e for e in wrong if e.notebook == nb]
                m = mistakes[i % len(mistakes)] if mistakes and i % 2 else None
                subs[nb] = handed_in(nb, None if m is None else (m.replace, m.path.read_text()))
        out[f"s{i:02d}"] = subs
    return out


@dataclass(frozen=True)
class GradeRun:
    """One ``make grade`` run: wall seconds, CPU seconds of it and every process it started (which
    other users of a shared machine do not inflate), and its ``.grading/timings.json``."""

    wall: float
    cpu: float
    timings: dict


@contextmanager
def class_folder(klass: dict[str, dict[str, str]], prefix: str) -> Iterator[Path]:
    """A temporary work folder with ``klass`` handed in (student -> notebook -> text)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        for student, subs in klass.items():
            for nb, text in subs.items():
                place(work, student, nb, text)
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def make_grade(work: Path, workers: int, *args: str) -> GradeRun:
    """Run ``make grade`` (``python -m autograder.grade``) on ``work`` with ``workers`` workers
    (and the further command-line ``args``, e.g. ``--student s00``)."""
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograder.grade", "--workers", str(workers), *args], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the run, its workers and their sandboxes
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return GradeRun(wall, cpu, json.loads((work / ".grading" / "timings.json").read_text()))


def time_ours(klass, workers: int) -> float:
    with class_folder(klass, "bench-ours-") as work:
        return make_grade(work, workers).wall


def time_plain(klass, notebooks: list[str]) -> float:
    root = Path(tempfile.mkdtemp(prefix="bench-plain-"))
    try:
        course = PlainCourse(root / "course", notebooks)
        for student, subs in klass.items():
            for nb, text in subs.items():
                course.submit(student, nb, text)
        t0 = time.perf_counter()
        course.autograde()
        return time.perf_counter() - t0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def grading_benchmark(n: int = 40, full: bool = False) -> dict[str, float]:
    notebooks = sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))
    if not full:
        notebooks = ["03-softmax-attention", "07-masking"]
    klass = sample_class(n, notebooks)
    one = time_ours(klass, 1)
    two = time_ours(klass, 2)
    plain = time_plain(klass, notebooks)
    count = n * len(notebooks)
    return {"notebooks": count, "ours_1": one, "ours_2": two, "plain": plain,
            "ratio": two / plain, "speedup": one / two, "per_notebook": two / count}

"""Grade with a Slurm job array: one range of students per array task, merged by ``make grade``.

The class's students (the folders of ``submitted/``, sorted by name) are cut into ``N`` ranges
of nearly equal size; array task ``I`` (``0 <= I < N``) stages and decides every notebook of range
``I`` whose verdict is missing or stale, into the work folder's ``.grading/verdicts/``, which the
compute nodes share with the instructor's machine (the checkout on a shared file system)::

    sbatch --array=0-9 scripts/slurm-grade-array.sh 10       # runs grade array-task $SLURM_ARRAY_TASK_ID/10
    make grade GRADE_ARGS="--after-array 10"                 # once the array has ended

``--after-array N`` first checks that every notebook has an up-to-date verdict. If some have not
(a task failed, was cancelled, or ran out of time), it names their ranges and students in one line,
with the ``sbatch --array=...`` that decides just those again, and changes nothing; otherwise it
runs as ``make grade`` does, which then decides nothing and only runs the nbgrader steps. (A plain
``make grade`` would instead decide the missing notebooks on the instructor's machine.)

A task runs only where bubblewrap works (unless ``--allow-fallback-sandbox``), with the grading
limits it is given: pass the array the same ``--cpu-seconds``/``--memory-mb`` as the merge.
"""

from __future__ import annotations

import os
import re
import socket
from concurrent.futures import ProcessPoolExecutor

from autograder import sandbox
from autograder.errors import GradingError, RefusedInput, SetupMissing
from autograder.intake import scan as intake
from autograder.reporting.run_summary import Summary
from autograder.settings import Settings
from autograder.verdicts.decide import decide_in_phases
from autograder.workspace import Workspace

#: the batch script of the array, from the repository's root
SCRIPT = "scripts/slurm-grade-array.sh"


def parse_task(text: str) -> tuple[int, int]:
    """``"I/N"`` -> (I, N), or :class:`~autograder.errors.RefusedInput` with one line."""
    m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not m or not 0 <= int(m[1]) < int(m[2]):
        raise RefusedInput(f"refused: --array-task wants I/N with 0 <= I < N (the array index of N tasks), "
                           f"not {text!r}")
    return int(m[1]), int(m[2])


def ranges(students: list[str], parts: int) -> list[list[str]]:
    """``students`` (sorted, each once) cut into ``parts`` contiguous ranges, sizes differing by at most one."""
    names = sorted(set(students))
    return [names[i * len(names) // parts:(i + 1) * len(names) // parts] for i in range(parts)]


def _undecided(subs: list[tuple[str, str]], limits: sandbox.Limits, ws: Workspace) -> list[tuple]:
    """Stage ``subs`` of ``ws``; the jobs (student, assignment, notebook, limits) whose verdict is missing or stale."""
    from autograder.pipeline.grading_run import stage_all

    return stage_all(subs, False, limits, Summary(), ws)[0]


def decide_task(index: int, parts: int, grading: Settings, ws: Workspace, log=print) -> int:
    """Array task ``index`` of ``parts``: decide the notebooks of its range of students of ``ws``
    (the shared work folder, handed down by the command line) that need it,
    with the settings ``grading`` (applied by each worker as it starts). Returns how many notebooks
    the grader could not process (their verdicts say so)."""
    limits, allow_fallback = grading.limits, grading.allow_fallback_sandbox
    sandbox.self_test()
    if sandbox.mode() != "bubblewrap" and not allow_fallback:
        raise SetupMissing(f"refused: {socket.gethostname()} has no working bubblewrap sandbox; install bubblewrap on "
                         "the compute nodes, or pass --allow-fallback-sandbox to grade with weaker isolation")
    subs = intake.scan(ws=ws).submissions
    mine = set(ranges([s for s, _ in subs], parts)[index])
    jobs = _undecided([(s, a) for s, a in subs if s in mine], limits, ws)
    workers = grading.workers or int(os.environ.get("SLURM_CPUS_PER_TASK") or 1)
    log(f"array task {index}/{parts} on {socket.gethostname()}: {len(mine)} students, {len(jobs)} notebooks to decide "
        f"with {workers} workers (sandbox: {sandbox.mode()})")
    failed = 0
    with ProcessPoolExecutor(max_workers=workers, initializer=grading.apply) as pool:
        # every public run of this task before any hidden one (see decide_in_phases)
        for s, a, nb, seconds in decide_in_phases(jobs, ws, map_=pool.map):
            log(f"{s}/{a}/{nb}: {seconds:.1f} s")
    from autograder.verdicts.decide import stored_verdict

    for s, a, nb, _l in jobs:
        failed += (verdict := stored_verdict(s, a, nb, ws)) is not None and verdict.failed
    return failed


def check_merged(parts: int, limits: sandbox.Limits, ws: Workspace, options: str = "") -> None:
    """Before ``--after-array N`` grades: every notebook has an up-to-date verdict, or ``GradingError``
    with one line naming the ranges (and students) left, and the ``sbatch`` that decides them
    (with the grading ``options`` of this run, which the array must share)."""
    subs = intake.scan(ws=ws).submissions
    if not subs:
        return  # grade_class says there is nothing to grade
    todo = _undecided(subs, limits, ws)
    if not todo:
        return
    part_of = {s: i for i, names in enumerate(ranges([s for s, _ in subs], parts)) for s in names}
    left: dict[int, set[str]] = {}
    for s, _a, _nb, _l in todo:
        left.setdefault(part_of[s], set()).add(s)
    which = ",".join(str(i) for i in sorted(left))
    names = "; ".join(f"task {i}: {', '.join(sorted(left[i]))}" for i in sorted(left))
    raise GradingError(f"not merged: {len(todo)} notebooks have no up-to-date verdict from the array ({names}); decide "
                     f"them with `sbatch --array={which} {' '.join([SCRIPT, str(parts), *options.split()])}`, then run "
                     "this again; or run make grade to decide them here")

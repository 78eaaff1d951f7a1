"""Grade a class: ``python -m autograder.grade`` (what ``make grade`` runs).

1. *Stage*: every ``submitted/<student>/<assignment>/<notebook>.ipynb`` is read as data, never
   run. Its answers are copied into a fresh copy of the released notebook, so deleted cells,
   edited test cells and changed points cannot matter; anything odd becomes a grading note.
   Unreadable files are graded as unanswered, with the reason.
2. *Verdicts* (parallel, one independent job per notebook): each graded function runs in the
   sandbox (:mod:`autograder.sandbox`) on inputs made here; only plain arrays come back, and the
   checks decide in this process, which never runs student code.
3. *nbgrader*: ``autograde`` (with :class:`~autograder.nbgrader_plugins.ApplyVerdicts` instead
   of execution), ``generate_feedback`` and ``export`` fill the gradebook, the feedback and
   ``grades.csv`` as usual, so formgrader and manual grading keep working.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import numpy as np

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from selfattn.checking import DEPENDS, REGISTRY, Outcome, first_error

from . import sandbox
from .paths import AUTOGRADER, GRADES_CSV, GRADING, SOLUTIONS, STAGED, SUBMITTED, verdict_path
from .spec import load_spec, notebooks_of, release_path


# ------------------------------------------------------------------------------------- staging
def _source_text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def stage(student: str, assignment: str, notebook: str) -> list[str]:
    """Write the repaired copy of one submission under ``.grading/submitted``; return notes."""
    original = SUBMITTED / student / assignment / f"{notebook}.ipynb"
    release = nbformat.read(release_path(assignment, notebook), as_version=4)
    notes: list[str] = []
    student_cells: list[dict] = []
    if not original.exists():
        notes.append(f"No file {notebook}.ipynb was submitted; it is graded as unanswered.")
    else:
        try:
            data = json.loads(original.read_text(encoding="utf-8"))
            cells = data.get("cells") if isinstance(data, dict) else None
            if not isinstance(cells, list):
                raise ValueError("it has no list of cells")
            student_cells = [c for c in cells if isinstance(c, dict)]
        except (ValueError, UnicodeDecodeError) as exc:
            notes.append(f"{notebook}.ipynb could not be read as a notebook ({type(exc).__name__}: "
                         f"{str(exc)[:120]}); it is graded as unanswered.")
    by_id: dict[str, list[dict]] = {}
    for c in student_cells:
        meta = c.get("metadata")
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        gid = nbg.get("grade_id") if isinstance(nbg, dict) else None
        if isinstance(gid, str):
            by_id.setdefault(gid, []).append(c)
    for cell in release.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        found = by_id.get(gid, [])
        if meta.get("solution"):
            if not found and student_cells:
                notes.append(f"The answer cell `{gid}` was missing (deleted?); it is graded as unanswered.")
            elif found:
                if len(found) > 1:
                    notes.append(f"The answer cell `{gid}` appears {len(found)} times; the first one was graded.")
                if found[0].get("cell_type") != cell.cell_type:
                    notes.append(f"The answer cell `{gid}` changed type; it is graded as unanswered.")
                else:
                    cell.source = _source_text(found[0])
        elif meta.get("grade") or meta.get("locked"):
            if found and _source_text(found[0]) != cell.source:
                notes.append(f"The locked cell `{gid}` was edited; the original was used.")
            if found and meta.get("points") is not None:
                theirs = found[0].get("metadata", {}).get("nbgrader", {}).get("points")
                if theirs != meta.get("points"):
                    notes.append(f"The points of `{gid}` were changed; the course's points were used.")
    target = STAGED / student / assignment / f"{notebook}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(release, target)
    stamp = SUBMITTED / student / assignment / "timestamp.txt"
    if stamp.exists():
        shutil.copy(stamp, target.parent / "timestamp.txt")
    return notes


# ------------------------------------------------------------------------------------ verdicts
def _secret() -> bytes:
    path = GRADING / "secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(16))
    return path.read_text().encode()


def _seed(*parts: str) -> int:
    h = hashlib.sha256(_secret() + "\0".join(parts).encode()).digest()
    return int.from_bytes(h[:8], "big")


def _answers(path: Path) -> dict[str, str]:
    """grade_id -> source of the answer code cells of a (staged or released) notebook."""
    nb = nbformat.read(path, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}


def verdict(student: str, assignment: str, notebook: str, notes: list[str],
            limits: sandbox.Limits = sandbox.DEFAULT) -> dict:
    """Decide every test cell of one staged notebook; write and return the verdict."""
    spec = load_spec(assignment, notebook)
    answers = _answers(STAGED / student / assignment / f"{notebook}.ipynb")
    stubs = _answers(release_path(assignment, notebook))
    cells: dict[str, dict] = {}
    notes = list(notes)
    timings = {}
    for function in spec.functions:
        tests = spec.tests_of(function)
        if not tests:
            continue
        ids = [cid for t in tests for f, cid in t.checks if f == function]
        hidden = set().union(*(t.hidden for t in tests))
        cases = {cid: REGISTRY[cid].cases(np.random.default_rng(_seed(student, notebook, cid))) for cid in ids}
        code = [(dep, answers[dep]) for dep in DEPENDS.get(function, ()) if dep in answers]
        code.append((function, answers[function]))
        results: dict[str, str | None] = {}
        timings[function] = 0.0
        run = None
        # public and hidden inputs never meet in one process: nothing the student's code saw of a
        # hidden input can come back in the (public) text of its exceptions
        for group in ([cid for cid in ids if cid not in hidden], [cid for cid in ids if cid in hidden]):
            if not group:
                continue
            if answers[function] == stubs.get(function):
                run = sandbox.RunResult(None, f"not answered: the cell of {function} still holds the stub", [], 0.0)
            elif group[0] in hidden and run is not None and run.outcomes is None:
                pass  # the code never got as far as a call (loop, crash, syntax): no need to run it again
            else:
                run = sandbox.run(code, function, [c for cid in group for c in cases[cid]], limits)
            timings[function] = round(timings[function] + run.seconds, 3)
            for err in run.cell_errors:
                note = f"While grading {function}: {err}."
                if not err.startswith(f"the cell of {function} ") and note not in notes:
                    notes.append(note)
            pos = 0
            for cid in group:
                check_, n = REGISTRY[cid], len(cases[cid])
                if run.outcomes is None:
                    results[cid] = run.failure
                else:
                    outs = run.outcomes[pos : pos + n]
                    if cid in hidden:  # never echo student-controlled text for hidden inputs
                        outs = [Outcome(error=o.error.split(":")[0]) if o.error else o for o in outs]
                    results[cid] = first_error(check_, cases[cid], outs) or _safe_verify(check_, cases[cid], outs)
                pos += n
        for t in tests:
            lines = []
            for f, cid in t.checks:
                if f != function:
                    continue
                label = ("hidden check: " if cid in t.hidden else "") + REGISTRY[cid].description
                msg = results[cid]
                lines.append(f"✓ {function}: {label}" if msg is None else f"✗ {function}: {label}: {msg}")
            prev = cells.get(t.grade_id, {"passed": True, "lines": []})
            cells[t.grade_id] = {"passed": prev["passed"] and all(ln.startswith("✓") for ln in lines),
                                 "lines": prev["lines"] + lines, "points": t.points}
    if sandbox.mode() == "fallback":
        notes.append("Graded without the bubblewrap sandbox (weaker isolation).")
    out = {"student": student, "assignment": assignment, "notebook": notebook, "cells": cells,
           "notes": notes, "sandbox": sandbox.mode(), "seconds": timings}
    path = verdict_path(student, assignment, notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False))
    return out


def _safe_verify(check_, cases, outcomes) -> str | None:
    try:
        return check_.verify(cases, outcomes)
    except Exception as exc:
        return f"the returned values could not be checked ({type(exc).__name__})"


def grade_one(student: str, assignment: str, notebook: str, limits: sandbox.Limits = sandbox.DEFAULT) -> dict:
    """One independent job: stage and decide one notebook (fan this out for big classes)."""
    try:
        notes = stage(student, assignment, notebook)
        return verdict(student, assignment, notebook, notes, limits)
    except Exception as exc:
        path = verdict_path(student, assignment, notebook)
        path.parent.mkdir(parents=True, exist_ok=True)
        note = f"The grader could not process this notebook ({type(exc).__name__}: {exc}); it scores zero."
        path.write_text(json.dumps({"cells": {}, "notes": [note]}))
        target = STAGED / student / assignment / f"{notebook}.ipynb"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(release_path(assignment, notebook), target)
        return {"cells": {}, "notes": [note]}


def _job(args: tuple) -> tuple[str, str, str, float]:
    student, assignment, notebook, limits = args
    t0 = time.perf_counter()
    grade_one(student, assignment, notebook, limits)
    return student, assignment, notebook, time.perf_counter() - t0


# ------------------------------------------------------------------------------------- nbgrader
def _api():
    """nbgrader's Python API, configured by autograder/nbgrader_config.py (one import per process)."""
    # nbgrader shells out to `alembic` for its database: it must be on PATH
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(AUTOGRADER)).load_config()
    # the release that grading needs goes to the work folder, leaving notebooks/ alone
    config.CourseDirectory.release_directory = str(GRADING / "release")
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def _nbgrader_group(args: tuple[str, str, list[str]]) -> list[str]:
    """Run one nbgrader step for a group of students in this process; return problems."""
    import warnings

    from sqlalchemy.exc import SAWarning

    # nbgrader's own ORM use warns on notebooks that were not handed in; the grades are right
    warnings.filterwarnings("ignore", category=SAWarning)
    step, assignment, students = args
    api = _api()
    problems = []
    for student in students:
        result = (api.autograde(assignment, student, force=True, create=True) if step == "autograde"
                  else api.generate_feedback(assignment, student, force=True))
        if not result["success"]:
            problems.append(f"{step} {student}: {result.get('error', '')[-1500:]}")
    return problems


def _nbgrader_parallel(step: str, assignment: str, students: list[str], workers: int, log) -> None:
    """Run an nbgrader step over disjoint groups of students at once, then redo any student that
    reported a problem on its own (e.g. a busy SQLite gradebook), so the result never depends on
    the parallelism."""
    groups = [students[i::workers] for i in range(min(workers, len(students)))]
    with ProcessPoolExecutor(max_workers=max(1, len(groups))) as pool:
        problems = [p for ps in pool.map(_nbgrader_group, [(step, assignment, g) for g in groups]) for p in ps]
    retry = [p.split()[1].rstrip(":") for p in problems]
    for message in _nbgrader_group((step, assignment, retry)) if retry else []:
        log(f"warning: nbgrader {message}")


def export(api=None) -> None:
    """Write grades.csv from the gradebook (nbgrader's CSV export)."""
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    api = api or _api()
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        CsvExportPlugin(config=api.config).export(gb)
    if not GRADES_CSV.exists():
        raise SystemExit("nbgrader export wrote no grades.csv")


def finish(workers: int | None = None, log=print) -> None:
    """After hand-grading in formgrader: regenerate the feedback and grades.csv, re-running nothing."""
    workers = workers or os.cpu_count() or 1
    subs = submissions()
    for assignment in sorted({a for _, a in subs}):
        students = sorted(s for s, a in subs if a == assignment)
        _nbgrader_parallel("generate_feedback", assignment, students, workers, log)
    export()
    log(f"feedback regenerated; grades in {GRADES_CSV}")


def submissions() -> list[tuple[str, str]]:
    """(student, assignment) for every folder under submitted/."""
    out = []
    for student in sorted(p for p in SUBMITTED.iterdir() if p.is_dir()) if SUBMITTED.exists() else []:
        for assignment in sorted(p for p in student.iterdir() if p.is_dir()):
            if (SOLUTIONS / assignment.name).is_dir():
                out.append((student.name, assignment.name))
    return out


def grade_class(workers: int | None = None, limits: sandbox.Limits = sandbox.DEFAULT, log=print) -> dict:
    """Grade every submission and produce the gradebook, feedback and grades.csv."""
    t0 = time.perf_counter()
    subs = submissions()
    if not subs:
        raise SystemExit(f"nothing to grade: put notebooks under {SUBMITTED}/<student>/<assignment>/")
    if STAGED.exists():
        shutil.rmtree(STAGED)
    shutil.rmtree(GRADING / "verdicts", ignore_errors=True)
    sandbox.self_test()
    assignments = sorted({a for _, a in subs})
    jobs = []
    for s, a in subs:
        handed_in = [nb for nb in notebooks_of(a) if (SUBMITTED / s / a / f"{nb}.ipynb").exists()]
        # a notebook not handed in scores zero in nbgrader without being staged; a student who
        # handed in nothing readable still gets every notebook staged, so the notes reach them
        jobs += [(s, a, nb, limits) for nb in (handed_in or notebooks_of(a))]
    workers = workers or os.cpu_count() or 1
    log(f"grading {len(jobs)} notebooks of {len(subs)} submissions with {workers} workers "
        f"(sandbox: {sandbox.mode()})")
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending = pool.map(_job, jobs)
        api = _api()  # meanwhile, register the assignments in the gradebook
        for a in assignments:
            result = api.generate_assignment(a, force=True)
            if not result["success"]:
                raise SystemExit(f"nbgrader generate_assignment {a} failed:\n{result.get('error')}")
        per_nb = [secs for _s, _a, _nb, secs in pending]
    t_verdicts = time.perf_counter() - t0
    for a in assignments:
        students = sorted(s for s, a2 in subs if a2 == a)
        t1 = time.perf_counter()
        _nbgrader_parallel("autograde", a, students, workers, log)
        t2 = time.perf_counter()
        _nbgrader_parallel("generate_feedback", a, students, workers, log)
        log(f"nbgrader {a}: autograde {t2 - t1:.1f} s, feedback {time.perf_counter() - t2:.1f} s")
    export(api)
    total = time.perf_counter() - t0
    log(f"verdicts in {t_verdicts:.1f} s (median {np.median(per_nb):.2f} s of sandboxed work per notebook); "
        f"whole run {total:.1f} s; grades in {GRADES_CSV}")
    return {"notebooks": len(jobs), "seconds": total, "verdict_seconds": t_verdicts}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=None, help="parallel grading jobs (default: all cores)")
    p.add_argument("--cpu-seconds", type=int, default=60, help="CPU limit per exercise")
    p.add_argument("--memory-mb", type=int, default=2048, help="address-space cap per exercise")
    p.add_argument("--one", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "NOTEBOOK"),
                   help="only decide one notebook (a job for an external scheduler); no nbgrader step")
    p.add_argument("--finish", action="store_true",
                   help="after manual grading in formgrader: only regenerate feedback and grades.csv")
    a = p.parse_args(argv)
    if a.finish:
        finish(a.workers)
        return 0
    limits = sandbox.Limits(cpu_seconds=a.cpu_seconds, memory_bytes=a.memory_mb << 20)
    if a.one:
        v = grade_one(*a.one, limits=limits)
        print(json.dumps({k: v.get(k) for k in ("cells", "notes")}, ensure_ascii=False, indent=1))
        return 0
    grade_class(a.workers, limits)
    return 0


if __name__ == "__main__":
    sys.exit(main())

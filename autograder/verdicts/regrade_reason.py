"""Why notebooks are decided again: what changed, since the last run, in what decides a verdict.

Each ``make grade`` keeps what its verdicts were decided with in ``.grading/decided-with.json``: the
digest of each file of the grader's code that decides a verdict (:func:`autograder.verdicts.decide.code_digest`,
so an edited comment or docstring is no change) and of each notebook's checks (its test cells: which
checks, their points, which are hidden). The next run compares the two and its summary says why it
decides notebooks again: "the grader's code changed in sandbox/command.py", "the checks of
attention/03-softmax-attention changed". A resubmission (other answers) needs no reason: it is new work. The record is
kept when a run has planned its work, so a run killed before it decided leaves no reason for the next
(which still decides every stale notebook: the verdict key, not this record, decides what is stale).
"""

from __future__ import annotations

from pathlib import Path

from autograder.course.spec import notebooks_of
from autograder.outputs import json_files
from autograder.verdicts.decide import code_digest, spec_digest, verdict_code
from autograder.workspace import ROOT, Workspace

#: where a work folder keeps what its verdicts were decided with
FILE = "decided-with.json"


def current(assignments: list[str], course: Path) -> dict[str, dict[str, str]]:
    """What verdicts are decided with now: ``{"code": {file: digest}, "checks": {assignment/notebook: digest}}``
    for the grader's files and the notebooks of ``assignments`` in ``course``."""
    code = {_shown(path): code_digest(path) for path in verdict_code() if path.exists()}
    checks = {f"{a}/{nb}": spec_digest(a, nb, course)
              for a in sorted(set(assignments)) for nb in notebooks_of(a, course)}
    return {"code": code, "checks": checks}


def _shown(path: Path) -> str:
    """A file of the grader's code as people name it: relative to the checkout, less ``autograder/``."""
    try:
        return path.relative_to(ROOT).as_posix().removeprefix("autograder/")
    except ValueError:
        return path.as_posix()


def reasons(before: dict | None, now: dict[str, dict[str, str]]) -> list[str]:
    """One line per kind of change from ``before`` (the last run's record, ``None`` when there is none) to
    ``now``: the grader's changed files, then each notebook whose checks changed (a notebook the last
    run did not know is new, not changed)."""
    if not before:
        return []
    lines = []
    code_before = before.get("code") or {}
    files = sorted(f for f in {*code_before, *now["code"]} if code_before and code_before.get(f) != now["code"].get(f))
    if files:
        lines.append(f"the grader's code changed in {', '.join(files)}: every notebook is decided again")
    checks_before = before.get("checks") or {}
    for notebook, digest in sorted(now["checks"].items()):
        if notebook in checks_before and checks_before[notebook] != digest:
            lines.append(f"the checks of {notebook} changed (which checks, their points or which are hidden): "
                         f"its notebooks are decided again")
    return lines


def read(ws: Workspace) -> dict | None:
    """The last run's record, or ``None`` (none yet, or one that cannot be read: then no reason is given)."""
    try:
        return json_files.read(ws.grading / FILE, "decided_with")
    except (OSError, ValueError):
        return None


def write(ws: Workspace, now: dict[str, dict[str, str]]) -> None:
    """Keep ``now`` as what this run's verdicts were decided with (merged over the last record, so a run
    of one assignment keeps the others' digests)."""
    before = read(ws) or {}
    merged = {"code": now["code"], "checks": {**(before.get("checks") or {}), **now["checks"]}}
    ws.grading.mkdir(parents=True, exist_ok=True)
    json_files.write(ws.grading / FILE, "decided_with", merged, indent=1, sort_keys=True)

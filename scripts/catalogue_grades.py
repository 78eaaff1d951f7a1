"""Grade the whole catalogue with one checkout's grader and write every score, or compare two such files.

A change to the grader that should change no grade (a refactor, a speed-up) is checked by grading
the same class, built from this repository's catalogues (``tests/catalogue/wrong``,
``tests/catalogue/correct``, ``tests/adversarial``) plus the solutions, with the grader before and
after the change, under one grading secret (so both meet the same hidden inputs)::

    git worktree add /tmp/before <commit>
    python scripts/catalogue_grades.py grade before.json --repository /tmp/before
    python scripts/catalogue_grades.py grade after.json
    python scripts/catalogue_grades.py compare before.json after.json   # exit 1 when a grade differs

The file maps ``student/notebook/grade id`` to the score nbgrader's gradebook holds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from grading_support import SOLUTIONS, entries, place, submission_text  # noqa: E402

#: the secret both gradings share: hidden inputs are drawn from it (32 hex digits)
SHARED_SECRET = b"0123456789abcdef0123456789abcdef"
FOLDERS = ("catalogue/wrong", "catalogue/correct", "adversarial")


def build_class(work: Path) -> int:
    """Hand in one submission per catalogue entry and the solutions of every notebook; the count."""
    n = 0
    for folder in FOLDERS:
        for entry in entries(folder):
            place(work, entry.student, entry.notebook, submission_text(entry))
            n += 1
    for nb in sorted(SOLUTIONS.glob("*.ipynb")):
        place(work, "solutions", nb.stem, nb.read_text())
        n += 1
    return n


def scores(work: Path) -> dict[str, float]:
    """``student/notebook/grade id`` -> score of every graded cell in the gradebook of ``work``."""
    from nbgrader.api import Gradebook

    out: dict[str, float] = {}
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        for sub in gb.assignment_submissions("attention"):
            for nb in sub.notebooks:
                for g in nb.grades:
                    out[f"{sub.student.id}/{nb.name}/{g.name}"] = float(g.score)
    return dict(sorted(out.items()))


def grade(out: Path, repository: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="catalogue-grades-") as tmp:
        work = Path(tmp)
        n = build_class(work)
        (work / ".grading").mkdir()
        (work / ".grading" / "secret").write_bytes(SHARED_SECRET)
        env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
        run = subprocess.run([sys.executable, "-m", "autograder.grade"], cwd=repository, env=env,
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):  # 1: some submissions failed to grade, named in the summary
            print(f"catalogue_grades: the grader in {repository} exited {run.returncode}: "
                  f"{run.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return 2
        found = scores(work)
    out.write_text(json.dumps(found, indent=1) + "\n")
    print(f"{n} notebooks handed in, {len(found)} graded cells written to {out}")
    return 0


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    changed = [f"{k}: {a.get(k)} -> {b.get(k)}" for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)]
    for line in changed:
        print(line)
    print(f"{len(a)} and {len(b)} graded cells; {len(changed)} differ")
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade the catalogue and write its scores")
    g.add_argument("out", type=Path)
    g.add_argument("--repository", type=Path, default=ROOT, help="the checkout whose grader grades")
    c = sub.add_parser("compare", help="list the grades that differ between two files")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = p.parse_args(argv)
    if a.command == "grade":
        return grade(a.out, a.repository.resolve())
    return compare(a.before, a.after)


if __name__ == "__main__":
    raise SystemExit(main())

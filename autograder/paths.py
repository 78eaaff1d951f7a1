"""The process's default workspace as module constants, for tests and interactive use only.

The constants are those of :func:`autograder.workspace.from_environment` when this module was first
imported. Nothing in the grader reads them: every function takes a ``Workspace`` (or the course root
it holds) as a required argument (``tests/test_no_silent_workspace.py``), and the edges nbgrader
starts take theirs from the app that starts them (nbgrader's export plugin's ``grades.csv`` and the
feedback page's exercise labels: its ``CourseDirectory``), or from the run (the Slurm job logs:
``make grade``'s work folder; ``site_address``: the course the command names)
(``tests/test_run_workspace_edges.py``).
"""

from __future__ import annotations

from autograder.workspace import AUTOGRADER, ROOT, from_environment

DEFAULT = from_environment()
COURSE = DEFAULT.course
SOLUTIONS = DEFAULT.solutions
WORK = DEFAULT.work
GRADING = DEFAULT.grading
STAGED = DEFAULT.staged_root
GRADES_CSV = DEFAULT.grades_csv
ROSTER = DEFAULT.roster  # the course roster (lms_export: SIS ids)

__all__ = ["AUTOGRADER", "COURSE", "DEFAULT", "GRADES_CSV", "GRADING", "ROOT", "ROSTER", "SOLUTIONS", "STAGED",
           "WORK"]

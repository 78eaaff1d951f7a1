"""The process's default workspace as module constants, for the edges only.

The constants are those of :func:`autograder.workspace.from_environment` when this module was first
imported. No function below the commands and hooks defaults to them: each takes a ``Workspace``
(or the course root it holds) as a required argument (``tests/test_no_silent_workspace.py``).
Still read here, as nbgrader's own plugins have no workspace handed to them: nbgrader's export
plugin's ``grades.csv`` (``csv_export``), the Slurm job logs (``slurm_cluster``), ``site_address``
(the course's ``_config.yml``, read by make release and make student), and the feedback template's
exercise labels (``feedback_html``).
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

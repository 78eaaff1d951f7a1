"""The process's default workspace as module constants: a compatibility layer over
:mod:`autograder.workspace` for the modules not yet handed a :class:`~autograder.workspace.Workspace`.

The constants are those of :func:`autograder.workspace.from_environment` when this module was first
imported; :data:`DEFAULT` is that workspace, the default argument of the functions that take one.
New code takes a ``Workspace`` argument instead (see :mod:`autograder.workspace`); the course's
own files are read from the course root handed down (``Workspace.course``, the ``course`` argument
of :mod:`autograder.course.spec`). Still reading constants here, as defaults only: nbgrader's export
plugin's ``grades.csv`` (``csv_export``) and the roster (``lms_export``) when no path is given, the
Slurm job logs (``slurm_cluster``), ``site_address`` (the course's ``_config.yml``, read by make
release and make student), and the feedback template's exercise labels (``feedback_html``).
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

"""The notebooks of a submission that grading does not read, each named in one line.

Grading reads ``submitted/<student>/<assignment>/<notebook>.ipynb`` for each notebook of the course
(:func:`autograder.course.spec.notebooks_of`), the list ``hand_in.py`` checks a hand-in against
(the bundle's ``notebooks.json``). Any other notebook in that folder (a renamed course notebook,
JupyterLab's duplicate ``…-Copy1.ipynb``, a scratch notebook) is not graded: the run's summary names
each, so work handed in under another name is never lost without a word. Only the folder's entry
names are read (never a file's content, never through a link); a name is shown as :func:`ascii`
shows it.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ignored_notebooks"]

#: JupyterLab's (and Notebook's) name for a duplicate: ``name-Copy1.ipynb``, ``name-Copy2.ipynb``, ...
_COPY = re.compile(r"^(?P<base>.+?)-Copy\d+$")


def _why(stem: str, course: Sequence[str]) -> str:
    """Why the notebook named ``stem`` is not graded, naming the course notebook it likely stands for."""
    copy = _COPY.match(stem)
    if copy and copy["base"] in course:
        return (f"a copy of {copy['base']}.ipynb (JupyterLab's Duplicate) is not graded: only "
                f"{copy['base']}.ipynb is")
    lowered = {nb.lower(): nb for nb in course}
    near = difflib.get_close_matches(stem.lower(), list(lowered), n=1, cutoff=0.6)
    if near:
        nb = lowered[near[0]]
        return f"not a notebook of the course (renamed from {nb}.ipynb?): only {nb}.ipynb is graded"
    return "not a notebook of the course, so it is not graded"


def ignored_notebooks(folder: Path, course: Sequence[str]) -> list[str]:
    """One line per notebook in ``folder`` (a submission's assignment folder) that is not one of the
    ``course``'s notebooks (their names without ``.ipynb``): ``'<name>': <why it is not graded>``, in
    name order. ``[]`` when the folder cannot be listed (the scan names such a folder already)."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder))
    except OSError:
        return []
    lines = []
    for name in names:
        stem, dot, ext = name.rpartition(".")
        if dot and ext.lower() == "ipynb" and not (stem in course and ext == "ipynb"):
            lines.append(f"{ascii(name)[1:-1]}: {_why(stem, course)}")
    return lines

"""The compiled cell-metadata check nbgrader autograde runs (autograder/nbgrader_ext/cell_metadata.py) accepts
and refuses exactly what nbgrader's own CheckCellMetadata does, with the same message."""

from __future__ import annotations

import copy

import nbformat
import pytest
from grading_support import RELEASE, SOLUTIONS
from nbgrader.nbgraderformat import MetadataValidator

from autograder.nbgrader_ext.cell_metadata import CompiledMetadataValidator

NOTEBOOKS = sorted(SOLUTIONS.glob("*.ipynb")) + sorted(RELEASE.glob("*.ipynb"))


def _outcome(validator, nb) -> str | None:
    try:
        validator().validate_nb(nb)
    except Exception as exc:  # the class and the message are what the instructor sees in the log
        return f"{type(exc).__name__}: {exc}"
    return None


def _corruptions():
    """(name, change) pairs: each makes some nbgrader cell's metadata invalid in its own way."""
    def meta(nb):
        return next(c.metadata.nbgrader for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))

    yield "points not a number", lambda nb: meta(nb).update(points="many")
    yield "unknown key", lambda nb: meta(nb).update(colour="red")
    yield "no grade_id", lambda nb: meta(nb).pop("grade_id")
    yield "empty grade_id", lambda nb: meta(nb).update(grade_id="")
    yield "schema too old", lambda nb: meta(nb).update(schema_version=1)
    yield "schema too new", lambda nb: meta(nb).update(schema_version=99)
    yield "no points", lambda nb: meta(nb).pop("points")
    yield "grade not a bool", lambda nb: meta(nb).update(grade="yes")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_course_notebooks_pass_both(path):
    nb = nbformat.read(path, as_version=4)
    assert _outcome(CompiledMetadataValidator, nb) is None
    assert _outcome(MetadataValidator, nb) is None


@pytest.mark.parametrize("name, change", list(_corruptions()), ids=[n for n, _ in _corruptions()])
def test_corrupted_metadata_is_refused_as_nbgrader_refuses_it(name, change):
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    change(nb)
    ours, theirs = _outcome(CompiledMetadataValidator, copy.deepcopy(nb)), _outcome(MetadataValidator, nb)
    assert theirs is not None, f"{name}: nbgrader accepts it, the corruption does not corrupt"
    assert ours == theirs

"""nbgrader's registration of a course's assignments, done once per course rather than once per work folder.

A new gradebook needs every assignment registered (``generate_assignment``: the gradebook's
assignment, notebook and cell rows, and the release copies the autograde step reads). That is
about 0.7 CPU-seconds for the nine notebooks of ``attention``, paid by the first ``make grade`` of
every new work folder: each term, and each test that grades a class of its own.

The first registration into a new gradebook is kept in the course root (``.registered/<key>/``:
the gradebook as registration left it and the release copies), and the next new gradebook with the
same key starts as a copy of it. The key (:func:`key`) digests everything registration reads: the
instructor's notebooks of each assignment, nbgrader's version, the course id and nbgrader's
configuration, with the source of every course module that configuration names (a preprocessor, a
hook). A gradebook that already exists is never replaced: registration in it is nbgrader's own.

The folder is git-ignored and ``make clean`` removes it; anything in it can be rebuilt: a kept
registration that cannot be read is done again by nbgrader and kept anew, and two runs that keep the
same key at once each put a whole copy in place (:func:`autograder.outputs.atomic.place_folder`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from autograder.nbgrader_ext import gradebook_state
from autograder.outputs import atomic
from autograder.workspace import Workspace

#: CourseDirectory settings that say where a work folder is, not what registration writes
_WHERE = {"root", "db_url", "submitted_directory", "autograded_directory", "feedback_directory",
          "release_directory"}
#: the files of a kept registration
GRADEBOOK = "gradebook.db"
RELEASE = "release"


def folder(ws: Workspace) -> Path:
    """Where the course of ``ws`` keeps its registrations (in the course root, git-ignored)."""
    return ws.course / ".registered"


def _stable(value: Any, named: set[str]) -> Any:
    """``value`` (a configuration value) as JSON the same in every process: a class or function by its
    qualified name, and the module of each one that is the course's own added to ``named``."""
    if isinstance(value, dict):
        return {str(k): _stable(v, named) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_stable(v, named) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, type) or callable(value):
        module = getattr(value, "__module__", "") or ""
        if module.split(".")[0] == "autograder":
            named.add(module)
        return f"{module}.{getattr(value, '__qualname__', repr(value))}"
    return repr(value)


def key(config: Any, course_id: str, digests: dict[str, str]) -> str:
    """The key of a registration of the assignments ``digests`` names (assignment -> digest of its
    instructor's notebooks), by nbgrader under ``config`` for the course ``course_id``.

    Parameters
    ----------
    config : traitlets.config.Config
        nbgrader's configuration as the run's API holds it.
    course_id : str
        The gradebook's course id.
    digests : dict of str to str
        Every assignment registered, with ``gradebook_state.course_digest`` of its notebooks.

    Returns
    -------
    str
        A hex digest; equal keys register equal rows and equal release copies.
    """
    import nbgrader

    named: set[str] = set()
    settings = {section: {k: v for k, v in values.items() if not (section == "CourseDirectory" and k in _WHERE)}
                if isinstance(values, dict) else values for section, values in config.items()}
    h = hashlib.sha256(json.dumps({"nbgrader": nbgrader.__version__, "course": course_id, "assignments": digests,
                                   "config": _stable(settings, named)}, sort_keys=True).encode())
    for module in sorted(named):
        h.update(b"\0" + module.encode() + b"\0" + Path(sys.modules[module].__file__).read_bytes())
    return h.hexdigest()


def _release(api, assignment: str) -> Path:
    return Path(api.coursedir.release_directory) / assignment


def restore(api, digests: dict[str, str], ws: Workspace) -> bool:
    """Start the new gradebook of ``api`` as the kept registration of ``digests``, if there is one;
    whether it did (False: the caller registers them with nbgrader). Never touches a gradebook
    that exists."""
    gradebook = gradebook_state.sqlite_file(str(api.coursedir.db_url))
    if gradebook is None or gradebook.exists():
        return False
    kept = folder(ws) / key(api.config, api.coursedir.course_id, digests)
    try:
        data = (kept / GRADEBOOK).read_bytes()
        releases = {a: {p.name: p.read_bytes() for p in (kept / RELEASE / a).glob("*.ipynb")} for a in digests}
    except OSError:
        return False
    if not data or not all(releases.values()):
        return False
    for assignment, files in releases.items():
        target = _release(api, assignment)
        shutil.rmtree(target, ignore_errors=True)  # left by an earlier gradebook, deleted since
        for name, content in files.items():
            atomic.write_bytes(target / name, content)
    atomic.write_bytes(gradebook, data)
    return True


def keep(api, digests: dict[str, str], ws: Workspace) -> None:
    """Keep what registering ``digests`` into a new gradebook just wrote, for the next new gradebook of
    the course (called where :func:`restore` found none, or a broken one, which this replaces whole; a
    failure only means the next one registers too)."""
    gradebook = gradebook_state.sqlite_file(str(api.coursedir.db_url))
    if gradebook is None or not gradebook.exists():
        return
    target = folder(ws) / key(api.config, api.coursedir.course_id, digests)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".new-") as tmp:
            entry = Path(tmp) / "entry"
            atomic.write_bytes(entry / GRADEBOOK, gradebook.read_bytes())
            for assignment in digests:
                for p in _release(api, assignment).glob("*.ipynb"):
                    atomic.write_bytes(entry / RELEASE / assignment / p.name, p.read_bytes())
            atomic.place_folder(entry, target, Path(tmp) / "aside")
    except OSError:
        pass  # the course root is read-only, say

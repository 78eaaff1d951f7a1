"""What a kernel can change that grading starts without, put back while a check runs "as graded".

Grading runs every answer in a fresh process: NumPy's and ``math``'s attributes as imported, NumPy's
error handling at its defaults, a working directory holding nothing of the student's. A notebook's
kernel may have changed all of these in a scratch cell (``np.softmax = ...``, ``np.seterr(all="raise")``,
``os.chdir``); :func:`as_at_start` gives the notebook's graded run the state grading has, and
:func:`changed` says what the kernel changed, so a check that fails for it can name it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import types
from collections.abc import Iterator

import numpy as np

#: the modules whose attributes a scratch cell may rebind and an answer may read
WATCHED = ("numpy", "numpy.linalg", "numpy.random", "numpy.fft", "math")
#: NumPy's error handling in a fresh process (grading's)
NUMPY_ERRORS = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
_MISSING = object()
#: each watched module's attributes when the course package was imported (a notebook's first cell)
_AT_START = {name: dict(vars(sys.modules[name])) for name in WATCHED if name in sys.modules}


def changed() -> list[tuple[str, str]]:
    """(module, attribute) of every attribute of :data:`WATCHED` rebound or added since the course
    package was imported, a submodule imported since excepted (importing changes nothing an answer reads)."""
    found = []
    for name, start in _AT_START.items():
        now = vars(sys.modules[name])
        for attr, value in list(now.items()):
            before = start.get(attr, _MISSING)
            if before is value or (before is _MISSING and isinstance(value, types.ModuleType)):
                continue
            found.append((name, attr))
        found += [(name, attr) for attr in start if attr not in now]
    return found


@contextlib.contextmanager
def as_at_start() -> Iterator[list[tuple[str, str]]]:
    """Within: the watched modules' attributes as at the start (:func:`changed` ones put back), NumPy's
    error handling at its defaults and an empty working directory of its own; afterwards the kernel's
    state as it was. Yields what was put back."""
    put_back = changed()
    saved = [(name, attr, vars(sys.modules[name]).get(attr, _MISSING)) for name, attr in put_back]
    for name, attr in put_back:
        _set(sys.modules[name], attr, _AT_START[name].get(attr, _MISSING))
    try:
        with np.errstate(**NUMPY_ERRORS), tempfile.TemporaryDirectory() as empty, _chdir(empty):
            yield put_back
    finally:
        for name, attr, value in saved:
            _set(sys.modules[name], attr, value)


def _set(module: types.ModuleType, attr: str, value: object) -> None:
    if value is _MISSING:
        vars(module).pop(attr, None)
    else:
        setattr(module, attr, value)


@contextlib.contextmanager
def _chdir(path: str) -> Iterator[None]:
    """``os.chdir`` there and back (back to where it was, also when that folder is gone: then home)."""
    try:
        before: str | None = os.getcwd()
    except OSError:
        before = None
    os.chdir(path)
    try:
        yield
    finally:
        try:
            os.chdir(before or os.path.expanduser("~"))
        except OSError:
            os.chdir(os.path.expanduser("~"))

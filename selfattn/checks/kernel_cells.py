"""Which text the grader reads for a function defined in a notebook kernel.

The notebook's ``check()`` judges the text the grader will read, not the function object in the
kernel: the answer cell of the function (found by its id when the front end says which cell ran
what, as JupyterLab, Notebook 7 and VS Code do), else the cell that defined it (through its code,
or, for a decorated function or one made by a magic, the last cell that defined its name), turned
into plain Python by :func:`selfattn.answer.graded_source`. Outside IPython nothing here finds a
cell, and the function is judged as it is.

Importing this module starts remembering which cell runs which text (:func:`watch_cells`).
"""

from __future__ import annotations

import inspect
import itertools
import json
import linecache
import os
import sys
from pathlib import Path
from typing import Any

from ..answer import ANSWER_CELL, defined_names, graded_source

__all__ = ["answer_of", "cell_of", "globals_of", "in_a_kernel", "stale_note", "watch_cells"]


def _shell() -> Any:
    """The running IPython shell, or ``None`` outside IPython."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    return get_ipython()


def in_a_kernel() -> bool:
    """Whether this runs in an IPython shell (a notebook's kernel, or the shell ``hand_in.py``
    validates in), where a cell's text on stderr is what a failed check shows."""
    return _shell() is not None


def _unwrapped(fn: Any) -> Any:
    """``fn`` without its decorators (``functools.lru_cache``, ``functools.wraps`` wrappers)."""
    try:
        return inspect.unwrap(fn) if callable(fn) else fn
    except ValueError:  # a cycle of __wrapped__
        return fn


def globals_of(fn: Any) -> dict[str, Any]:
    """The namespace ``fn`` was defined in (the kernel's, for a notebook cell)."""
    found = getattr(_unwrapped(fn), "__globals__", None)
    if isinstance(found, dict):
        return found
    shell = _shell()
    return getattr(shell, "user_ns", {}) if shell is not None else {}


def _in_a_cell(filename: str) -> bool:
    return filename.startswith("<ipython-input") or ("ipykernel_" in filename and not os.path.exists(filename))


def _history(shell: Any) -> list[str]:
    """The raw text of every cell run in this kernel, by execution count (index 0 is empty)."""
    hist = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return [h if isinstance(h, str) else "" for h in hist] if isinstance(hist, list) else []


def _raw_cell_named(shell: Any, filename: str) -> str | None:
    """The raw text of the cell IPython compiled under ``filename`` (its magics not yet transformed).

    The cells run since this module was imported are known by name (:func:`_remember_run`);
    older ones are looked for in the history, whose texts lost their final newlines."""
    if filename in _NAMED:
        return _NAMED[filename]
    hist = _history(shell)
    for n, raw in ((n, hist[n] + end) for n in range(len(hist) - 1, 0, -1) for end in ("", "\n")):
        try:
            if shell.compile.get_code_name(raw, shell.transform_cell(raw), n) == filename:
                return raw
        except Exception:
            return None
    return None


def _latest_cell_defining(shell: Any, name: str) -> str | None:
    """The raw text of the last cell run that binds ``name`` at its top level."""
    hist = _history(shell)
    return next((hist[n] for n in range(len(hist) - 1, 0, -1) if name in defined_names(hist[n])), None)


#: cell id -> (order, raw text) of the last run of each cell in this kernel (when the front end
#: says which cell runs, as JupyterLab, Notebook 7 and VS Code do)
_RUNS: dict[str, tuple[int, str]] = {}


def _remember_run(info: Any) -> None:
    cell_id = getattr(info, "cell_id", None)
    raw = getattr(info, "raw_cell", None)
    if not isinstance(raw, str) or getattr(info, "silent", False):
        return
    shell = _shell()
    try:  # the name IPython compiles this cell under, so that a function's code leads back to it
        transformed = getattr(info, "transformed_cell", None) or shell.transform_cell(raw)
        _NAMED[shell.compile.get_code_name(raw, transformed, shell.execution_count)] = raw
    except Exception:
        pass
    if isinstance(cell_id, str) and cell_id:
        _RUNS[cell_id] = (next(_ORDER), raw)


_ORDER = itertools.count()
#: compiled name -> exact raw text of every cell run since this module was imported
_NAMED: dict[str, str] = {}


def watch_cells() -> None:
    """Remember which cell ran which text, from now on (called when this module is imported)."""
    shell = _shell()
    events = getattr(shell, "events", None)
    if events is not None and _remember_run not in events.callbacks.get("pre_run_cell", []):
        events.register("pre_run_cell", _remember_run)


_SAVED: dict[tuple[str, float], dict[str, dict[str, str]]] = {}


def _notebooks() -> list[Path]:
    """The saved notebooks the kernel may belong to: its own, where the Jupyter server names it
    (``JPY_SESSION_NAME``; a duplicate beside it holds the same cell ids), else those of its working folder."""
    own = Path(os.environ.get("JPY_SESSION_NAME") or "-")
    own = own if own.is_absolute() else Path.cwd() / own.name  # relative: to the server's root, beside the kernel
    if own.suffix == ".ipynb" and own.is_file():
        return [own]
    return sorted(Path.cwd().glob("*.ipynb"))


def _saved_answer_cells(function: str) -> dict[str, str]:
    """id -> saved text of the answer cells of ``function`` (grade id = its name) in the notebooks
    of the kernel's working folder (the notebook's own folder): what the grader reads if the
    notebook is handed in as saved."""
    cells: dict[str, str] = {}
    for path in _notebooks():
        try:
            key = (str(path), path.stat().st_mtime)
            if key not in _SAVED:
                found: dict[str, dict[str, str]] = {}
                for c in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
                    nbg = c.get("metadata", {}).get("nbgrader", {})
                    if nbg.get("solution") and isinstance(c.get("id"), str):
                        text = c.get("source", "")
                        text = "".join(text) if isinstance(text, list) else str(text)
                        found.setdefault(str(nbg.get("grade_id")), {})[c["id"]] = text
                _SAVED[key] = found
            cells |= _SAVED[key].get(function, {})
        except (OSError, ValueError, AttributeError, TypeError):
            continue
    return cells


def stale_note(name: str) -> str:
    """A sentence when the answer cell ``name`` as saved holds other text than what last ran in it
    (edited and not run again, or run and not saved yet): the check judged what ran, grading reads
    the saved notebook. ``""`` otherwise, and where the front end does not name the cells it runs."""
    saved = _saved_answer_cells(name)
    ran = [(_RUNS[i][0], i) for i in saved if i in _RUNS]
    if not ran:
        return ""
    last = max(ran)[1]
    if _RUNS[last][1].rstrip() == saved[last].rstrip():
        return ""
    return (f"the cell of {name} as saved differs from the text that ran (this check judged what ran; grading "
            f"reads the saved notebook): run that cell again and save")


def _saved_answer_of_this_run(name: str) -> str | None:
    """The saved text of answer ``name`` when every cell run since the course package was imported
    is a cell of one saved notebook (a run of the file, as ``nbgrader validate`` and Restart & Run
    All of a saved notebook do), else ``None``: a front end that does not name its cells may be
    running unsaved edits."""
    ran = {raw.rstrip() for raw in _NAMED.values()}
    for path in Path.cwd().glob("*.ipynb"):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            texts = {("".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))).rstrip()
                     for c in cells if c.get("cell_type") == "code"}
            answer = next((c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == name
                           and c.get("metadata", {}).get("nbgrader", {}).get("solution")), None)
        except (OSError, ValueError, AttributeError, TypeError, KeyError):
            continue
        if answer is not None and ran and ran <= texts:
            source = answer.get("source", "")
            return "".join(source) if isinstance(source, list) else str(source)
    return None


def _graded_text(own: str, name: str) -> str | None:
    """The text the grader will read for answer ``name`` when it differs from ``own`` (the text of
    the cell that defined the function), else ``None``; needs a front end that names the cells
    it runs.

    That is the last text run in the answer cell; if the answer cell has not run since the course
    package was imported while the cell of ``own`` is known to be another one, its saved text."""
    saved = _saved_answer_cells(name)
    ran = [_RUNS[i] for i in saved if i in _RUNS]
    if not _RUNS:  # no cell ids: only a run of the saved notebook itself (nbgrader validate) is known
        answer = _saved_answer_of_this_run(name)
        return answer if answer is not None and answer.rstrip() != own.rstrip() else None
    if ran:
        answer = max(ran)[1]
    else:
        own_ids = {i for i, (_, raw) in _RUNS.items() if raw.rstrip() == own.rstrip()}
        if not saved or not own_ids or own_ids & saved.keys():
            return None
        answer = next(iter(saved.values()))
    return answer if answer.rstrip() != own.rstrip() else None


def _raw_answer(fn: Any, name: str) -> tuple[str | None, str]:
    """(raw text of the cell graded as the answer ``name``, a note), or ``(None, "")`` when ``fn``
    does not come from a notebook cell.

    The cell is the answer cell (found by its id) when the front end says which cell ran what;
    else the cell that defined ``fn`` (through its code, or, for a decorated function or one made
    by a magic, the last cell that defined ``name``).
    """
    shell = _shell()
    code = getattr(_unwrapped(fn), "__code__", None)
    filename = getattr(code, "co_filename", "")
    own: str | None = None
    if filename and _in_a_cell(filename):
        own = _raw_cell_named(shell, filename) if shell is not None else None
        if own is None:
            lines = linecache.getlines(filename)
            own = "".join(lines) if lines else None
    elif shell is not None:
        own = _latest_cell_defining(shell, name)
    if own is not None and (answer := _graded_text(own, name)) is not None:
        return answer, (f"your answer must be in {ANSWER_CELL} ({name} was defined in another cell, and "
                        f"only that cell is graded)")
    return own, ""


def answer_of(fn: Any, name: str) -> tuple[str | None, str]:
    """(the Python the grader runs for answer ``name``, a note for the student), or ``(None, "")``
    outside a notebook. See :mod:`selfattn.answer`."""
    raw, note = _raw_answer(fn, name)
    if raw is None:
        return None, ""
    answer = graded_source(raw)
    return answer.python, "; ".join(n for n in (note, answer.note) if n)


def cell_of(fn: Any, name: str | None = None) -> str | None:
    """The Python the grader runs for the notebook cell of ``fn`` (answer ``name``, by default the
    function's own name), or ``None`` outside a notebook."""
    name = name or getattr(_unwrapped(fn), "__name__", "")
    return answer_of(fn, name)[0]


watch_cells()

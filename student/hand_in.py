"""Hand in: ``python hand_in.py YOUR_LOGIN`` packs your notebooks into ``YOUR_LOGIN.zip``.

It first validates each notebook with nbgrader (the same public checks as in the notebook), says
in one line why each failing notebook fails, and writes the archive in the layout the course's
grading accepts: ``YOUR_LOGIN/attention/<notebook>.ipynb``. Notebooks that fail are packed too:
every exercise is graded on its own, so hand in what you have.

The login must be one that grading accepts (``ids.py``, the grader's own rule, copied here by
``make student``); anything else is refused with one line before anything is written.

Validating is nbgrader's own (its ``Validator``: the same failed check cells, edited read-only
cells and changed cell types as ``nbgrader validate``), with every cell run in order in a fresh
process per notebook, but faster: the cells that only draw (a chapter's widget, ``compare(...)``)
are not run, since they decide nothing; one notebook per core goes at a time (at most four); and on Linux each notebook
runs in an IPython shell of a process forked from this one, which has imported the libraries once,
instead of a Jupyter kernel that imports them again (elsewhere, or with ``HAND_IN_KERNELS=1``, in
kernels). A notebook that ends its process or runs over :data:`NOTEBOOK_SECONDS` fails alone.
Run by a python without nbgrader (``python3 hand_in.py``), it runs itself again with ``.venv``'s.

A notebook that grading would not read (too large even without its stored outputs, which grading
drops) gets a one-line warning first; it is packed all the same.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # imported from elsewhere (the tests): its neighbours import all the same
    sys.path.insert(0, str(HERE))
from install import TARGET, program  # noqa: E402 - the course's environment, as install.py makes it

try:  # beside this file in the course folder; with the grader in the course's repository
    import clock
    import ids
    import stored_outputs
except ImportError:
    sys.path += [str(HERE.parent / "autograder" / d) for d in ("course", "intake", "late")]
    import clock
    import ids
    import stored_outputs

#: what ``nbgrader validate`` shows when nbgrader is not installed (run with the course's python)
#: seconds one notebook may take to validate (every call a check makes has its own 10 s limit)
NOTEBOOK_SECONDS = 120
NO_NBGRADER = "cannot validate: nbgrader is not installed for this python; run `python install.py` first"


def size_warning(path: Path) -> str | None:
    """One line if grading would not read ``path`` (a notebook); None when it would."""
    size, mib = path.stat().st_size, 1 << 20
    if size > stored_outputs.MAX_FILE_BYTES:
        return (f"WARNING {path.name} is {size / mib:.0f} MiB, over the {stored_outputs.MAX_FILE_BYTES // mib} MiB "
                "grading reads: clear its outputs (Edit > Clear Outputs of All Cells), save, and run this again")
    try:
        kept = stored_outputs.kept_size(path.read_bytes())
    except stored_outputs.TooIntricate as exc:
        return f"WARNING {path.name} will not be graded: {exc}; clear its outputs, save, and run this again"
    if kept > stored_outputs.MAX_KEPT_BYTES:
        return (f"WARNING {path.name} is {kept / mib:.1f} MiB without its outputs, over the "
                f"{stored_outputs.MAX_KEPT_BYTES // mib} MiB grading reads: it would be graded as unanswered "
                "(remove large pasted images or cells you added)")
    return None


def draws_only(cell: dict) -> bool:
    """A code cell that only draws: its whole text (comments aside) is one call of a chapter's widget,
    ``demos.<name>(...)``, or of ``compare(...)`` (your result beside the course's, which never
    fails), after at most the line ``from selfattn.compare import compare`` that a notebook's
    compare cell starts with. Neither decides a grade, so validating does not run them."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") != "code" or meta.get("grade") or meta.get("solution"):
        return False
    try:
        body = ast.parse(cell.get("source", "")).body
    except SyntaxError:
        return False
    if not body or not all(_imports_compare(node) for node in body[:-1]):
        return False
    if not isinstance(body[-1], ast.Expr) or not isinstance(call := body[-1].value, ast.Call):
        return False
    func = call.func
    return ((isinstance(func, ast.Name) and func.id == "compare")
            or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "demos"))


def _imports_compare(node: ast.stmt) -> bool:
    """``node`` is ``from selfattn.compare import compare``, to the letter (no other name, no alias)."""
    return (isinstance(node, ast.ImportFrom) and node.module == "selfattn.compare" and node.level == 0
            and [(alias.name, alias.asname) for alias in node.names] == [("compare", None)])


def one_line(error: str) -> str:
    """The first line that says what went wrong in a failed cell's output (colours removed): a
    check's message (``✗ ...`` on stderr, or a ``CheckFailed`` traceback) whole, else the last
    line naming an exception."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", error).splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if line.startswith(("CheckFailed:", "✗ ")):  # the check's message: its first line and the wrapped rest
            rest = lines[i + 1:]
            ends = next((j for j, ln in enumerate(rest) if ln.startswith("(check of ")), len(rest))
            return " ".join([line.removeprefix("CheckFailed:").removeprefix("✗ ").strip(), *rest[:ends]])
    errors = [ln for ln in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b", ln)]
    return (errors or lines or ["the cell failed"])[-1]


def cell_names(nb: dict) -> list[tuple[str, str]]:
    """(the text of each graded cell of ``nb``, as nbgrader reports it, stripped; how a student
    finds it: its grade id, and for a written answer the heading of the question above it), in
    notebook order."""
    names: list[tuple[str, str]] = []
    heading = ""
    for cell in nb.get("cells", []):
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "markdown" and not meta.get("grade") and text.lstrip().startswith("#"):
            heading = text.lstrip().splitlines()[0].lstrip("#").strip()
        if meta.get("grade"):
            gid = str(meta.get("grade_id", "?"))
            written = cell.get("cell_type") == "markdown" and heading
            names.append((text.strip(), f"{gid} ({heading})" if written else gid))
    return names


def reason(results: dict, names: list[tuple[str, str]] | None = None) -> str | None:
    """One line on why nbgrader's validation ``results`` fail, or ``None`` when they pass.

    ``names`` (:func:`cell_names` of the notebook) names the cells: the question not answered,
    the other failing check cells."""
    unused = list(names or [])
    if results.get("type_changed"):
        return "the type of a cell was changed (code <-> text): get a fresh copy and paste your answers in"
    if results.get("changed"):
        return "a read-only cell was edited: get a fresh copy of the notebook and paste your answers in"
    failed = results.get("failed", [])
    if not failed:
        return None

    def name(cell: dict) -> str:  # failed cells come in notebook order: two alike are told apart
        text = str(cell.get("source", "")).strip()
        at = next((i for i, (t, _) in enumerate(unused) if t == text), None)
        return unused.pop(at)[1] if at is not None else "a cell"

    first = one_line(failed[0].get("raw_error", ""))
    if first == "You did not provide a response.":
        first = f"You did not provide a response to {name(failed[0])}."
    if len(failed) == 1:
        return first
    others = ", ".join(name(cell) for cell in failed[1:])
    return f"{first} (also failing: {others})"


def syntax_problems(nb: dict) -> list[str]:
    """One line for each answer cell of ``nb`` that is not plain Python (grading runs it as plain
    Python, not as IPython: a ``%magic`` line is a syntax error there), in the words of the grader's
    feedback: ``the cell of softmax raised SyntaxError: invalid syntax (line 3)``."""
    lines = []
    for cell in nb.get("cells", []):
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") != "code" or not meta.get("solution"):
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        label = str(meta.get("grade_id", "?"))
        try:
            compile(text, f"<{label}>", "exec")
        except SyntaxError as exc:
            where = f" (line {exc.lineno})" if exc.lineno else ""
            lines.append(f"the cell of {label} raised {type(exc).__name__}: {exc.msg}{where}")
        except ValueError as exc:  # a null byte
            lines.append(f"the cell of {label} raised ValueError: {exc}")
    return lines


def run_cells(nb) -> None:
    """Run the code cells of ``nb`` in order in a new IPython shell of this process, as a kernel
    runs them, and record what nbgrader reads of each: an error, text on stderr, a result."""
    import contextlib
    import io
    import traceback

    from IPython.core.interactiveshell import InteractiveShell
    from nbformat.v4 import new_output

    shell = InteractiveShell.instance()
    sys.stdin = io.StringIO()  # nobody types while validating: input() and help() end at once, as in a kernel
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = shell.run_cell(cell.source, store_history=True)
        outputs = [new_output("stream", name="stderr", text=err.getvalue())] if err.getvalue() else []
        exc = result.error_before_exec or result.error_in_exec
        if exc is not None:
            render = getattr(exc, "_render_traceback_", None)
            lines = render() if callable(render) else traceback.format_exception_only(type(exc), exc)
            outputs.append(new_output("error", ename=type(exc).__name__, evalue=str(exc), traceback=list(lines)))
        elif result.result is not None:
            outputs.append(new_output("execute_result", data={"text/plain": repr(result.result)},
                                      execution_count=shell.execution_count))
        cell.outputs = outputs


def validate_one(path: str, in_this_process: bool = False) -> str | None:
    """Validate one notebook as ``nbgrader validate`` does (nbgrader's own Validator), the cells
    that only draw not run; the reason it fails, or None.

    The cells run in a Jupyter kernel, or with ``in_this_process`` in this process (a fresh one
    per notebook, see :func:`validate_all`)."""
    from nbgrader.preprocessors import ClearOutput, Execute, NbGraderPreprocessor
    from nbgrader.validator import Validator

    class SkipDrawing(NbGraderPreprocessor):
        """Makes each cell that only draws (:func:`draws_only`) a raw cell, which nothing runs (its
        text is not changed: a check that asks whether every cell run is a cell of the saved
        notebook still finds each one)."""

        def preprocess(self, nb, resources):
            resources["drawing_cells"] = [i for i, cell in enumerate(nb.cells) if draws_only(cell)]
            for i in resources["drawing_cells"]:
                nb.cells[i].cell_type = "raw"
            return nb, resources

    class RunHere(NbGraderPreprocessor):
        """Runs the cells in this process (:func:`run_cells`) instead of a kernel."""

        def preprocess(self, nb, resources):
            run_cells(nb)
            return nb, resources

    class RestoreDrawing(NbGraderPreprocessor):
        """Makes those cells code again, so that nbgrader's checks see the notebook as saved."""

        def preprocess(self, nb, resources):
            for i in resources.pop("drawing_cells", []):
                nb.cells[i].cell_type = "code"
                nb.cells[i].outputs = []
            return nb, resources

    steps = [ClearOutput, SkipDrawing, RunHere if in_this_process else Execute, RestoreDrawing]
    try:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        why = reason(Validator(preprocessors=steps).validate(path), cell_names(saved))
        # an answer cell that does not parse: named first (its checks then fail with a NameError)
        broken = syntax_problems(saved)
        return "; ".join(broken) + (f" (then: {why})" if why else "") if broken else why
    except Exception as exc:  # an unreadable notebook, a kernel that died: this notebook only
        return f"could not be validated: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def quiet() -> None:
    """In a validating process: kernels' start-up warnings (they inherit its stderr) are not shown."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _forked(path: str, answer) -> None:
    quiet()
    answer.send(validate_one(path, in_this_process=True))
    answer.close()


def validate_forked(paths: list[Path], workers: int) -> dict[Path, str | None]:
    """Each notebook in a process forked from this one, ``workers`` at a time: the course's
    libraries are imported once, here, and each notebook still runs in a fresh process of its own
    (stopped after :data:`NOTEBOOK_SECONDS`)."""
    import multiprocessing
    import multiprocessing.connection
    import time

    os.environ.setdefault("MPLBACKEND", "Agg")  # as a kernel's inline backend: nothing opens a window
    import IPython.core.interactiveshell  # noqa: F401 - imported once, before forking
    import ipywidgets  # noqa: F401
    import matplotlib.pyplot  # noqa: F401
    import nbformat.validator
    import nbgrader.validator  # noqa: F401
    import numpy  # noqa: F401

    nbformat.validator.get_validator(4)  # the schema of a saved notebook, compiled once, not once per notebook

    fork = multiprocessing.get_context("fork")
    pending, running, results = list(paths), {}, {}
    while pending or running:
        while pending and len(running) < workers:
            path = pending.pop(0)
            receive, send = fork.Pipe(duplex=False)
            process = fork.Process(target=_forked, args=(str(path), send), daemon=True)
            process.start()
            send.close()
            running[path] = (process, receive, time.monotonic() + NOTEBOOK_SECONDS)
        ready = multiprocessing.connection.wait([r for _, r, _ in running.values()], timeout=0.5)
        for path, (process, receive, deadline) in list(running.items()):
            if receive in ready:
                try:
                    results[path] = receive.recv()
                except EOFError:
                    results[path] = "validating it ended without an answer (does a cell end the process?)"
            elif time.monotonic() > deadline:
                process.kill()
                results[path] = f"validating it took over {NOTEBOOK_SECONDS} s (does a cell never end?)"
            else:
                continue
            process.join()
            receive.close()
            del running[path]
    return {p: results[p] for p in paths}


def validate_all(paths: list[Path]) -> dict[Path, str | None]:
    """Path -> reason it fails (``None``: passes), validated several at a time: in processes forked
    from this one on Linux, in Jupyter kernels elsewhere (where forking a process that has loaded
    NumPy is not safe, or not possible)."""
    try:
        import nbgrader.validator  # noqa: F401 - only to know it is there
    except ImportError:
        return {p: NO_NBGRADER for p in paths}
    workers = max(1, min(len(paths), os.cpu_count() or 1, 4))
    if sys.platform.startswith("linux") and os.environ.get("HAND_IN_KERNELS") != "1":
        return validate_forked(paths, workers)
    with ProcessPoolExecutor(workers, initializer=quiet) as pool:
        return dict(zip(paths, pool.map(validate_one, map(str, paths)), strict=True))


#: the course's notebooks as ``make student`` lists them in the bundle: ``assignment/notebook.ipynb`` ->
#: the nbgrader ids of its cells (they stay when a notebook is renamed or duplicated)
COURSE_LIST = "notebooks.json"


def graded_cells(path: Path) -> frozenset[str]:
    """The nbgrader ids of ``path``'s cells; empty when it cannot be read as a notebook."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells") or []
        return frozenset(str(c["metadata"]["nbgrader"]["grade_id"]) for c in cells
                         if isinstance(c, dict) and (c.get("metadata") or {}).get("nbgrader", {}).get("grade_id"))
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return frozenset()


def course_notebooks(folder: Path, listed: dict[str, list[str]]) -> tuple[list[Path], list[str]]:
    """(the course's notebooks under ``folder`` that are there, in ``listed``'s order; one ``FAIL`` line
    per problem).

    ``listed`` maps each course notebook (``assignment/notebook.ipynb``) to the ids of its cells. A
    course notebook that is missing, and a notebook that is not the course's (renamed, or JupyterLab's
    ``…-Copy1.ipynb``), which grading does not read, are each named with the course notebook whose
    cells it holds and what to do."""
    found = [folder / name for name in listed if (folder / name).is_file()]
    extras = sorted(p for p in folder.glob("*/*.ipynb")
                    if p.relative_to(folder).as_posix() not in listed and ".ipynb_checkpoints" not in p.parts)
    # each cell id that only one course notebook has ("summary" cells, say, are in several)
    counts: dict[str, int] = {}
    for cells in listed.values():
        for cell in set(cells):
            counts[cell] = counts.get(cell, 0) + 1
    own = {name: {c for c in cells if counts[c] == 1} for name, cells in listed.items()}
    holds: dict[Path, str] = {}
    for extra in extras:
        ids_ = graded_cells(extra)
        shared = {name: len(ids_ & cells) for name, cells in own.items()}
        best = max(shared, key=shared.__getitem__, default=None)
        if best is not None and shared[best]:
            holds[extra] = best
    lines = []
    for name in listed:
        if not (folder / name).is_file():
            held = [e.relative_to(folder).as_posix() for e, n in holds.items() if n == name]
            where = f"; its cells are in notebooks/{held[0]}: rename that file back" if held else ""
            lines.append(f"FAIL notebooks/{name}: missing, so nothing of it is handed in{where}")
    for extra in extras:
        shown = (Path("notebooks") / extra.relative_to(folder)).as_posix()
        if extra in holds and (folder / holds[extra]).is_file():
            lines.append(f"FAIL {shown}: not a course notebook, so it is not handed in; it holds cells of "
                         f"notebooks/{holds[extra]}: if your work is in it, copy it into that notebook")
        elif extra not in holds:
            lines.append(f"FAIL {shown}: not a course notebook, so it is not handed in")
    return found, lines


def main(argv: list[str]) -> int:
    validate = "--no-validate" not in argv
    argv = [a for a in argv if a != "--no-validate"]
    if len(argv) != 1:
        sys.exit("usage: python hand_in.py [--no-validate] YOUR_LOGIN")
    student = argv[0]
    if why := ids.id_problem(student):
        sys.exit(f"hand_in.py: {student!r} is not a login grading accepts: {why}")
    if validate and importlib.util.find_spec("nbgrader") is None and program(TARGET, "python").exists():
        # run by another python (python3 hand_in.py): the course's environment validates
        return subprocess.run([str(program(TARGET, "python")), str(Path(__file__).resolve()), *argv]).returncode
    listed_file = HERE / COURSE_LIST
    if listed_file.is_file():  # the bundle lists the course's notebooks: only those are graded
        notebooks, problems = course_notebooks(HERE / "notebooks", json.loads(listed_file.read_text()))
    else:
        notebooks, problems = sorted((HERE / "notebooks").glob("*/*.ipynb")), []
    for line in problems:
        print(line)
    for path in notebooks:
        if warning := size_warning(path):
            print(warning)
    if validate:
        print(f"validating {len(notebooks)} notebooks ...", flush=True)
        for path, why in validate_all(notebooks).items():
            print(f"ok   {path.relative_to(HERE).as_posix()}" if why is None
                  else f"FAIL {path.relative_to(HERE).as_posix()}: {why}")
    archive = HERE / f"{student}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in notebooks:
            z.write(path, f"{student}/{path.parent.name}/{path.name}")
    print(f"\nwrote {archive.name}: hand in this file")
    for line in clock.hand_in_lines(HERE / clock.BUNDLE_FILE):  # the due dates make student shipped
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

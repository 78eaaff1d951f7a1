"""The shape of the grader's code: errors become exit statuses only at the command line."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from autograder import errors

ROOT = Path(__file__).resolve().parents[1]
GRADER = ROOT / "autograder"


def _grader_modules() -> list[Path]:
    return sorted(p for p in GRADER.rglob("*.py") if "jupyter_data" not in p.parts)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _raises_system_exit(tree: ast.AST) -> list[int]:
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise) and node.exc is not None
            and isinstance(target := node.exc.func if isinstance(node.exc, ast.Call) else node.exc, ast.Name)
            and target.id == "SystemExit"]


def test_only_the_command_line_turns_an_error_into_an_exit():
    """Library code raises a GradingError; ``SystemExit`` is raised in errors.command_line alone."""
    found = {}
    for path in _grader_modules():
        if path == GRADER / "errors.py":
            continue
        tree = ast.parse(path.read_text())
        lines = _raises_system_exit(tree)
        lines += [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                  and any(isinstance(b, ast.Name) and b.id == "SystemExit" for b in node.bases)]
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert not found, f"SystemExit outside autograder/errors.py: {found}"


def test_the_check_above_finds_a_system_exit():
    assert _raises_system_exit(ast.parse("def f():\n    raise SystemExit('no')\n")) == [2]
    assert _raises_system_exit(ast.parse("raise SystemExit\n")) == [1]
    assert _raises_system_exit(ast.parse("raise ValueError('no')\n")) == []


def _commands() -> list[str]:
    """Modules of the grader with a ``main`` run by ``python -m`` (the sandbox's inside excluded:
    its scripts talk to the pipe, not to a person)."""
    names = []
    for path in _grader_modules():
        text = path.read_text()
        if "def main(" in text and '__name__ == "__main__"' in text and "harness" not in path.name \
                and "zygote" not in path.name:
            names.append(_module_name(path))
    return names


def test_every_command_turns_grading_errors_into_one_line_and_a_status():
    commands = _commands()
    assert len(commands) >= 6, commands  # grade, report, formgrader, dask_tls, node_check, nbgrader_cli, ...
    unwrapped = [name for name in commands if not hasattr(importlib.import_module(name).main, "__wrapped__")]
    assert not unwrapped, f"main not wrapped in errors.command_line: {unwrapped}"


@pytest.mark.parametrize("error", [errors.GradingError, errors.RefusedInput, errors.SetupMissing,
                                   errors.ClusterError, errors.RunBusy])
def test_a_grading_error_becomes_its_line_on_stderr_and_its_status(error, capsys):
    @errors.command_line
    def main() -> int:
        raise error("refused: this one line")

    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == error.exit_status
    assert capsys.readouterr().err == "refused: this one line\n"


def test_statuses_tell_the_failures_apart():
    statuses = [c.exit_status for c in (errors.GradingError, errors.RefusedInput, errors.SetupMissing,
                                        errors.ClusterError, errors.RunBusy)]
    assert len(set(statuses)) == len(statuses) and 0 not in statuses


def test_other_exceptions_are_not_hidden():
    @errors.command_line
    def main() -> int:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        main()


def _renames(tree: ast.AST) -> list[int]:
    """Lines renaming a file over another (``os.replace``, ``os.rename``, ``Path.replace`` with one
    argument; ``str.replace`` takes two)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name, owner = node.func.attr, node.func.value
            if (name in {"replace", "rename"} and isinstance(owner, ast.Name) and owner.id == "os") or \
                    (name in {"replace", "rename"} and len(node.args) == 1 and not node.keywords):
                out.append(node.lineno)
    return out


#: Files the grader writes in place on purpose, by module and function, each with its reason (none
#: of them is a result file: a run killed while writing one leaves no result half-written).
DIRECT_WRITES = {
    ("autograder/sandbox/cgroups.py", "*"): "cgroup control files of the kernel: written in place, never renamed",
    ("autograder/hub/caps.py", "_write_cpu"): "cgroup control files of the kernel: written in place, never renamed",
    ("autograder/sandbox/inside/harness.py", "*"): "os.devnull, inside the sandbox",
    ("autograder/sandbox/warm.py", "execute"): "the write end of a pipe to the warm sandbox",
    ("autograder/hub/term_end.py", "archive"): "the term's archive, streamed (homes included: too large to hold in "
                                               "memory), under a .writing name, renamed once read back",
    ("autograder/sandbox/command.py", "readable_copy"): "a folder of NumPy copied under a temporary name and "
                                                        "renamed whole (a copy of code, not a result)",
    ("autograder/intake/zips.py", "place"): "a notebook into a new scratch folder, created exclusively (O_EXCL), "
                                            "that atomic.place_folder then moves into place whole",
    ("autograder/intake/zips.py", "set_aside"): "moves a folder the login map undid out of submitted/, whole, "
                                                "into .intake/undone/ (a move, not a result file being replaced)",
    ("autograder/intake/inbound.py", "_file"): "a file of a hand-in into a new scratch folder, created exclusively "
                                               "(O_EXCL), that atomic.place_folder then moves into place whole",
    ("autograder/pipeline/dask_tls.py", "_write"): "a new key, created exclusively with its mode from the start",
    ("autograder/pipeline/dask_cluster.py", "decide_remote"): "a task's copy of its input on a worker, "
                                                             "removed when the task ends",
    ("autograder/hub/environments.py", "install_package"): "a course's students' package, installed in a new folder "
                                                           "beside it and swapped in whole (the old one renamed aside)",
    ("autograder/hub/prepare.py", "copy_course"): "the hub's course copy, built in a new folder beside it and "
                                                  "renamed into place whole only when it does not exist yet",
    ("autograder/hub/prepare.py", "_refuse_squatter"): "moves a folder someone else made in the exchange out of "
                                                       "reach (a move, not a result file being replaced)",
    ("autograder/sandbox/oracle_worker.py", "main"): "the oracle process's stdout opened on /dev/null (what the "
                                                     "course's code prints goes nowhere), no file",
}
_WRITE_MODES = ("w", "a", "x", "+")


def _direct_writes(tree: ast.AST) -> list[tuple[str, int]]:
    """(enclosing function, line) of each call writing a file in place: ``Path.write_text`` or
    ``write_bytes``, ``nbformat.write``, ``json.dump``, ``open``/``os.fdopen``/``Path.open`` in a
    writing mode, and renames (``os.replace``, ``os.rename``, ``Path.replace`` with one argument)."""
    out = []

    def mode_of(call: ast.Call, at: int) -> str:
        given = [k.value for k in call.keywords if k.arg == "mode"] or call.args[at:at + 1]
        return given[0].value if given and isinstance(given[0], ast.Constant) else "r"

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
            opens = name == "open" and owner != "os" and any(m in mode_of(node, 1 if owner is None else 0)
                                                             for m in _WRITE_MODES)
            writes = owner != "atomic" and (
                (name in {"write_text", "write_bytes"} and isinstance(f, ast.Attribute)) or opens
                or (owner, name) in {("nbformat", "write"), ("json", "dump")}
                or ((owner, name) == ("os", "fdopen") and any(m in mode_of(node, 1) for m in _WRITE_MODES)))
            if writes or node.lineno in _renames(node):
                out.append((function, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "<module>")
    return sorted(set(out), key=lambda x: x[1])


def test_every_result_file_is_written_by_the_one_atomic_writer():
    """A result file (staged notebook, verdict, timings.json, timestamps, CSVs, pages) is replaced
    whole or not at all by autograder/outputs/atomic.py alone: a write in place, or a hand-written
    rename, anywhere else is named here unless DIRECT_WRITES gives its reason."""
    found = {}
    for path in _grader_modules():
        rel = str(path.relative_to(ROOT))
        if path.name == "atomic.py":
            continue
        lines = [f"{fn}:{line}" for fn, line in _direct_writes(ast.parse(path.read_text()))
                 if (rel, "*") not in DIRECT_WRITES and (rel, fn) not in DIRECT_WRITES]
        if lines:
            found[rel] = lines
    assert not found, f"result files written in place (use autograder.outputs.atomic): {found}"
    stale = [k for k in DIRECT_WRITES if not any(
        str(p.relative_to(ROOT)) == k[0] and (k[1] == "*" or any(fn == k[1] for fn, _ in
                                                                 _direct_writes(ast.parse(p.read_text()))))
        for p in _grader_modules())]
    assert not stale, f"DIRECT_WRITES names writes that are gone: {stale}"


def test_the_check_above_finds_a_direct_write():
    code = ("import json, os, nbformat\n"
            "def stage(p, nb):\n    nbformat.write(nb, p)\n    p.write_text('x')\n"
            "def timings(p):\n    json.dump({}, open(p, 'w'))\n    with p.open('a') as f:\n        pass\n"
            "def fine(p):\n    open(p).read()\n    p.open().read()\n    'a'.replace('a', 'b')\n    os.open(p, 0)\n"
            "tmp.replace(path)\n")
    assert _direct_writes(ast.parse(code)) == [("stage", 3), ("stage", 4), ("timings", 6), ("timings", 7),
                                               ("<module>", 14)]
    assert _direct_writes(ast.parse("from autograder.outputs import atomic\natomic.write_text(p, 'x')\n")) == []


def test_the_verdict_key_covers_code_that_exists():
    """Every file the verdicts' code digest reads exists (a moved file would otherwise drop out of
    the digest in silence, and a change to it would leave old verdicts standing); that every file the
    decision runs is in it, or excluded with a reason (``decide.KEY_EXCLUDED``), is
    ``tests/test_verdict_key.py``'s."""
    from autograder.verdicts import decide as verdicts

    missing = [str(p) for p in verdicts._CHECK_CODE if p is None or not p.is_file()]
    assert not missing, missing
    inside = {p.name for p in (GRADER / "sandbox" / "inside").glob("*.py") if p.name != "__init__.py"}
    assert inside <= {p.name for p in verdicts._CHECK_CODE}, inside


def test_cell_errors_cross_the_pipe_as_data():
    """The harness sends each cell error as data (label, exception, text); the grader keeps only
    errors of cells it sent, and from a hidden run only the cell and a built-in exception's name."""
    from autograder import sandbox
    from selfattn.checks.calling import exec_cells, fresh_namespace

    sent = [e.to_json() for e in exec_cells([("f", "raise KeyError('secret 7')"), ("g", "class Mine(Exception): pass\n"
                                                                                     "raise Mine('secret 8')")],
                                           fresh_namespace())]
    sent += ["the cell of f raised SECRET", {"label": "h", "exception": "ValueError", "text": "not sent"},
             {"label": "f", "exception": "not a name!", "text": "x"}]
    public = sandbox.read_cell_errors(sent, ["f", "g"], hidden=False)
    assert [(e.label, e.exception) for e in public] == [("f", "KeyError"), ("g", "Mine")]
    assert "secret 7" in str(public[0]) and "secret 8" in str(public[1])
    hidden = sandbox.read_cell_errors(sent, ["f", "g"], hidden=True)
    assert [str(e) for e in hidden] == ["the cell of f raised KeyError", "the cell of g raised an exception"]
    assert sandbox.read_cell_errors("not a list", ["f"], hidden=False) == []


def test_a_cell_error_is_a_frozen_record_not_a_string():
    """A cell error is data with its text for people: not a ``str`` with attributes bolted on, frozen,
    and it keeps its fields across a process pool (pickling)."""
    import dataclasses
    import pickle

    from selfattn.checks.calling import CellError, exec_cells, fresh_namespace

    (err,) = exec_cells([("f", "import no_such_module_here")], fresh_namespace())
    assert not isinstance(err, str) and str(err).startswith("the cell of f raised ModuleNotFoundError")
    assert (err.exception, err.missing, err.label, err.errno) == ("ModuleNotFoundError", "no_such_module_here", "f",
                                                                   None)
    assert pickle.loads(pickle.dumps(err)) == err
    with pytest.raises(dataclasses.FrozenInstanceError):
        err.label = "g"  # type: ignore[misc]
    with pytest.raises(TypeError, match="text is a str"):
        CellError(None, "E")  # type: ignore[arg-type]


def test_nothing_inside_the_sandbox_imports_the_grader_or_the_course():
    """The scripts copied into the sandbox (``autograder/sandbox/inside/``) import the standard
    library, NumPy, each other and ``calling`` only: the one course module the sandbox holds,
    copied beside them as a top-level module."""
    import sys

    inside = sorted((GRADER / "sandbox" / "inside").glob("*.py"))
    assert {p.name for p in inside} >= {"harness.py", "zygote.py"}, inside
    allowed = set(sys.stdlib_module_names) | {"numpy", "calling", "__future__"} | {p.stem for p in inside}
    for path in inside:
        tree = ast.parse(path.read_text())
        tops = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        tops |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert all(n.level == 0 for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), path.name
        assert tops <= allowed, (path.name, tops - allowed)


def test_the_sandbox_is_given_only_its_inside_and_calling():
    from autograder import sandbox

    assert sandbox.INSIDE == GRADER / "sandbox" / "inside"
    assert sandbox.CALLING.name == "calling.py" and sandbox.CALLING.is_file()
    tree = ast.parse(sandbox.CALLING.read_text())
    assert all(n.level == 0 and not (n.module or "").startswith(("selfattn", "autograder"))
               for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))


def test_a_full_disk_is_told_by_the_errno_sent_as_data_not_by_the_words():
    """A run "filled its disk" when a call or a cell failed with EFBIG or ENOSPC, sent as data; a
    submission raising an error whose words look like one is a submission that raised."""
    import errno

    from autograder.sandbox import channel
    from selfattn.checks.calling import Case, call_cases, exec_cells, fresh_namespace

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    def words(*_):
        raise ValueError("[Errno 28] No space left on device")

    (told,) = call_cases(full, [Case((1,))])
    (mimic,) = call_cases(words, [Case((1,))])
    assert (told.errno, mimic.errno) == (errno.ENOSPC, None)
    enc = [{"error": o.error, "kind": o.kind, "exception": o.exception, "errno": o.errno} for o in (told, mimic)]
    assert channel.disk_full({"outcomes": enc[:1]}) and not channel.disk_full({"outcomes": enc[1:]})
    (cell,) = exec_cells([("f", "open('/x', 'w') if False else None\nraise OSError(27, 'File too large')")],
                         fresh_namespace())
    assert channel.disk_full({"cell_errors": [cell.to_json()]})
    for forged in ({"outcomes": 5}, {"outcomes": [{"errno": True}]}, {"cell_errors": [{"errno": "28"}]},
                   {"outcomes": [{"error": "[Errno 28] No space left on device"}]}):
        assert not channel.disk_full(forged), forged


#: the folders of code that import one another (tests may reach into a module's private names)
CODE_FOLDERS = ("autograder", "selfattn", "scripts", "student", "benchmarks")


def _project_modules() -> dict[str, Path]:
    found = {}
    for folder in CODE_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            if "jupyter_data" not in path.parts:
                found[_module_name(path)] = path
    return found


def _private_imports(module: str, tree: ast.AST, modules: set[str]) -> list[str]:
    """Each private name (``_x``, not ``__x__``) ``module`` takes from another project module: by
    ``from m import _x`` or as ``m._x`` of a module it imported, as ``line: m._x``."""
    package = module.rpartition(".")[0] if module not in {m.rpartition(".")[0] for m in modules} else module
    aliases: dict[str, str] = {}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            if source not in modules and source.split(".")[0] not in ("autograder", "selfattn"):
                continue
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{node.lineno}: {source}.{a.name}")
                if f"{source}.{a.name}" in modules:
                    aliases[a.asname or a.name] = f"{source}.{a.name}"
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in modules})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and node.attr.startswith("_") and not node.attr.startswith("__"):
            out.append(f"{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return out


def test_no_module_imports_another_module_s_private_name():
    """A name used across modules is public in its home module (``from m import _x`` or ``m._x``
    from another module of the grader, the course package, the scripts or the benchmarks)."""
    modules = _project_modules()
    found = [f"{path.relative_to(ROOT)}:{line}" for name, path in sorted(modules.items())
             for line in _private_imports(name, ast.parse(path.read_text(encoding="utf-8")), set(modules))]
    assert not found, f"private names used outside their module (make them public there): {found}"


def test_the_check_above_finds_a_private_import():
    modules = {"autograder.sandbox", "autograder.sandbox.command", "autograder.sandbox.warm"}
    code = ("from autograder.sandbox.command import _limits, run_as\nfrom . import command as command_\n"
            "from .command import __all__\nimport os\ncommand_._limits(None)\nos._exit(0)\n")
    assert _private_imports("autograder.sandbox.warm", ast.parse(code), modules) == [
        "1: autograder.sandbox.command._limits", "5: autograder.sandbox.command._limits"]

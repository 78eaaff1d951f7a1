"""A pytest plugin that runs one module's tests once per mutant, each run in a forked child.

pytest starts and collects once; then, for the unmutated module first and for each mutant after, a
child is forked that swaps the code of the mutated function into the live function object (so every
reference to it, ``from ... import`` included, runs the mutant) and runs the tests until the first
failure. The unmutated run records which of the module's functions each test calls, itself or in a
Python subprocess it starts; a mutant's run takes only the tests that call its function (a mutant
that none reaches survives without a run). A subprocess a test starts imports
the mutated module too: the child puts a ``sitecustomize`` on ``PYTHONPATH`` whose import hook
compiles the mutant in place of the file. A child that outlives its time limit is killed (its mutant
counts as killed: the tests noticed something).

Active only when ``SELFATTN_MUTATION_MODULE`` (the module) and ``SELFATTN_MUTATION_OUT`` (a JSON file
for the results) are set; ``SELFATTN_MUTATION_FUNCTIONS`` (names, comma-separated) limits the mutants to
those functions. ``python -m benchmarks.mutation`` sets them.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import signal
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import pytest

from .operators import Mutant, mutants, mutated_tree

_SITECUSTOMIZE = '''
import importlib.abc, importlib.machinery, importlib.util, os, sys
_NAME, _FILE = os.environ["SELFATTN_MUTANT_NAME"], os.environ["SELFATTN_MUTANT_FILE"]
_SOURCE = os.environ["SELFATTN_MUTANT_SOURCE"]

class _Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        with open(_SOURCE, encoding="utf-8") as f:
            return compile(f.read(), self.path, "exec", dont_inherit=True)

class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _NAME:
            return None
        return importlib.util.spec_from_file_location(name, _FILE, loader=_Loader(name, _FILE))

sys.meta_path.insert(0, _Finder())
'''

#: in the unmutated run: a Python subprocess records which of the module's functions it calls
_RECORDER = '''
import os, sys, threading
_FILE = os.environ["SELFATTN_MUTANT_FILE"]
_OUT = os.path.join(os.environ["SELFATTN_MUTANT_REACH"], "%d.txt" % os.getpid())
_SEEN = set()

def _profile(frame, event, arg):
    if event == "call" and frame.f_code.co_filename == _FILE:
        name = frame.f_code.co_qualname.split(".<locals>.", 1)[0]
        if name not in _SEEN:
            _SEEN.add(name)
            with open(_OUT, "a", encoding="utf-8") as out:
                out.write(name + "\\n")

sys.setprofile(_profile)
threading.setprofile(_profile)
'''


def _code_object(code: types.CodeType, qualname: str, line: int) -> types.CodeType | None:
    """The code object of ``qualname`` (defined at ``line``) inside a compiled module."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname and const.co_firstlineno == line:
                return const
            found = _code_object(const, qualname, line)
            if found is not None:
                return found
    return None


def _live_functions(module: types.ModuleType, qualname: str) -> list[types.FunctionType]:
    """The function objects that run ``qualname``'s code (a property's getter and setter both)."""
    owner: Any = module
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = owner.__dict__[part]
    raw = owner.__dict__.get(parts[-1])
    candidates: list[Any] = []
    if isinstance(raw, property):
        candidates = [raw.fget, raw.fset, raw.fdel]
    elif isinstance(raw, (staticmethod, classmethod)):
        candidates = [raw.__func__]
    elif raw is not None:
        candidates = [getattr(raw, "func", raw)]
    found = []
    for candidate in candidates:
        if candidate is None:
            continue
        function = inspect.unwrap(candidate)
        if isinstance(function, types.FunctionType) and function.__code__.co_qualname == qualname:
            found.append(function)
        if hasattr(candidate, "cache_clear"):
            candidate.cache_clear()
    return found


def _apply(module_name: str, source: str, mutant: Mutant, workdir: Path) -> None:
    """Swap the mutant into this process, and into every Python subprocess started from it."""
    module = importlib.import_module(module_name)
    filename = module.__file__ or ""
    tree = mutated_tree(source, mutant)
    code = compile(tree, filename, "exec", dont_inherit=True)
    functions = [f for f in _live_functions(module, mutant.function)]
    if not functions:
        raise LookupError(f"no live function {mutant.function}")
    for function in functions:
        new = _code_object(code, mutant.function, function.__code__.co_firstlineno)
        if new is None:
            raise LookupError(f"no code for {mutant.function}")
        function.__code__ = new
    import ast
    mutated = workdir / "mutant.py"
    mutated.write_text(ast.unparse(tree), encoding="utf-8")
    (workdir / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    os.environ.update(SELFATTN_MUTANT_NAME=module_name, SELFATTN_MUTANT_FILE=filename,
                      SELFATTN_MUTANT_SOURCE=str(mutated),
                      PYTHONPATH=os.pathsep.join(p for p in (str(workdir), os.environ.get("PYTHONPATH")) if p))


def _run_tests(session: pytest.Session, items: list[pytest.Item]) -> int:
    """Run ``items`` until the first failure: 1 if one failed, else 0."""
    for i, item in enumerate(items):
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=items[i + 1] if i + 1 < len(items) else None)
        if session.testsfailed:
            return 1
    return 0


def _recorded_run(session: pytest.Session, filename: str, workdir: Path) -> int:
    """Run every test, writing to ``workdir/reach.json`` the module's functions each one calls, in
    this process or in a Python subprocess it starts (which records them through a ``sitecustomize``:
    one that could not, a Python run isolated from the environment, could not import the mutant either)."""
    import threading

    called: set[str] = set()

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_filename == filename:
            called.add(frame.f_code.co_qualname.split(".<locals>.", 1)[0])

    subprocesses = workdir / "subprocesses"
    subprocesses.mkdir()
    (workdir / "sitecustomize.py").write_text(_RECORDER, encoding="utf-8")
    os.environ.update(SELFATTN_MUTANT_FILE=filename, SELFATTN_MUTANT_REACH=str(subprocesses),
                      PYTHONPATH=os.pathsep.join(p for p in (str(workdir), os.environ.get("PYTHONPATH")) if p))
    sys.setprofile(profile)
    threading.setprofile(profile)
    reached: dict[str, list[str]] = {}
    failed = 0
    for i, item in enumerate(session.items):
        called.clear()
        nextitem = session.items[i + 1] if i + 1 < len(session.items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        for record in subprocesses.iterdir():
            called.update(record.read_text(encoding="utf-8").split())
            record.unlink()
        reached[item.nodeid] = sorted(called)
        if session.testsfailed:
            failed = 1
            break
    sys.setprofile(None)
    (workdir / "reach.json").write_text(json.dumps(reached), encoding="utf-8")
    return failed


def _child(session: pytest.Session, module_name: str, source: str, mutant: Mutant | None,
           items: list[pytest.Item], workdir: Path) -> None:
    """The forked child: apply the mutant, run the tests, exit 0 (survived), 1 (killed) or 3 (not applied).
    Without a mutant, every test runs, recording what each reaches (``workdir/reach.json``)."""
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    status = 3
    try:
        if mutant is None:
            module = importlib.import_module(module_name)
            status = _recorded_run(session, module.__file__ or "", workdir)
        else:
            _apply(module_name, source, mutant, workdir)
            status = _run_tests(session, items)
    except BaseException:
        pass
    os._exit(status)


def _wait(pid: int, limit: float) -> tuple[int, float]:
    """Wait for a child, killing its process group past ``limit`` seconds: (its exit status, seconds)."""
    start = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return (os.waitstatus_to_exitcode(status), time.monotonic() - start)
        if time.monotonic() - start > limit:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return (-9, time.monotonic() - start)
        time.sleep(0.02)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """Run the baseline and every mutant in forked children instead of the usual test loop."""
    module_name = os.environ.get("SELFATTN_MUTATION_MODULE")
    out = os.environ.get("SELFATTN_MUTATION_OUT")
    if not module_name or not out:
        return None
    module = importlib.import_module(module_name)
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    results: dict[str, Any] = {"module": module_name, "tests": len(session.items), "mutants": []}
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        workdir = Path(tmp)
        pid = os.fork()
        if pid == 0:
            _child(session, module_name, source, None, session.items, workdir)
        status, seconds = _wait(pid, 1200)
        results["baseline"] = {"status": status, "seconds": round(seconds, 2)}
        if status != 0:
            Path(out).write_text(json.dumps(results, indent=1), encoding="utf-8")
            return True
        reached = json.loads((workdir / "reach.json").read_text(encoding="utf-8"))
        limit = max(60.0, 5 * seconds)
        only = set(filter(None, os.environ.get("SELFATTN_MUTATION_FUNCTIONS", "").split(",")))
        for mutant in mutants(source):
            if only and mutant.function not in only:
                continue
            items = [i for i in session.items if mutant.function in reached.get(i.nodeid, [])]
            if not items:
                outcome, seconds = "not reached", 0.0
            else:
                pid = os.fork()
                if pid == 0:
                    _child(session, module_name, source, mutant, items, workdir)
                status, seconds = _wait(pid, limit)
                outcome = {0: "survived", 1: "killed", -9: "timeout"}.get(status, "not applied")
            results["mutants"].append({"function": mutant.function, "line": mutant.line,
                                       "change": mutant.description, "outcome": outcome,
                                       "tests": len(items), "seconds": round(seconds, 2)})
    Path(out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return True

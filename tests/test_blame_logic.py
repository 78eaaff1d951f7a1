"""Fair blame's own logic, in this process (autograder/verdicts/blame.py): which dependencies are
blamed, what a re-run is given to run, which course functions the oracle answers for, and which note
comes out. The pipeline lane grades the same cases in the sandbox (tests/test_fault_blame.py); here
the sandbox is replaced where :func:`blame.regrade` calls it, its ``decide``, by a runner that runs
the cells it is given in this process as the sandbox's harness does (the course's functions, where
the code says ``None``, answered by the oracle's own references) and judges them with the real
checks of :mod:`selfattn.checks.exercises` and :mod:`autograder.hidden_checks`.
"""

from __future__ import annotations

import ast
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import nbformat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_notebook

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks (grading runs them too)
from autograder.course.spec import answer_cells
from autograder.notes import Note, NoteKind
from autograder.sandbox.oracle import Oracle
from autograder.verdicts import blame
from selfattn.checks.calling import call_cases, exec_cells, fresh_namespace
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.findings import Finding, Kind
from selfattn.checks.judging import first_error, safe_verify
from selfattn.checks.record import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
NB = "03-softmax-attention"
#: (assignment, notebook, function) of every answer cell of the course's solutions
CELLS = [(p.parent.name, p.stem, f) for p in sorted((ROOT / "solutions").glob("*/*.ipynb")) for f in answer_cells(p)]
WRONG = Finding("wrong values", Kind.WRONG_VALUES)

# --- the course's cells ------------------------------------------------------------------------------


@pytest.mark.parametrize(("assignment", "notebook", "function"), CELLS)
def test_a_reference_cell_is_the_solution_cell_without_its_two_markers(assignment, notebook, function):
    source = answer_cells(ROOT / "solutions" / assignment / f"{notebook}.ipynb")[function]
    cell = blame.reference_cell(assignment, notebook, function, ROOT)
    lines = source.splitlines()
    assert any("### BEGIN SOLUTION" in ln for ln in lines) and any("### END SOLUTION" in ln for ln in lines)
    assert "SOLUTION" not in cell and cell.endswith("\n") and len(cell.splitlines()) == len(lines) - 2
    kept = iter(lines)
    assert all(any(ln == other for other in kept) for ln in cell.splitlines())  # the rest, in order
    namespace = fresh_namespace()
    for name in blame.with_its_own_dependencies(function):
        exec(blame.reference_cell(assignment, notebook, name, ROOT), namespace)
    assert callable(namespace[function])


def test_a_reference_cell_keeps_every_line_that_is_no_marker(tmp_path):
    """Only the marker lines go: a line that mentions a solution otherwise, or a marker's words in a
    string, stays (a synthetic course, read as the grader reads the course)."""
    source = ("def f(x):\n    # the SOLUTION below is the course's\n    ### BEGIN SOLUTION\n"
              "    y = x + 1\n        ### END SOLUTION\n    return y\n")
    cell = new_code_cell(source, metadata={"nbgrader": {"solution": True, "grade_id": "f"}})
    (tmp_path / "solutions" / "a").mkdir(parents=True)
    nbformat.write(new_notebook(cells=[cell]), tmp_path / "solutions" / "a" / "n.ipynb")
    assert blame.reference_cell("a", "n", "f", tmp_path) == (
        "def f(x):\n    # the SOLUTION below is the course's\n    y = x + 1\n    return y\n")


# --- dependencies -----------------------------------------------------------------------------------


def test_the_course_functions_come_after_those_they_call():
    assert blame.with_its_own_dependencies("multi_head_attention") == [
        "softmax", "scaled_scores", "attention", "multi_head_attention"]
    assert blame.with_its_own_dependencies("attention") == ["softmax", "scaled_scores", "attention"]
    assert blame.with_its_own_dependencies("softmax") == ["softmax"]


@st.composite
def graphs(draw) -> dict[str, tuple[str, ...]]:
    """A random acyclic graph of graded functions: f<i> may call any f<j>, j < i, in any order."""
    n = draw(st.integers(1, 7))
    names = [f"f{i}" for i in range(n)]
    return {name: tuple(draw(st.permutations(sorted(draw(st.sets(st.sampled_from(names[:i])))))) if i else ())
            for i, name in enumerate(names)}


def _closure(graph: dict[str, tuple[str, ...]], name: str) -> set[str]:
    return {name}.union(*(_closure(graph, d) for d in graph[name]))


def _patched(graph: dict[str, tuple[str, ...]], checks_per_function: int = 3):
    """blame's EXERCISES and REGISTRY replaced by records of ``graph`` (check ids ``f<i>/c<k>``)."""
    exercises = {n: types.SimpleNamespace(dependency_names=deps) for n, deps in graph.items()}
    registry = {f"{n}/c{k}": types.SimpleNamespace(function=n) for n in graph for k in range(checks_per_function)}
    return mock.patch.multiple(blame, EXERCISES=exercises, REGISTRY=registry)


@given(graph=graphs(), data=st.data())
def test_a_function_comes_with_everything_it_may_call_each_before_its_callers(graph, data):
    function = data.draw(st.sampled_from(sorted(graph)))
    with _patched(graph):
        order = blame.with_its_own_dependencies(function)
    assert order[-1] == function and len(order) == len(set(order)) and set(order) == _closure(graph, function)
    assert all(set(graph[name]) <= set(order[:i]) for i, name in enumerate(order))


@given(graph=graphs(), data=st.data())
def test_the_failing_dependencies_are_those_declared_with_a_failed_check(graph, data):
    function = data.draw(st.sampled_from(sorted(graph)))
    ids = [f"{n}/c{k}" for n in graph for k in range(3)]
    found = st.one_of(st.none(), st.just(""), st.just("wrong"), st.just(WRONG))
    checks = data.draw(st.dictionaries(st.sampled_from(ids), found))
    with _patched(graph):
        failing = blame.failing_dependencies(function, checks)
    failed = {cid.partition("/")[0] for cid, f in checks.items() if f is not None}
    assert failing == [d for d in graph[function] if d in failed]  # in the order the function declares them


@given(checks=st.dictionaries(st.sampled_from(sorted(REGISTRY)), st.one_of(st.none(), st.just(WRONG))))
def test_the_failing_dependencies_of_the_course_functions(checks):
    """With the course's records, hidden checks included: a dependency fails if any of its checks
    failed, whether passing ones are there or not; the function's own checks never blame it."""
    failed = {REGISTRY[cid].function for cid, f in checks.items() if f is not None}
    for function in ("attention", "multi_head_attention", "softmax"):
        assert blame.failing_dependencies(function, checks) == [
            d for d in EXERCISES[function].dependency_names if d in failed]


def test_one_failed_hidden_check_makes_a_dependency_fail():
    checks = {"softmax/rows-sum-to-one": None, "softmax/hidden/extreme": WRONG, "attention/no-mask": WRONG,
              "scaled_scores/shape-and-scale": None, "scaled_scores/hidden/random": None}
    assert blame.failing_dependencies("attention", checks) == ["softmax"]
    assert blame.failing_dependencies("multi_head_attention", {**checks, "attention/no-mask": "wrong"}) == [
        "softmax", "attention"]
    assert blame.failing_dependencies("softmax", checks) == []


# --- the definitions kept beside the course's function ----------------------------------------------

NAMES = ["softmax", "helper", "_scale", "Mask"]
#: a top-level ``def``/``class``: kept unless it defines the function replaced
DEFINING = [lambda n: f"def {n}(x):\n    return x\n", lambda n: f"async def {n}(x):\n    return x\n",
            lambda n: f"class {n}:\n    pass\n"]
#: definitions by other statements: kept even when they bind the function's name
BINDING = [lambda n: f"{n} = 3\n", lambda n: f"{n}: int = 3\n", lambda n: f"import math as {n}\n",
           lambda n: f"from numpy import linalg as {n}\n", lambda n: f"{n} = {n}_again = lambda S: S\n"]
#: (statement, what of it is kept): anything but a definition goes
OTHER = [("print('hello')\n", ""), ("for i in range(2):\n    pass\n", ""), ("raise SystemExit(1)\n", ""),
         ("x += 1\n", ""), ("if True:\n    def helper(x):\n        return x\n", ""),
         ("with open('f') as f:\n    pass\n", ""), ("import os; os._exit(0)\n", "import os\n"),
         ("try:\n    import scipy\nexcept ImportError:\n    pass\n", ""), ("del x\n", ""), ("softmax(1)\n", ""),
         ("assert False\n", ""), ("while True:\n    pass\n", ""), ("global g\n", "")]

#: (statement, the name it defines by def or class, or None, what of it is kept otherwise)
statements = st.one_of(
    st.tuples(st.sampled_from(DEFINING), st.sampled_from(NAMES)).map(lambda t: (t[0](t[1]), t[1], t[0](t[1]))),
    st.tuples(st.sampled_from(BINDING), st.sampled_from(NAMES)).map(lambda t: (t[0](t[1]), None, t[0](t[1]))),
    st.sampled_from(OTHER).map(lambda t: (t[0], None, t[1])))


@given(cell=st.lists(statements, max_size=8), name=st.sampled_from(NAMES))
def test_the_definitions_besides_a_function_are_its_cells_other_definitions_in_order(cell, name):
    """A function, class, import or assignment at the top level is kept unless it is the function's
    own definition (a ``def``/``class`` of its name); every other statement goes."""
    got = blame.definitions_besides("".join(s for s, _, _ in cell), name)
    want = "".join(kept for _, defines, kept in cell if defines != name)
    assert ast.dump(ast.parse(got)) == ast.dump(ast.parse(want))
    assert (got == "") == (want == "") and (got == "" or got.endswith("\n"))


def test_a_helper_of_a_real_cell_is_kept_and_the_function_and_its_calls_go():
    source = ("import math\n\nSCALE = 2.0\n\n\n"
              "def with_mask(S, mask):\n    return S if mask is None else S + mask\n\n\n"
              "def softmax(S, axis=-1):\n    return np.exp(S) / np.exp(S).sum(axis=axis, keepdims=True)\n\n\n"
              "print(softmax(np.ones(3)))\n")
    assert blame.definitions_besides(source, "softmax") == (
        "import math\nSCALE = 2.0\n\ndef with_mask(S, mask):\n    return S if mask is None else S + mask\n")
    assert blame.definitions_besides(source, "with_mask").count("def ") == 1
    assert blame.definitions_besides("print(1)\n", "softmax") == ""


@pytest.mark.parametrize("source", [
    "def helper(x):\n    return x\n\ndef (\n",  # does not parse
    "def helper(x):\n    return x\n\x00",  # a NUL byte: ValueError
    "def helper(x):\n    return x\n\nx = " + "+".join(["1"] * 3000) + "\n",  # too deep to write back
])
def test_a_cell_that_cannot_be_read_keeps_nothing(source):
    assert blame.definitions_besides(source, "softmax") == ""


# --- the oracle ------------------------------------------------------------------------------------


def test_the_oracle_answers_for_the_failing_dependencies_with_the_course_functions():
    """Each function the oracle answers for is the course's, run from the course's cells alone: the
    course's attention finds the course's softmax and scaled_scores beside it."""
    deps = ["softmax", "attention"]
    oracle = blame.oracle("attention", NB, deps, ROOT)
    assert isinstance(oracle, Oracle) and oracle.names == deps and oracle.requests == 0
    assert oracle is not blame.oracle("attention", NB, deps, ROOT)  # one per run: its caps count one run
    assert "def attention" not in oracle.functions.cells["softmax"]
    for name in ("softmax", "scaled_scores", "attention"):
        assert f"def {name}(" in oracle.functions.cells["attention"]
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    np.testing.assert_allclose(oracle.functions["attention"](Q, K, V), EXERCISES["attention"].reference(Q, K, V))
    S = rng.normal(size=(2, 3, 4)) * 1e3
    np.testing.assert_allclose(oracle.functions["softmax"](S, axis=1), EXERCISES["softmax"].reference(S, axis=1))
    assert blame.oracle("attention", NB, [], ROOT).names == []


# --- regrade, with a runner in this process in place of the sandbox ----------------------------------


def _check_ids(function: str) -> list[str]:
    return [cid for cid, c in REGISTRY.items() if c.function == function]


def _run(code: list[tuple[str, str | None]], function: str, oracle: Oracle | None = None) -> blame.Results:
    """Every check of ``function`` (public and hidden) on ``code``, as the sandbox's harness runs it: the
    cells in order in a fresh namespace, a ``None`` cell being a function the oracle answers for."""
    namespace = fresh_namespace()
    for label, source in code:
        if source is None:
            assert oracle is not None and label in oracle.names, f"{label} has no code and no oracle answers for it"
            namespace[label] = oracle.functions[label]
        else:
            exec_cells([(label, source)], namespace)
    results: blame.Results = {}
    for cid in _check_ids(function):
        check_, fn = REGISTRY[cid], namespace.get(function)
        cases = check_.cases(np.random.default_rng(len(cid)))
        with warnings.catch_warnings():  # as in the sandbox, where a warning is no error
            warnings.simplefilter("ignore")
            outcomes = call_cases(fn, cases) if callable(fn) else None
        found = WRONG if outcomes is None else first_error(check_, cases, outcomes) or safe_verify(check_, cases,
                                                                                                 outcomes)
        results[cid] = found.hidden() if found is not None and check_.hidden else found
    return results


def _first_grading(answers: dict[str, str], function: str) -> blame.Results:
    """``function``'s results with the student's own functions (its dependencies' cells, then its own)."""
    deps = EXERCISES[function].dependency_names
    return _run([(d, answers[d]) for d in deps if d in answers] + [(function, answers[function])], function)


class Runner:
    """``decide`` as :func:`autograder.verdicts.decide._blame` gives it: the same checks on other code."""

    def __init__(self, function: str) -> None:
        self.function = function
        self.calls: list[tuple[list[tuple[str, str | None]], list[str]]] = []

    def __call__(self, code: list[tuple[str, str | None]], make_oracle: Callable[[], Oracle]) -> blame.Results:
        oracle = make_oracle()
        self.calls.append((code, oracle.names))
        return _run(code, self.function, oracle)


def _fair(answers: dict[str, str], function: str = "attention") -> tuple[blame.Results, Note | None, Runner]:
    """Grade notebook 03 in notebook order up to ``function``, then judge ``function`` fairly."""
    checks: blame.Results = {}
    for dep in EXERCISES[function].dependency_names:
        checks.update(_first_grading(answers, dep))
    runner = Runner(function)
    fair, note = blame.regrade("attention", NB, function, answers, checks, _first_grading(answers, function), runner,
                               ROOT)
    return fair, note, runner


#: the course's answers of notebook 03, as a student would hand them in (markers are comments)
COURSE = answer_cells(ROOT / "solutions" / "attention" / f"{NB}.ipynb")
NAIVE_SOFTMAX = "def softmax(S, axis=-1):\n    e = np.exp(S)\n    return e / e.sum(axis=axis, keepdims=True)\n"
UNSCALED = "def scaled_scores(Q, K):\n    return Q @ K.T\n"
MASK_AFTER = ("def attention(Q, K, V, mask=None):\n    A = softmax(scaled_scores(Q, K))\n"
              "    if mask is not None:\n        A = A + mask\n    return A @ V\n")
WITH_HELPER = ("def with_mask(S, mask):\n    return S if mask is None else S + mask\n\n\n" + NAIVE_SOFTMAX)
USES_HELPER = "def attention(Q, K, V, mask=None):\n    return softmax(with_mask(scaled_scores(Q, K), mask)) @ V\n"


def test_a_right_function_that_calls_a_wrong_softmax_keeps_its_points():
    fair, note, runner = _fair({**COURSE, "softmax": NAIVE_SOFTMAX})
    assert all(f is None for f in fair.values()) and set(fair) == set(_check_ids("attention"))
    assert note.kind is NoteKind.DEPENDENCY_BLAMED and "`softmax`" in note.text and "scaled_scores" not in note.text
    assert note.text.endswith(").") and not note.text.endswith("..")
    ((code, names),) = runner.calls
    assert code == [("softmax", None), ("scaled_scores", COURSE["scaled_scores"]), ("attention", COURSE["attention"])]
    assert names == ["softmax"]


def test_a_helper_in_the_wrong_dependencys_cell_stays_beside_the_course_function():
    fair, note, runner = _fair({**COURSE, "softmax": WITH_HELPER, "attention": USES_HELPER})
    assert all(f is None for f in fair.values()) and note.kind is NoteKind.DEPENDENCY_BLAMED
    ((code, _),) = runner.calls
    assert code[:2] == [("softmax", "def with_mask(S, mask):\n    return S if mask is None else S + mask\n"),
                        ("softmax", None)]


def test_a_function_wrong_itself_is_judged_with_the_course_functions_for_its_own_mistake():
    fair, note, runner = _fair({"softmax": NAIVE_SOFTMAX, "scaled_scores": UNSCALED, "attention": MASK_AFTER})
    ((code, names),) = runner.calls
    assert names == ["softmax", "scaled_scores"] and code == [("softmax", None), ("scaled_scores", None),
                                                              ("attention", MASK_AFTER)]
    assert note.kind is NoteKind.JUDGED_WITH_COURSE and "`softmax`, `scaled_scores`" in note.text
    assert note.text.endswith("mistake.") and not note.text.endswith("..")
    wrong = [f for f in fair.values() if f is not None]
    assert wrong and all("mask applied after softmax" in f.text for f in wrong), wrong
    assert not any(w in f.text for f in wrong for w in ("1/√d_k", "row maximum", "overflow"))


def test_the_dependency_of_a_dependency_is_answered_by_the_course_too():
    """multi_head_attention whose attention and softmax fail is judged with the course's of both."""
    wrong_attention = "def attention(Q, K, V, mask=None):\n    return V[: Q.shape[0]]\n"
    fair, note, runner = _fair({**COURSE, "softmax": NAIVE_SOFTMAX, "attention": wrong_attention},
                               "multi_head_attention")
    ((code, names),) = runner.calls
    assert names == ["softmax", "attention"]
    assert code == [("softmax", None), ("scaled_scores", COURSE["scaled_scores"]), ("attention", None),
                    ("multi_head_attention", COURSE["multi_head_attention"])]
    assert all(f is None for f in fair.values()) and note.kind is NoteKind.DEPENDENCY_BLAMED


@pytest.mark.parametrize("answers", [
    COURSE,  # every function passes
    {**COURSE, "attention": MASK_AFTER},  # attention fails, its dependencies pass
])
def test_no_re_run_when_no_dependency_fails_or_the_function_passes(answers):
    results = _first_grading(answers, "attention")
    fair, note, runner = _fair(answers)
    assert runner.calls == [] and note is None and fair == results


def test_no_re_run_for_a_function_that_passes_with_a_failing_dependency():
    """attention that does not use the student's softmax passes on its own: nothing to judge again."""
    own_softmax = ("def attention(Q, K, V, mask=None):\n    S = Q @ K.T / np.sqrt(Q.shape[-1])\n"
                   "    S = S if mask is None else S + mask\n    m = np.max(S, axis=-1, keepdims=True)\n"
                   "    e = np.exp(S - np.where(np.isfinite(m), m, 0.0))\n"
                   "    return e / e.sum(axis=-1, keepdims=True) @ V\n")
    answers = {**COURSE, "softmax": NAIVE_SOFTMAX, "attention": own_softmax}
    results = _first_grading(answers, "attention")
    assert all(f is None for f in results.values())
    fair, note, runner = _fair(answers)
    assert runner.calls == [] and note is None and fair == results


# --- regrade's bookkeeping, any dependencies failing, any re-run result ------------------------------


@st.composite
def situations(draw):
    """A function with dependencies, each dependency's cell (absent, its own function only, with a
    helper) and whether it fails, the function's first results and what a re-run finds."""
    function = draw(st.sampled_from(["attention", "multi_head_attention"]))
    deps = EXERCISES[function].dependency_names
    answers, checks = {function: f"def {function}(*a, **k):\n    return 0\n"}, {}
    for dep in deps:
        cell = draw(st.sampled_from(["absent", "alone", "helper"]))
        if cell != "absent":
            answers[dep] = (f"def {dep}_helper():\n    return 1\n\n" if cell == "helper" else "") + \
                f"def {dep}(*a, **k):\n    return 0\n"
        for cid in _check_ids(dep):
            checks[cid] = draw(st.one_of(st.none(), st.just(WRONG)))
    ids = _check_ids(function)
    results = {cid: draw(st.one_of(st.none(), st.just(WRONG))) for cid in ids}
    rerun = {cid: draw(st.one_of(st.none(), st.just(WRONG))) for cid in ids}
    return function, answers, checks, results, rerun


@given(situations())
def test_regrade_runs_the_course_function_for_each_failing_dependency_and_decides_from_the_results(situation):
    function, answers, checks, results, rerun = situation
    calls = []

    def decide(code, make_oracle):
        calls.append((code, make_oracle().names))
        return dict(rerun)

    fair, note = blame.regrade("attention", NB, function, answers, checks, results, decide, ROOT)
    deps = EXERCISES[function].dependency_names
    failing = [d for d in deps if any(checks[c] is not None for c in _check_ids(d))]
    if not failing or all(f is None for f in results.values()):
        assert calls == [] and fair == results and note is None
        return
    expected: list[tuple[str, str | None]] = []
    for dep in deps:
        if dep in failing:
            expected += [(dep, f"def {dep}_helper():\n    return 1\n")] if f"{dep}_helper" in answers.get(dep, "") \
                else []
            expected.append((dep, None))
        elif dep in answers:
            expected.append((dep, answers[dep]))
    assert calls == [([*expected, (function, answers[function])], failing)]
    assert fair == rerun
    blamed = all(f is None for f in rerun.values())
    assert note.kind is (NoteKind.DEPENDENCY_BLAMED if blamed else NoteKind.JUDGED_WITH_COURSE)
    assert note.text.endswith(".") and not note.text.endswith("..")
    assert all(f"`{d}`" in note.text for d in failing)
    assert not any(f"`{d}`" in note.text for d in deps if d not in failing)

"""The checks themselves: the instructor's answers pass every check; each named mistake is named."""

from __future__ import annotations

import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
import selfattn as sa
from selfattn.checking import CheckFailed, check
from selfattn.checks.calling import BAD_RETURN, NOT_ANSWERED, RAISED, Case, call_cases, fresh_namespace, to_arrays
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.findings import Kind
from selfattn.checks.judging import first_error, run_check
from selfattn.checks.record import REGISTRY

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions" / "attention"


def _solution_cells() -> dict[str, str]:
    """grade id -> the instructor's answer cell (markers removed), for every graded function."""
    cells = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code" and cell.metadata["nbgrader"].get("solution") and gid in EXERCISES:
                cells[gid] = "\n".join(ln for ln in cell.source.splitlines() if "### " not in ln)
    return cells


SOLUTION_CELLS = _solution_cells()


def solution(function: str):
    """The instructor's function, defined as grading defines it (its dependencies' cells first)."""
    namespace = fresh_namespace()
    for name in (*EXERCISES[function].dependency_names, function):
        exec(compile(SOLUTION_CELLS[name], f"<{name}>", "exec"), namespace)
    return namespace[function]


def test_every_exercise_has_a_solution_cell_and_public_checks():
    assert set(SOLUTION_CELLS) == set(EXERCISES)
    for exercise in EXERCISES.values():
        assert exercise.public_checks and all(REGISTRY[c.id] is c for c in exercise.checks), exercise.function
        assert all(c.function == exercise.function for c in exercise.checks)


@pytest.mark.parametrize("check_id", sorted(REGISTRY))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_instructors_answer_passes(check_id, seed):
    c = REGISTRY[check_id]
    assert run_check(c, solution(c.function), seed) is None


@pytest.mark.parametrize("check_id", sorted(cid for cid, c in REGISTRY.items() if c.exercise.reference is not None))
def test_the_packages_reference_passes(check_id):
    c = REGISTRY[check_id]
    assert run_check(c, c.exercise.reference, 0) is None


def _mistakes():
    for exercise in EXERCISES.values():
        for i, mistake in enumerate(exercise.mistakes):
            yield pytest.param(exercise, mistake, id=f"{exercise.function}-{i}")


@pytest.mark.parametrize(("exercise", "mistake"), list(_mistakes()))
@pytest.mark.parametrize("seed", [0, 1])
def test_each_named_mistake_is_named_when_it_is_made(exercise, mistake, seed):
    """Call the mistake itself as the student's function: a public check names it, and no check
    (public or hidden) lets it pass."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        messages = {c.id: run_check(c, mistake.wrong, seed) for c in exercise.checks}
    public = [m for c in exercise.public_checks if (m := messages[c.id])]
    assert any(mistake.message in m.text and m.id == f"{exercise.function}/{mistake.id}" for m in public), messages
    assert any(m is not None for m in messages.values())


def test_check_prints_a_tick_or_raises_with_the_mistake(capsys):
    check(sa.softmax, "softmax/rows-sum-to-one")
    assert "✓ softmax" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="axis 0"):
        check(lambda S, axis=-1: sa.softmax(S, axis=0), "softmax/rows-sum-to-one")
    with pytest.raises(CheckFailed, match="not written yet"):
        check(lambda S, axis=-1: (_ for _ in ()).throw(NotImplementedError()), "softmax/rows-sum-to-one")


def test_returned_objects_must_be_numbers():
    class Liar:
        def __eq__(self, other):
            return True

    with pytest.raises(TypeError):
        to_arrays(Liar())
    with pytest.raises(TypeError):
        to_arrays(np.array([True, False]))
    out = call_cases(lambda: Liar(), [Case(())])
    assert out[0].kind == BAD_RETURN and out[0].values is None and out[0].error


@pytest.mark.parametrize("name", ["TimeLimit", "BadReturn", "NotImplemented", "CheckFailed"])
def test_an_exception_named_like_the_graders_own_is_just_raised(name):
    """What a call did is data (its kind), not read from the exception's name: a student's own
    ``TimeLimit`` is an exception it raised, not a time-out; only ``NotImplementedError`` itself is the
    unanswered stub."""
    own = type(name, (Exception,), {})

    def answer(S, axis=-1):
        raise own("gave no result within 10 s")

    (out,) = call_cases(answer, [Case((np.zeros(3),))])
    assert (out.kind, out.exception) == (RAISED, name)
    found = first_error(REGISTRY["softmax/rows-sum-to-one"], [Case(())], [out])
    assert found is not None and found.kind is Kind.RAISED and found.name == name
    (out,) = call_cases(lambda: (_ for _ in ()).throw(NotImplementedError()), [Case(())])
    assert out.kind == NOT_ANSWERED
    withheld = type("Withheld", (NotImplementedError,), {})  # the student package's: it says why
    (out,) = call_cases(lambda: (_ for _ in ()).throw(withheld("not given away")), [Case(())])
    assert (out.kind, out.exception) == (RAISED, "Withheld")


# --- one line for every wrong return --------------------------------------------------------------
def _message(check_id: str, fn) -> str:
    with warnings.catch_warnings():  # as in a kernel or the sandbox: a warning is not an error
        warnings.simplefilter("ignore")
        msg = run_check(REGISTRY[check_id], fn)
    assert msg is not None and "\n" not in msg.text and "Traceback" not in msg.text, msg
    return msg.text


BAD_RETURNS = [
    # (check, answer, words the message must contain)
    ("causal_mask/T4", lambda T: np.triu(np.ones((T, T)), 1) * -np.inf, "0 · (-inf) = NaN"),
    ("padding_mask/small", lambda lengths, T: (np.arange(T)[None] >= np.asarray(lengths)[:, None]) * -np.inf,
     "np.where(condition, -np.inf, 0.0)"),
    ("project/shapes", lambda X, a, b, c: [X @ a, X @ b, X @ c], "return several results as a tuple"),
    ("project/shapes", lambda X, a, b, c: [X @ a, X @ b, X @ a], "return the tuple (Q, K, V)"),
    ("project/shapes", lambda X, a, b, c: ((X @ a, X @ b), X @ c), "return the flat tuple (Q, K, V)"),
    ("score_stds/small", lambda q, k: np.array([1.0, 2.0]), "one array of shape (2,) where 2 separate results"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: np.array(sa.softmax(S), dtype=object),
     "an array of float objects (dtype object): convert them to floats"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: (row for row in sa.softmax(S)), "returned a generator"),
    ("attention_flops/lecture", lambda T, d: __import__("fractions").Fraction(4 * T * T * d),
     "returned a Fraction, not a number NumPy computes with"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: sa.softmax(S) + 0j, "complex numbers"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: np.array(1.0), "a single number where an array of shape (3, 5)"),
    ("attention_flops/lecture", lambda T, d: np.full(3, 4.0 * T * T * d), "where a single number is expected"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: None, "None (is a `return` statement missing?)"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: sa.softmax(S) > 0.2, "boolean"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: "weights", "a string"),
    ("lookup_table_weights/permutation", lambda t, v, b: [np.eye(3), np.eye(3), np.eye(3)[:, :2]],
     "return several results as a tuple"),
    ("lookup_table_weights/permutation", lambda t, v, b: (np.eye(3), np.eye(3)),
     "return the flat tuple (W_Q, W_K, W_V)"),
]


@pytest.mark.parametrize(("check_id", "answer", "words"), BAD_RETURNS, ids=lambda x: x if isinstance(x, str) else "")
def test_every_wrong_return_gets_one_line_saying_what_to_return(check_id, answer, words):
    assert words in _message(check_id, answer)


def test_a_zero_dimensional_number_is_a_number():
    assert run_check(REGISTRY["attention_flops/lecture"], lambda T, d: np.array(4.0 * T * T * d)) is None


def test_overflow_and_underflow_are_told_apart():
    def no_max(S, axis=-1):
        with np.errstate(all="ignore"):
            e = np.exp(S)
            return e / e.sum(axis=axis, keepdims=True)

    def global_max(S, axis=-1):
        with np.errstate(all="ignore"):
            e = np.exp(S - np.max(S))
            return e / e.sum(axis=axis, keepdims=True)

    assert "overflowed" in _message("softmax/large-scores", no_max)
    msg = _message("softmax/large-scores", global_max)
    assert "underflowed" in msg and "overflowed" not in msg


def test_softmax_axis_check_catches_a_hard_coded_axis_zero():
    def axis_zero(S, axis=-1):
        return sa.softmax(S, axis=0)

    assert run_check(REGISTRY["softmax/axis"], axis_zero) is not None
    assert run_check(REGISTRY["softmax/axis"], sa.softmax) is None


def test_problem_20_lookup_must_happen_in_the_weights():
    def stored_in_values(targets, values, beta):
        m = len(targets)
        return beta * np.eye(m), np.eye(m), np.asarray(values, dtype=float)[np.asarray(targets)]

    for check_id in ("lookup_table_weights/permutation", "lookup_table_weights/hidden/random"):
        assert "attention weights" in _message(check_id, stored_in_values)


def test_labels_do_not_give_the_answers_away():
    text = " ".join(c.description for c in REGISTRY.values() if "/hidden/" not in c.id)
    for answer in ("4 T² d", "diag(a) - a aᵀ", "6 d", "24576", "49152", "-inf above"):
        assert answer not in text


# --- hidden checks decide the catalogue's answers the same way on every input they may draw ----
def _catalogued(folder: str):
    from grading_support import entries

    return [pytest.param(e, id=e.path.stem) for e in entries(folder) if e.kind == "cell" and e.replace in EXERCISES]


def defined_answer(entry):
    """The catalogue's function, defined after the instructor's cells of the functions it may call."""
    namespace = fresh_namespace()
    for dep in EXERCISES[entry.replace].dependency_names:
        exec(compile(SOLUTION_CELLS[dep], f"<{dep}>", "exec"), namespace)
    exec(compile(entry.path.read_text(), f"<{entry.path.name}>", "exec"), namespace)
    return namespace[entry.replace]


@pytest.mark.sweep  # many seeds per catalogue entry: the sweep lane, not make test-fast
@pytest.mark.usefixtures("remembered_tolerances")  # one tolerance per case (tests/sweep_support.py)
@pytest.mark.parametrize("entry", _catalogued("catalogue/correct"))
def test_correct_answers_pass_every_check_whatever_the_seed(entry):
    right = defined_answer(entry)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed = {(c.id, seed) for c in EXERCISES[entry.replace].checks for seed in range(100)
                  if run_check(c, right, seed) is not None}
    assert not failed, sorted(failed)[:10]


@pytest.mark.parametrize("entry", _catalogued("catalogue/wrong"))
def test_what_a_hidden_check_reports_is_fixed_wording(entry):
    """A hidden check's finding, put in the hidden vocabulary, is one of the record's named mistakes or
    declared diagnoses, a kind's fixed wording, or a built-in exception: never a value of the input
    or of the answer (a shape, a count, an error's size)."""
    from selfattn.checks.findings import BUILTIN_EXCEPTIONS

    wrong = defined_answer(entry)
    exercise = EXERCISES[entry.replace]
    named = {m.message for m in exercise.mistakes} | set(exercise.diagnoses.values())
    allowed = {k.value for k in Kind} | named | {f"raised {n}" for n in BUILTIN_EXCEPTIONS}
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in (c for c in exercise.checks if c.hidden):
            found += [f for seed in range(10) if (f := run_check(c, wrong, seed)) is not None]
    for f in found:
        assert str(f.hidden()) in allowed, (str(f), f.kind)
        assert f.kind is not Kind.MISTAKE or f.name in named, f.name


# --- a named mistake may itself give NaN (softmax(S) + mask): it matches NaN for NaN -------------
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
                  elements=st.floats(-1e3, 1e3)), st.data())
def test_a_result_with_nan_matches_a_mistake_with_nan_in_the_same_places_only(values, data):
    from selfattn.checks.record import close

    where = data.draw(hnp.arrays(bool, values.shape))
    wrong = np.where(where, np.nan, values)
    if where.all():  # nothing left to compare: no match, whatever the NaN
        assert not close(wrong, wrong, 1e-6, 1e-8, equal_nan=True)
        return
    assert close(wrong.copy(), wrong, 1e-6, 1e-8, equal_nan=True)
    assert close(wrong, wrong, 1e-6, 1e-8) is (not where.any())  # against the reference, NaN never matches
    moved = data.draw(hnp.arrays(bool, values.shape))
    if (moved != where).any():
        assert not close(np.where(moved, np.nan, values), wrong, 1e-6, 1e-8, equal_nan=True)


def test_fair_blame_counts_the_run_with_the_course_functions():
    """One rule for the notebook and the grader: the results with the course's dependencies count,
    a pass names the functions to fix, a failure is the function's own mistake."""
    from selfattn.checks.fair_blame import fair_results
    from selfattn.checks.findings import Finding, Kind

    theirs = {"f/a": Finding("overflow", Kind.NAN), "f/b": None}
    own = {"f/a": Finding.mistake("its own slip"), "f/b": None}
    asked = []
    assert fair_results("f", theirs, [], lambda deps: asked.append(deps) or own) == (theirs, "")
    assert fair_results("f", {"f/a": None}, ["g"], lambda deps: asked.append(deps) or own) == ({"f/a": None}, "")
    assert asked == []  # nothing to blame: no re-run
    results, note = fair_results("f", theirs, ["g", "h"], lambda deps: asked.append(list(deps)) or own)
    assert results == own and asked == [["g", "h"]]
    assert note == "f was judged with the course's g, h (yours fail their checks): what is said of f is its own mistake"
    results, note = fair_results("f", theirs, ["g"], lambda deps: {"f/a": None, "f/b": None}, quote="`", graded=True)
    assert results == {"f/a": None, "f/b": None}
    assert note == ("`f` is right, but it calls your `g`, which fails: fix `g` (`f` was graded with the course's `g` "
                    "and keeps its points).")


# --- what raised is data: the advice reads the exception, never its message ---------------------
def test_a_missing_name_or_module_is_read_from_the_exception_not_from_its_message():
    """A ``NameError`` Python raises names what is missing (``exc.name``); one a student raises
    with the same words names nothing, so no advice is built from text."""
    import pickle

    from selfattn.checks.calling import allowed_imports_only, exec_cells

    def uses_a_helper(S, axis=-1):
        return helper_from_another_cell(S)  # type: ignore[name-defined]  # noqa: F821

    def says_the_same_words(S, axis=-1):
        raise NameError("name 'helper_from_another_cell' is not defined")

    real, fake = call_cases(uses_a_helper, [Case((np.zeros(2),))]) + call_cases(says_the_same_words,
                                                                                  [Case((np.zeros(2),))])
    assert real.error == fake.error == "NameError: name 'helper_from_another_cell' is not defined"
    assert (real.exception, real.missing) == ("NameError", "helper_from_another_cell")
    assert (fake.exception, fake.missing) == ("NameError", None)

    namespace = fresh_namespace()
    with allowed_imports_only():
        (error,) = exec_cells([("softmax", "import torch.nn\ndef softmax(S, axis=-1):\n    return S\n")], namespace)
    assert str(error) == "the cell of softmax raised ModuleNotFoundError: No module named 'torch' (line 1)"
    assert (error.exception, error.missing) == ("ModuleNotFoundError", "torch")
    again = pickle.loads(pickle.dumps(error))  # a process pool or Dask keeps the data
    assert (again, again.exception, again.missing) == (error, "ModuleNotFoundError", "torch")


def test_the_advice_follows_what_raised():
    from selfattn.checks.notebook import _advice

    def softmax(S, axis=-1):
        return S

    # `np` is in this module's namespace, as in a notebook whose other cell imported it
    assert _advice([("NameError", "np")], softmax, "softmax") == (
        "`np` exists in your notebook but not in the cell of softmax: each answer is graded on its own, with "
        "NumPy only, so define or import it inside that cell")
    assert _advice([("NameError", "nowhere_at_all")], softmax, "softmax") == ""
    assert _advice([("NameError", None)], softmax, "softmax") == ""  # raised by hand: no name to give
    assert _advice([("ModuleNotFoundError", "torch")], softmax, "softmax") == (
        "answers are graded with the standard library and NumPy only: do not import `torch` in the cell of softmax")
    assert _advice([("ModuleNotFoundError", "numpy")], softmax, "softmax") == ""
    assert _advice([("ValueError", None)], softmax, "softmax") == ""


# --- names a kernel has and grading does not, or that wait for a person -------------------------
@pytest.mark.parametrize("name", ["help", "input", "breakpoint", "exit", "quit", "display", "get_ipython",
                                  "copyright", "credits", "license"])
def test_an_answer_using_a_name_only_a_kernel_has_is_refused_at_once_with_one_line(name):
    """The cell is not run (nothing asks anyone anything, nothing waits), the one line names the
    name, and the function is therefore not defined: the same in the notebook's re-run and in the
    sandbox, which both run answers through ``exec_cells``."""
    from selfattn.checks.calling import PERSON_NAMES, exec_cells

    assert name in PERSON_NAMES
    source = f"def softmax(S, axis=-1):\n    {name}(S)\n    return S\n"
    namespace = fresh_namespace()
    errors = exec_cells([("softmax", source)], namespace)
    assert [str(e) for e in errors] == [
        f"the cell of softmax uses {name}(), which a graded answer cannot (grading has no person to answer "
        "and no Jupyter): remove it from the cell"]
    assert "softmax" not in namespace and "\n" not in str(errors[0])
    # a name the cell binds itself (a parameter, a variable, an import) is its own: not refused
    own = f"def softmax(S, axis=-1, {name}=None):\n    return S if {name} is None else {name}\n"
    assert exec_cells([("softmax", own)], namespace) == [] and callable(namespace["softmax"])


@pytest.mark.parametrize("reads", ["sys.stdin.readline()", "sys.stdin.read()", "next(iter(sys.stdin))",
                                   "builtins.input('go? ')", "getattr(builtins, 'breakpoint')()"])
def test_reading_input_however_reached_raises_at_once_instead_of_waiting(reads, monkeypatch):
    """stdin here is a pipe nobody writes to (as the sandbox's is, while a run's cells execute): a
    read would block forever; while answers run it raises at once, in a cell or in a call."""
    import os
    import sys

    from selfattn.checks.calling import exec_cells

    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", os.fdopen(read_end))
    try:
        namespace = fresh_namespace()
        errors = exec_cells([("softmax", f"import builtins, sys\nx = {reads}\n")], namespace)
        assert len(errors) == 1 and errors[0].exception in ("EOFError", "RuntimeError"), errors
        assert "nobody" in str(errors[0]), errors[0]
        exec_cells([("softmax", f"import builtins, sys\ndef softmax(S, axis=-1):\n    {reads}\n    return S\n")],
                   namespace)
        (outcome,) = call_cases(namespace["softmax"], [Case((np.zeros(3),))])
        assert outcome.kind == RAISED and outcome.exception in ("EOFError", "RuntimeError"), outcome
        assert "nobody" in outcome.error, outcome.error
    finally:
        os.close(write_end)
    assert sys.stdin.fileno() == read_end  # put back afterwards


@settings(max_examples=30, deadline=None)
@given(value=st.one_of(st.floats(-9e8, 0.0), st.just(0.0)), masked=st.booleans())
def test_an_answer_wrong_only_where_the_reference_is_minus_infinity_is_told_so(value, masked):
    """A mask whose masked entries are a moderate negative, zero, or an unfilled masked array is told
    where and what is expected there, not 'largest error 0' (the error where the reference is finite)."""
    from selfattn.checks.notebook import judge

    def causal_mask(T):
        upper = np.triu(np.ones((T, T), dtype=bool), k=1)
        if masked:
            return np.ma.masked_array(np.zeros((T, T)), mask=upper)
        return np.where(upper, value, 0.0)

    found, _ = judge(REGISTRY["causal_mask/T4"], causal_mask)
    assert found is not None and "largest error" not in found.text, found
    assert found.text.startswith("wrong where the reference is −∞") and "at [0, 1]" in found.text, found.text

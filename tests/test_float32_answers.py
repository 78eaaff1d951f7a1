"""A correct answer computed in float32 keeps its points everywhere; the classic mistakes stay wrong.

Every check compares with the float32 error of its case (:func:`selfattn.checks.record.tolerance`:
it grows with the size of the scores and the length of the rows). Here, on every seed of the
hidden-draw sweep (``tests/test_hidden_draws.py``):

- float32 versions of every reference (inputs cast to float32, computed in float32, result cast to
  float32), of every instructor's answer (run with ``float`` meaning float32, so
  ``np.asarray(x, dtype=float)`` computes in float32 too) and of Problem 20's answer pass every
  public and hidden check, and are never told a named mistake;
- so do the references at inputs moved by a random float32 backward error (what any
  backward-stable float32 implementation returns, to first order);
- float32 versions of every named mistake and of every wrong answer of the catalogue still fail a
  public check, and no seed lets them through every hidden check.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from grading_support import entries
from hypothesis import given
from hypothesis import strategies as st
from test_checks import SOLUTION_CELLS
from test_hidden_draws import SEEDS

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from selfattn import numerics
from selfattn.checks.calling import Case, fresh_namespace, to_arrays
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.judging import run_check
from selfattn.checks.record import U32, row_length, tolerance

#: every check judges with the tolerance of its case computed once per module (tests/sweep_support.py)
pytestmark = pytest.mark.usefixtures("remembered_tolerances")


def _f32(x: Any) -> Any:
    return x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x


def float32_version(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its float inputs cast to float32 and its float results rounded to float32."""
    def in_float32(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            out = fn(*map(_f32, args), **{k: _f32(v) for k, v in kwargs.items()})
        if isinstance(out, tuple):
            return tuple(_f32(np.asarray(o)) for o in out)
        return _f32(np.asarray(out)) if np.asarray(out).dtype.kind == "f" else out
    return in_float32


def _in_float32_namespace(function: str, source: str | None = None) -> Callable[..., Any]:
    """The answer cell ``source`` (default: the instructor's), with the cells of the functions it may
    call, defined where ``float`` is float32 (``np.asarray(x, dtype=float)`` keeps float32)."""
    namespace = fresh_namespace()
    namespace["float"] = np.float32
    for name in EXERCISES[function].dependency_names:
        exec(compile(SOLUTION_CELLS[name], f"<{name}>", "exec"), namespace)
    exec(compile(source or SOLUTION_CELLS[function], f"<{function}>", "exec"), namespace)
    return namespace[function]


def _findings(function: str, fn: Callable[..., Any]) -> dict[str, dict[int, Any]]:
    """check id -> seed -> the finding of ``fn`` (``None``: passed); public checks run at seed 0, as
    in the notebook, hidden ones on every seed of the sweep."""
    out: dict[str, dict[int, Any]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in EXERCISES[function].checks:
            out[c.id] = {seed: run_check(c, fn, seed) for seed in (SEEDS if c.hidden else [0])}
    return out


def _right_in_float32():
    for name, exercise in EXERCISES.items():
        if exercise.reference is not None:
            yield pytest.param(name, float32_version(exercise.reference), id=f"reference:{name}")
        yield pytest.param(name, float32_version(_in_float32_namespace(name)), id=f"answer:{name}")


@pytest.mark.sweep  # every seed of SEEDS: the sweep lane, not make test-fast
@pytest.mark.parametrize(("function", "fn"), list(_right_in_float32()))
def test_a_correct_float32_answer_passes_every_check_on_every_seed(function, fn):
    failed = {(cid, seed): f"{f.kind.name}: {f}" for cid, by_seed in _findings(function, fn).items()
              for seed, f in by_seed.items() if f is not None}
    assert not failed, f"a correct float32 {function} fails: {dict(list(failed.items())[:5])}"


def test_problem_20_in_float32_reads_the_right_key_and_keeps_its_points():
    """The issue's answer: every query puts weight 1.0 on the right key, the outputs off by 2.5e-8."""
    fn = float32_version(_in_float32_namespace("lookup_table_weights"))
    case = EXERCISES["lookup_table_weights"].public_checks[0].cases(np.random.default_rng(0))[0]
    W_V = to_arrays(fn(*case.args))[2]
    assert 0 < np.abs(W_V - case.args[1]).max() < 1e-7  # float32 rounding, and only that
    assert all(run_check(c, fn, 0) is None for c in EXERCISES["lookup_table_weights"].checks)


def _moved(x: Any, rng: np.random.Generator, rho: float) -> Any:
    """``x`` moved entry by entry by a random relative error of at most ``rho`` (floats only)."""
    if not (isinstance(x, np.ndarray) and x.dtype.kind == "f"):
        return x
    return x * (1 + rho * rng.uniform(-1, 1, x.shape))


def backward_stable(fn: Callable[..., Any], draw: int) -> Callable[..., Any]:
    """``fn`` at inputs moved by a random float32 backward error (``n u`` relative, ``n`` the row
    length), its result rounded to float32: what a backward-stable float32 implementation returns."""
    def answer(*args: Any, **kwargs: Any) -> Any:
        rng = np.random.default_rng(draw)
        rho = row_length(Case(args, kwargs)) * U32
        return float32_version(fn)(*(_moved(a, rng, rho) for a in args),
                                   **{k: _moved(v, rng, rho) for k, v in kwargs.items()})
    return answer


@pytest.mark.parametrize("function", [n for n, e in EXERCISES.items() if e.reference is not None and not e.exact])
@given(draw=st.integers(0, 2**32 - 1), seed=st.sampled_from(list(SEEDS)))
def test_any_backward_stable_float32_answer_passes(function, draw, seed):
    fn = backward_stable(EXERCISES[function].reference, draw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed = {c.id: f for c in EXERCISES[function].checks if (f := run_check(c, fn, seed)) is not None}
    assert not failed, failed


# --- the tolerance grows with the case's condition, and stays far below the classic mistakes ---
@given(scale=st.floats(1e-2, 1e3), T=st.integers(2, 60), d=st.integers(2, 16), seed=st.integers(0, 2**16))
def test_attention_in_float32_is_within_the_tolerance_and_the_tolerance_within_its_condition(scale, T, d, seed):
    """Scores up to a thousand and rows up to 60 keys: a stable float32 attention is within the
    tolerance; the tolerance stays within 100 n u (1 + the largest score) of the largest value."""
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((3, d)), rng.standard_normal((T, d)), rng.standard_normal((T, 2))
    Q *= scale / np.abs(Q @ K.T / np.sqrt(d)).max()  # the largest score is `scale`
    case = Case((Q, K, V))
    want = EXERCISES["attention"].expected(case)
    rtol, atol = tolerance(EXERCISES["attention"].expected, case, want)
    got = float32_version(numerics.attention)(Q, K, V).astype(float)
    assert np.allclose(got, want[0], rtol=rtol, atol=atol)
    n = row_length(case)
    assert atol + rtol * np.abs(want[0]).max() <= 100 * n * U32 * (1 + scale) * np.abs(V).max()


def _wrong_in_float32():
    for e in entries("catalogue/wrong"):
        if e.kind == "cell" and e.replace in EXERCISES and e.replace in e.zero:
            yield pytest.param(e.replace, float32_version(_in_float32_namespace(e.replace, e.path.read_text())),
                               None, id=f"catalogue:{e.path.stem}")
    for name, exercise in EXERCISES.items():
        for k, mistake in enumerate(exercise.mistakes):
            yield pytest.param(name, float32_version(mistake.wrong), mistake.message, id=f"mistake:{name}:{k}")


@pytest.mark.sweep  # every seed of SEEDS: the sweep lane, not make test-fast
@pytest.mark.parametrize(("function", "wrong", "message"), list(_wrong_in_float32()))
def test_a_classic_mistake_in_float32_stays_wrong(function, wrong, message):
    found = _findings(function, wrong)
    public = [found[c.id][0] for c in EXERCISES[function].public_checks if found[c.id][0] is not None]
    assert public, f"a float32 {function} with a known mistake passes every public check"
    if message is not None:
        assert any(message in f.text for f in public), (message, public)
    hidden = [by_seed for cid, by_seed in found.items() if "/hidden/" in cid]
    missed = [seed for seed in SEEDS if hidden and all(by_seed[seed] is None for by_seed in hidden)]
    assert not missed, f"seeds on which every hidden check passes it: {missed[:10]}"

"""Public checks of the graded exercises (hidden ones live with the autograder).

Every verify function compares the student's arrays with the reference from this package
and, when they differ, with the outputs of the classic mistakes, so the message can name the
mistake ("softmax taken over the queries", "missing 1/sqrt(d_k)", ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import cost, numerics, text
from .checking import DEPENDS, PUBLIC, REFERENCE_FUNCTIONS, Case, Check, Outcome, close, register, tolerance
from .experiments import score_stds
from .lecture import lecture_shapes

__all__ = ["EXERCISES", "MISTAKES", "REFERENCES", "RETURNS", "Exercise", "count_message", "make_verify", "rand"]

Variant = Callable[[Case], tuple[np.ndarray, ...]]


def _one(x) -> tuple[np.ndarray, ...]:
    return (np.asarray(x, dtype=float),)


def rand(rng: np.random.Generator, *shape: int, scale: float = 1.0, dtype=np.float64) -> np.ndarray:
    return (scale * rng.standard_normal(shape)).astype(dtype)


# --- references: the package's own implementation, called with the case's arguments -------------
def _ref_softmax(c: Case):
    return _one(numerics.softmax(*c.args, **c.kwargs))


def _ref_attention(c: Case):
    return _one(numerics.attention(*c.args, **c.kwargs))


def _perm(c: Case):
    perm = np.asarray(c.args[0], dtype=int)
    return _one(np.eye(len(perm))[perm])


def _lookup_check(c: Case, W: tuple[np.ndarray, ...]) -> float:
    """Largest error of the hand-built lookup over a sequence holding every type once."""
    targets, values, _beta = c.args
    seq = np.asarray(c.meta.get("sequence", np.arange(len(targets))))
    X = np.eye(len(targets))[seq]
    W_Q, W_K, W_V = W
    out = numerics.attention(X @ W_Q, X @ W_K, X @ W_V)
    want = np.asarray(values)[np.asarray(targets)[seq]]
    return float(np.abs(out - want).max())


def _lookup_misreads(c: Case, W: tuple[np.ndarray, ...]) -> str | None:
    """Message when some token does not put (nearly) all its attention on a position holding the
    type it targets: the lookup must happen through the weights, not be stored in W_V."""
    targets, _values, _beta = c.args
    seq = np.asarray(c.meta.get("sequence", np.arange(len(targets))))
    X = np.eye(len(targets))[seq]
    W_Q, W_K, _W_V = W
    with np.errstate(all="ignore"):
        A = numerics.attention_weights(X @ W_Q, X @ W_K)
    wanted = seq[None, :] == np.asarray(targets)[seq][:, None]  # (query i, key j): j holds the target of i
    on_target = np.where(wanted, A, 0.0).sum(axis=1)
    if not (np.isfinite(A).all() and (on_target >= 1 - 1e-6).all()):
        i = int(np.argmin(np.where(np.isfinite(on_target), on_target, -1)))
        return (f"the token at position {i} puts only {on_target[i]:.2g} of its attention on the token it must look "
                "up: the lookup has to happen in the attention weights (query of type t matches the key of type "
                "targets[t]), not be stored in W_V")
    return None


REFERENCES: dict[str, Variant] = {
    "shape_answers": lambda c: _one(lecture_shapes()),
    "embed": lambda c: _one(text.embed(*c.args)),
    "project": lambda c: tuple(np.asarray(c.args[0]) @ np.asarray(w) for w in c.args[1:]),
    "softmax": _ref_softmax,
    "scaled_scores": lambda c: _one(numerics.scaled_scores(*c.args)),
    "attention": _ref_attention,
    "score_stds": lambda c: tuple(np.asarray(x) for x in score_stds(*c.args)),
    "softmax_jacobian": lambda c: _one(numerics.softmax_jacobian(*c.args)),
    "permutation_matrix": _perm,
    "causal_mask": lambda c: _one(numerics.causal_mask(*c.args)),
    "padding_mask": lambda c: _one(numerics.padding_mask(*c.args)),
    "attention_flops": lambda c: _one(cost.attention_flops(*c.args)),
    "crossover_length": lambda c: _one(cost.crossover_length(*c.args)),
}


def _attn_variant(c: Case, *, scale=True, axis=-1, mask_after=False, ignore_mask=False, transpose=False):
    Q, K, V = (np.asarray(a, dtype=float) for a in c.args[:3])
    mask = c.kwargs.get("mask", c.args[3] if len(c.args) > 3 else None)
    S = Q @ K.T / (np.sqrt(Q.shape[-1]) if scale else 1.0)
    if transpose:
        S = S.T
    with np.errstate(all="ignore"):
        if mask is not None and not ignore_mask and not mask_after:
            S = S + mask
        A = numerics.softmax(np.where(np.isnan(S), -np.inf, S), axis=axis)
        if mask is not None and mask_after and not ignore_mask:
            A = A * np.where(np.isneginf(mask), 0.0, 1.0)
        if transpose:
            A = A.T
        return _one(A @ V) if A.shape[-1] == V.shape[0] else _one(np.full((1,), np.nan))


#: Known mistakes per function: (variant producing the wrong answer, message naming the mistake).
MISTAKES: dict[str, list[tuple[Variant, str]]] = {
    "embed": [
        (lambda c: _one(np.asarray(c.args[0]).T[np.asarray(c.args[1])]), "looked up columns of E: rows are the token types"),
        (lambda c: _one(np.asarray(c.args[0])[: len(c.args[1])]), "took the first n rows of E instead of the rows named by ids"),
    ],
    "shape_answers": [
        (lambda c: _one(lecture_shapes()[:, ::-1]), "each shape is (rows, columns): Q has one row per token"),
    ],
    "project": [
        (lambda c: tuple(np.asarray(w).T @ np.asarray(c.args[0]).T for w in c.args[1:]),
         "returned the transposes: Q = X W_Q has one row per token"),
    ],
    "softmax": [
        (lambda c: _one(numerics.softmax(c.args[0], axis=0)), "normalised along axis 0 (down the columns): normalise each row, along the given axis"),
        (lambda c: _one(np.exp(c.args[0] - np.max(c.args[0])) / np.exp(c.args[0] - np.max(c.args[0])).sum()),
         "normalised over the whole array: weights must sum to 1 along the given axis only"),
        (lambda c: _one(np.exp(c.args[0])), "forgot to divide by the sum: weights must sum to 1 along the axis"),
        (lambda c: _one(c.args[0]), "returned the scores unchanged"),
    ],
    "scaled_scores": [
        (lambda c: _one(c.args[0] @ c.args[1].T), "missing the 1/√d_k scaling of the scores"),
        (lambda c: _one(c.args[0] @ c.args[1].T / c.args[0].shape[1]), "divided by d_k: the scaling is 1/√d_k"),
        (lambda c: _one(c.args[1] @ c.args[0].T / np.sqrt(c.args[0].shape[1])),
         "transposed: scores have shape (T_q, T_k), one row per query (Q Kᵀ, not K Qᵀ)"),
        (lambda c: _one(c.args[0] @ c.args[1].T / np.sqrt(c.args[1].shape[0])), "scaled by √T_k: the scaling is 1/√d_k"),
    ],
    "attention": [
        (lambda c: _attn_variant(c, scale=False), "missing the 1/√d_k scaling of the scores"),
        (lambda c: _attn_variant(c, axis=0), "softmax taken over the queries (axis 0): each query's weights over the keys must sum to 1"),
        (lambda c: _attn_variant(c, mask_after=True), "mask applied after softmax: rows no longer sum to 1; add the mask to the scores"),
        (lambda c: _attn_variant(c, ignore_mask=True), "the mask was ignored: add it to the scores before the softmax"),
    ],
    "softmax_jacobian": [
        (lambda c: _one(-np.outer(c.args[0], c.args[0])), "missing the diagonal term a_j·1[j = l]"),
        (lambda c: _one(np.diag(c.args[0] * (1 - c.args[0]))), "only the diagonal: off-diagonal entries are -a_j a_l"),
        (lambda c: _one(np.outer(c.args[0], c.args[0]) - np.diag(c.args[0])), "sign flipped: J = diag(a) - a aᵀ"),
    ],
    "permutation_matrix": [
        (lambda c: _one(np.eye(len(c.args[0]))[np.asarray(c.args[0])].T),
         "this is the inverse permutation (the transpose): row i of P X must be X[perm[i]]"),
    ],
    "causal_mask": [
        (lambda c: _one(np.where(np.triu(np.ones((c.args[0],) * 2), 0) > 0, -np.inf, 0.0)),
         "off by one: the diagonal is masked, but a token may attend to itself"),
        (lambda c: _one(np.where(np.tril(np.ones((c.args[0],) * 2), -1) > 0, -np.inf, 0.0)),
         "masked below the diagonal: token i may read j ≤ i, so -inf goes above the diagonal"),
        (lambda c: _one(np.tril(np.ones((c.args[0],) * 2))),
         "multiplicative 0/1 mask: the mask is additive, 0 to keep and -inf to forbid"),
    ],
    "padding_mask": [
        (lambda c: _one(np.where(np.arange(c.args[1])[None, :] <= np.asarray(c.args[0])[:, None], 0.0, -np.inf)),
         "off by one: position j = lengths[b] is already padding"),
        (lambda c: _one((np.arange(c.args[1])[None, :] < np.asarray(c.args[0])[:, None]).astype(float)),
         "multiplicative 0/1 mask: the mask is additive, 0 to keep and -inf to forbid"),
        (lambda c: _one(numerics.padding_mask(*c.args).T), "transposed: the mask has shape (B, T)"),
    ],
    "attention_flops": [
        (lambda c: _one(2 * c.args[0] ** 2 * c.args[1]), "counted only one of the two products Q Kᵀ and A V"),
        (lambda c: _one(2 * c.args[0] ** 2 * c.args[1] / 2), "a multiply-add counts as 2 FLOPs"),
        (lambda c: _one(4 * c.args[0] * c.args[1] ** 2), "T and d swapped: the score matrix is T×T"),
    ],
    "crossover_length": [
        (lambda c: _one(24 * c.args[0] / 2), "solve 4 T² d = 24 T d² for T"),
        (lambda c: _one(6 * c.args[0] ** 2), "T = 6 d, not 6 d²: divide both sides by 4 T d"),
    ],
}


#: What a function returning several results must return (others return one array or number).
RETURNS: dict[str, tuple[str, ...]] = {
    "project": ("Q", "K", "V"),
    "score_stds": ("the std of q·k", "the std of q·k/√d_k"),
    "lookup_table_weights": ("W_Q", "W_K", "W_V"),
}


def count_message(function: str, got: Sequence[np.ndarray], n_want: int) -> str:
    """One line for a result with the wrong number of parts (a list or an array instead of a
    tuple, a tuple of tuples, several values instead of one)."""
    names = "(" + ", ".join(RETURNS.get(function, ())) + ")"
    if n_want == 1:
        return f"returned a tuple of {len(got)} values where one array is expected: return a single array"
    if len(got) == 1:
        g = got[0]
        what = "a single number" if g.ndim == 0 else f"one array of shape {g.shape}"
        return (f"returned {what} where {n_want} separate results are expected: return the tuple {names} "
                f"(`return a, b, ...`), not a list or an array")
    return f"returned {len(got)} values where {n_want} are expected: return the flat tuple {names}"


def shape_message(got: np.ndarray, want: np.ndarray) -> str:
    if got.ndim == 0:
        return f"returned a single number where an array of shape {want.shape} is expected"
    if want.ndim == 0:
        return f"returned an array of shape {got.shape} where a single number is expected"
    return f"expected shape {want.shape}, got {got.shape}"


def largest_error(got: np.ndarray, want: np.ndarray) -> float:
    """Largest absolute difference where the reference is finite (inf where the result is not)."""
    keep = np.isfinite(want)
    if not keep.any():
        return float("inf") if not np.array_equal(got, want) else 0.0
    diff = np.abs(got[keep] - want[keep])
    return float("inf") if not np.isfinite(diff).all() else float(diff.max())


def make_verify(function: str, *, exact: bool = False, extra: Callable | None = None):
    """A verify function comparing with the reference and diagnosing known mistakes."""

    def verify(cases: list[Case], outcomes: list[Outcome]) -> str | None:
        rtol, atol = (0.0, 0.0) if exact else tolerance(cases)
        for case, out in zip(cases, outcomes, strict=True):
            want = REFERENCES[function](case)
            got = out.values
            if len(got) != len(want):
                return f"{count_message(function, got, len(want))} (on input {case.describe()})"
            if all(close(g, w, rtol, atol) for g, w in zip(got, want, strict=True)):
                continue
            for variant, message in MISTAKES.get(function, []):
                try:
                    with np.errstate(all="ignore"):
                        wrong = variant(case)
                except Exception:  # a variant may not apply to this case
                    continue
                if len(wrong) == len(want) and all(
                    w.shape == r.shape and close(w, r, rtol, atol) for w, r in zip(wrong, want, strict=True)
                ):
                    continue  # this mistake makes no difference on this input
                if len(wrong) == len(got) and all(
                    g.shape == w.shape and close(g, w, max(rtol, 1e-6), max(atol, 1e-8))
                    for g, w in zip(got, wrong, strict=True)
                ):
                    return f"{message} (on input {case.describe()})"
            if extra is not None and (msg := extra(case, got)):
                return msg
            for g, w in zip(got, want, strict=True):
                if g.shape != w.shape:
                    return f"{shape_message(g, w)} (on input {case.describe()})"
            for g, w in zip(got, want, strict=True):
                if np.isnan(g).any() and not np.isnan(w).any():
                    return f"NaN in {int(np.isnan(g).sum())} of {g.size} entries (on input {case.describe()})"
            err = max(largest_error(g, w) for g, w in zip(got, want, strict=True))
            return f"wrong values on input {case.describe()} (largest error {err:.3g})"
        return None

    return verify


def _softmax_extra(case: Case, got):
    g = got[0]
    S = np.asarray(case.args[0], dtype=float)
    axis = case.kwargs.get("axis", -1)
    if g.shape != S.shape:
        return None
    bad = ~np.isfinite(g)
    if bad.any():
        slices = bad.any(axis=axis)
        with np.errstate(all="ignore"):
            top = np.max(S, axis=axis)
        if (top[slices] > 700).any():
            return ("NaN or inf in the weights: exp overflowed for large scores (exp(710) is inf); "
                    "subtract the row maximum along the axis first")
        if np.isneginf(top[slices]).all():
            return "NaN in the weights of a slice that is entirely -inf: such a slice must give weights 0, not NaN"
        return ("NaN in the weights: exp underflowed to 0 for every score of a slice far below the largest score "
                "(0/0 is NaN); subtract each slice's own maximum along the axis, not one maximum of the whole array")
    if not np.allclose(g.sum(axis=axis), 1.0, atol=1e-5):
        return f"weights do not sum to 1 along axis {axis}: normalise each slice along that axis"
    return None


def _attention_extra(case: Case, got):
    g = got[0]
    if np.isnan(g).any():
        Q, K = case.args[0], case.args[1]
        if np.abs(Q @ K.T).max() > 500:
            return "NaN in the output for large scores: exp overflowed; subtract the row maximum before exponentiating"
        return "NaN in the output: check the mask (it is added to the scores; -inf · 0 is NaN)"
    return None


def _mask_extra(case: Case, got):
    if np.isnan(got[0]).any():
        return ("NaN in the mask: NumPy gives 0 · (-inf) = NaN, so a 0/1 matrix times -inf does not work; "
                "build the mask with np.where(condition, -np.inf, 0.0)")
    return None


def _lookup_verify(cases: list[Case], outcomes: list[Outcome]) -> str | None:
    for case, out in zip(cases, outcomes, strict=True):
        targets, values, _beta = case.args
        m, d_v = len(targets), np.shape(values)[1]
        if len(out.values) != 3:
            return count_message("lookup_table_weights", out.values, 3)
        want = [(m, None), (m, None), (m, d_v)]
        for name, W, (rows, cols) in zip(("W_Q", "W_K", "W_V"), out.values, want, strict=True):
            if W.ndim != 2 or W.shape[0] != rows or (cols is not None and W.shape[1] != cols):
                return f"{name} has shape {W.shape}: it needs {rows} rows (one per token type)" + (
                    f" and {cols} columns" if cols else "")
        if out.values[0].shape[1] != out.values[1].shape[1]:
            return f"W_Q {out.values[0].shape} and W_K {out.values[1].shape} must have the same number of columns (d_k)"
        if not all(np.isfinite(W).all() for W in out.values):
            return "the matrices contain NaN or inf"
        err = _lookup_check(case, out.values)
        if not err <= 1e-9:
            if err < 0.5:
                return (f"close but not exact (largest error {err:.2g}): the right key must win by a margin that "
                        "grows with beta, so the softmax saturates")
            return "a token of type t does not read values[targets[t]]: check which key each query scores highest"
        if (wrong := _lookup_misreads(case, out.values)) is not None:
            return wrong
    return None


class Exercise:
    """Public checks of one graded function, registered on import."""

    def __init__(self, function: str, checks: Sequence[tuple[str, str, Callable]], *, exact=False,
                 extra=None, verify=None, depends: tuple[str, ...] = ()):
        self.function = function
        if depends:
            DEPENDS[function] = depends
        for suffix, description, cases in checks:
            register(Check(f"{function}/{suffix}", function, description, cases,
                           verify or make_verify(function, exact=exact, extra=extra)))
            PUBLIC.append(f"{function}/{suffix}")


def _qkv_cases(rng, T_q=3, T_k=5, d_k=4, d_v=2, mask=None):
    return Case((rand(rng, T_q, d_k), rand(rng, T_k, d_k), rand(rng, T_k, d_v)), {} if mask is None else {"mask": mask})


EXERCISES = [
    Exercise("embed", [
        ("lookup", "X stacks the rows of E named by ids",
         lambda rng: [Case((rand(rng, 5, 6), np.array([4, 0, 4, 2])))]),
    ], exact=True),
    Exercise("project", [
        ("shapes", "Q, K, V = X W_Q, X W_K, X W_V",
         lambda rng: [Case((rand(rng, 5, 6), rand(rng, 6, 3), rand(rng, 6, 3), rand(rng, 6, 2)))]),
    ]),
    Exercise("shape_answers", [
        ("lecture", "shapes for T = 10, d = 512, d_k = d_v = 64", lambda rng: [Case(())]),
    ], exact=True),
    Exercise("softmax", [
        ("rows-sum-to-one", "each row is a distribution", lambda rng: [Case((rand(rng, 3, 5),))]),
        ("large-scores", "large scores do not overflow",
         lambda rng: [Case((np.array([[1000.0, 999.0, 0.0], [-1000.0, -1001.0, -1002.0]]),))]),
        ("axis", "the axis argument is respected",
         lambda rng: [Case((rand(rng, 4, 3),), {"axis": 0}), Case((rand(rng, 2, 3, 4),), {"axis": 1})]),
    ], extra=_softmax_extra),
    Exercise("scaled_scores", [
        ("shape-and-scale", "Q Kᵀ / √d_k with T_q ≠ T_k", lambda rng: [Case((rand(rng, 3, 4), rand(rng, 5, 4)))]),
    ]),
    Exercise("attention", [
        ("no-mask", "softmax(Q Kᵀ/√d_k) V for T_q ≠ T_k", lambda rng: [_qkv_cases(rng)]),
        ("causal-mask", "an additive causal mask", lambda rng: [_qkv_cases(rng, 4, 4, 3, 2, numerics.causal_mask(4))]),
    ], extra=_attention_extra, depends=("softmax", "scaled_scores")),
    Exercise("score_stds", [
        ("small", "standard deviations of q·k and q·k/√d_k", lambda rng: [Case((rand(rng, 200, 16), rand(rng, 200, 16)))]),
    ]),
    Exercise("softmax_jacobian", [
        ("small", "the Jacobian of a softmax over three scores", lambda rng: [Case((numerics.softmax(np.array([1.0, 2.0, 0.5])),))]),
    ]),
    Exercise("permutation_matrix", [
        ("small", "(P X)[i] = X[perm[i]]", lambda rng: [Case(([2, 0, 1],))]),
    ], exact=True),
    Exercise("causal_mask", [
        ("T4", "the causal mask for T = 4", lambda rng: [Case((4,))]),
    ], exact=True, extra=_mask_extra),
    Exercise("padding_mask", [
        ("small", "the padding mask for three sequences of lengths 2, 4, 1", lambda rng: [Case(([2, 4, 1], 4))]),
    ], exact=True, extra=_mask_extra),
    Exercise("attention_flops", [
        ("lecture", "the FLOPs of Q Kᵀ and A V for the lecture's T = 10, d = 512", lambda rng: [Case((10, 512))]),
    ], exact=True),
    Exercise("crossover_length", [
        ("lecture", "the crossover lengths at the lecture's two widths", lambda rng: [Case((4096,)), Case((8192,))]),
    ], exact=True),
    Exercise("lookup_table_weights", [
        ("permutation", "an exact lookup table at beta = 1000",
         lambda rng: [Case(([2, 0, 1], rand(rng, 3, 2), 1000.0), meta={"sequence": [1, 2, 0]})]),
    ], verify=_lookup_verify),
]

# what a function failing only because of its dependency is checked again with, in the notebook
REFERENCE_FUNCTIONS.update(softmax=numerics.softmax, scaled_scores=numerics.scaled_scores)

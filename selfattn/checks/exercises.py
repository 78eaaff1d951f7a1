"""The graded exercises of the course, one :class:`~selfattn.checks.record.Exercise` record each.

Each record holds the reference (the package's own implementation, which the book also uses), the
classic mistakes its messages name, the functions it may call and its public checks. Importing
this module registers the public checks; the autograder attaches its hidden checks to the same
records (``SOFTMAX.hidden(...)``). To add an exercise, see the README ("Adding an exercise").
"""

from __future__ import annotations

import numpy as np

from .. import cost, heads, numerics, text, training
from ..experiments import score_stds
from ..lecture import lecture_shapes
from . import problem20
from .calling import Case, Outcome, to_arrays
from .findings import Finding, Kind
from .record import Exercise, Mistake, close, count_message, largest_error, rand, tolerance

__all__ = ["EXERCISES", "rand"]


# --- diagnoses tried after the named mistakes -------------------------------------------------
# Fixed wording, declared with the record (``diagnoses=``): hidden checks report them as they are.
_OVERFLOW = ("NaN or inf in the weights: exp overflowed for large scores (exp(710) is inf); "
             "subtract the row maximum along the axis first")
_ALL_MASKED = "NaN in the weights of a slice that is entirely -inf: such a slice must give weights 0, not NaN"
_UNDERFLOW = ("NaN in the weights: exp underflowed to 0 for every score of a slice far below the largest score "
              "(0/0 is NaN); subtract each slice's own maximum along the axis, not one maximum of the whole array")
_NOT_NORMALISED = "weights do not sum to 1 along the axis asked for: normalise each slice along that axis"
_CLIPPED = ("large scores were clipped (np.clip): scores of 10⁴ must keep their differences; subtract each slice's "
            "maximum instead, which never overflows")


def _clipped(S: np.ndarray, g: np.ndarray, axis: int) -> bool:
    """Whether two large scores of a slice (|s| > 80: beyond what exp holds in float32) that differ got
    the same weight, and not 0: a softmax tells them apart (by a factor e^difference), clipping does not."""
    S, g = np.moveaxis(S, axis, -1), np.moveaxis(g, axis, -1)
    s, w = S[..., :, None], g[..., :, None]
    s2, w2 = S[..., None, :], g[..., None, :]
    with np.errstate(invalid="ignore"):
        tie = (np.abs(s) > 80) & (np.abs(s2) > 80) & np.isfinite(s) & np.isfinite(s2) & (s != s2) \
            & (w > 0) & np.isclose(w, w2, rtol=1e-9, atol=0)
    return bool(tie.any())
_OUTPUT_OVERFLOW = "NaN in the output for large scores: exp overflowed; subtract the row maximum before exponentiating"
_OUTPUT_NAN = "NaN in the output: check the mask (it is added to the scores; -inf · 0 is NaN)"
_MASK_NAN = ("NaN in the mask: NumPy gives 0 · (-inf) = NaN, so a 0/1 matrix times -inf does not work; "
             "build the mask with np.where(condition, -np.inf, 0.0)")


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
            return _OVERFLOW
        if np.isneginf(top[slices]).all():
            return _ALL_MASKED
        return _UNDERFLOW
    if _clipped(S, g, axis):
        return _CLIPPED
    if not np.allclose(g.sum(axis=axis), 1.0, atol=1e-5):
        return Finding.mistake(_NOT_NORMALISED, f"weights do not sum to 1 along axis {axis}: normalise each slice "
                                                "along that axis")
    return None


def _attention_extra(case: Case, got):
    g = got[0]
    if np.isnan(g).any():
        Q, K = case.args[0], case.args[1]
        return _OUTPUT_OVERFLOW if np.abs(Q @ K.T).max() > 500 else _OUTPUT_NAN
    return None


def _mask_extra(case: Case, got):
    return _MASK_NAN if np.isnan(got[0]).any() else None


# --- contracts: what a right result has on any valid input, judged without the reference ---------
# Checked on the calls a function that depends on the exercise (attention) makes to the student's
# version, so the notebook can tell "fix softmax first" from the inputs softmax really received.
def _result_array(result) -> np.ndarray | None:
    try:
        return to_arrays(result)[0] if not isinstance(result, tuple) else None
    except Exception:
        return None


def _softmax_contract(arguments, result) -> str | None:
    """A softmax of finite or −∞ scores: same shape, no NaN or inf, weights in [0, 1] that sum to 1
    along the axis (a slice entirely −∞ gives 0s), weight 0 where the score is −∞."""
    S = np.asarray(arguments[0], dtype=float)
    axis = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], int | np.integer) else -1
    if S.ndim == 0 or np.isnan(S).any() or np.isposinf(S).any() or not -S.ndim <= axis < S.ndim:
        return None  # not an input a softmax has a distribution for: no claim
    w = _result_array(result)
    if w is None or w.shape != S.shape:
        return (f"it returned {'something that is not one array' if w is None else f'shape {w.shape}'} for "
                f"scores of shape {S.shape}")
    if not np.isfinite(w).all():
        return "it returned NaN or inf where no input was NaN"
    masked = np.isneginf(S).all(axis=axis, keepdims=True)
    if (w < -1e-6).any() or (w > 1 + 1e-6).any():
        return "a weight of its output is outside [0, 1]"
    sums = w.sum(axis=axis, keepdims=True)
    if not np.allclose(np.where(masked, 1.0, sums), 1.0, atol=1e-4):
        return "a row of its output does not sum to 1"
    if (np.abs(np.where(np.isneginf(S), w, 0.0)) > 1e-6).any():
        return "a score of −∞ (a masked position) got a weight that is not 0"
    return None


def _scaled_scores_contract(arguments, result) -> str | None:
    """Scores of 2-D Q (T_q, d_k) and K (T_k, d_k): shape (T_q, T_k), finite where Q and K are."""
    Q, K = (np.asarray(a, dtype=float) for a in arguments[:2])
    if Q.ndim != 2 or K.ndim != 2 or Q.shape[1] != K.shape[1] or not (np.isfinite(Q).all() and np.isfinite(K).all()):
        return None
    s = _result_array(result)
    if s is None or s.shape != (Q.shape[0], K.shape[0]):
        return (f"it returned {'something that is not one array' if s is None else f'shape {s.shape}'} for Q of "
                f"shape {Q.shape} and K of shape {K.shape}: scores are (T_q, T_k), one row per query")
    if not np.isfinite(s).all():
        return "it returned NaN or inf where no input was NaN"
    return None


def _sequence(c: Case) -> np.ndarray:
    """The case's sequence of token types (by default each type once, in order)."""
    return np.asarray(c.meta.get("sequence", np.arange(len(c.args[0]))))


def _lookup_truth(c: Case) -> tuple[np.ndarray]:
    """What the lookup must give on the case's sequence (T, d_v): each token the value row of its target."""
    targets, values, _beta = c.args
    return (np.asarray(values, dtype=float)[np.asarray(targets)[_sequence(c)]],)


#: Problem 20's named mistakes (fixed wording: hidden checks report them as they are).
_NOT_SATURATED = ("close but not exact: the right key must win by a margin that grows with beta, so the softmax "
                  "saturates")
_WRONG_TARGET = "a token of type t does not read values[targets[t]]: check which key each query scores highest"
_W_V_NOT_VALUES = ("every token reads the right key, but the outputs are not values[targets[t]]: row t of W_V must "
                   "be values[t], the value a token of type t carries")
_LOOKUP_IN_W_V = ("the lookup has to happen in the attention weights (query of type t matches the key of type "
                  "targets[t]), not be stored in W_V")


def _lookup_weights(c: Case, W: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(attention weights (T, T) of the hand-built lookup over the case's sequence, and the (T, T)
    boolean matrix of the key each query must read: j holds the target type of token i)."""
    targets, seq = c.args[0], _sequence(c)
    A, _out = problem20.view(W, seq)
    return A, seq[None, :] == np.asarray(targets)[seq][:, None]


def _lookup_misreads(c: Case, W: tuple[np.ndarray, ...], rtol: float) -> Finding | None:
    """Finding when some token does not put all its attention (to within ``rtol``) on a position
    holding the type it targets: the lookup must happen through the weights, not be stored in W_V."""
    A, wanted = _lookup_weights(c, W)
    on_target = np.where(wanted, A, 0.0).sum(axis=1)
    if not (np.isfinite(A).all() and (on_target >= 1 - rtol).all()):
        i = int(np.argmin(np.where(np.isfinite(on_target), on_target, -1)))
        share = "none" if on_target[i] < 0.005 else f"only {on_target[i]:.0%}"
        return Finding.mistake(_LOOKUP_IN_W_V, f"the token at position {i} puts {share} of its attention on the "
                                               f"token it must look up: {_LOOKUP_IN_W_V}")
    return None


def _right_key_wins(c: Case, W: tuple[np.ndarray, ...]) -> bool:
    """Whether every token gives a position holding its target a larger weight than any other."""
    A, wanted = _lookup_weights(c, W)
    if not np.isfinite(A).all():
        return False
    return bool((np.where(wanted, A, 0.0).max(axis=1) > np.where(wanted, -1.0, A).max(axis=1)).all())


def _lookup_verify(exercise: Exercise, cases: list[Case], outcomes: list[Outcome]) -> Finding | None:
    """Each case's outputs are its truth (:func:`_lookup_truth`) to within float32 error, through the weights."""
    for case, out in zip(cases, outcomes, strict=True):
        targets, values, _beta = case.args
        if len(out.values) != 3:
            return Finding(count_message(exercise, out.values, 3), Kind.WRONG_COUNT)
        if (bad := problem20.shape_problem(out.values, len(targets), np.shape(values)[1])) is not None:
            return bad
        want = _lookup_truth(case)
        rtol, atol = tolerance(_lookup_truth, case, want)
        _A, got = problem20.view(out.values, _sequence(case))
        if not close(got, want[0], rtol, atol):
            err = largest_error(got, want[0])
            if not _right_key_wins(case, out.values):
                return Finding.mistake(_WRONG_TARGET)
            if _lookup_misreads(case, out.values, rtol) is not None:  # the right key wins, by too little
                return Finding.mistake(_NOT_SATURATED, f"not exact (largest error {err:.2g}): the right key "
                                                       f"must win by a margin that grows with beta, so the softmax "
                                                       f"saturates")
            if (found := exercise.identified(case, got, want[0], rtol, atol)) is not None:  # rounded, negated, ...
                return found
            return Finding.mistake(_W_V_NOT_VALUES, f"{_W_V_NOT_VALUES} (largest error {err:.2g})")
        if (wrong := _lookup_misreads(case, out.values, rtol)) is not None:
            return wrong
    return None


def _attention_variant(Q, K, V, mask=None, *, scale=True, axis=-1, mask_after: str | None = None,
                       ignore_mask=False):
    """Attention with one classic slip (for the named mistakes of ``attention``).

    ``mask_after`` applies the mask to the weights instead of the scores: ``"multiply"`` zeroes the
    forbidden weights (``A * (mask == 0)``), ``"add"`` adds it (``softmax(S) + mask``).
    Shapes: (T_q, d_k), (T_k, d_k), (T_k, d_v), optional (T_q, T_k) -> (T_q, d_v).
    """
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ K.T / (np.sqrt(Q.shape[-1]) if scale else 1.0)  # (T_q, T_k)
    with np.errstate(all="ignore"):
        if mask is not None and not ignore_mask and mask_after is None:
            S = S + mask
        if mask is not None and not ignore_mask and mask_after == "scores-times":
            S = S * mask
        if mask_after == "scores-times":  # +inf scores: the softmax a student writes gives NaN there
            top = np.max(S, axis=axis, keepdims=True)
            E = np.exp(S - np.where(np.isfinite(top), top, 0.0))
            A = E / E.sum(axis=axis, keepdims=True)
        else:
            A = numerics.softmax(np.where(np.isnan(S), -np.inf, S), axis=axis)
        if mask is not None and not ignore_mask and mask_after == "multiply":
            A = A * np.where(np.isneginf(mask), 0.0, 1.0)
        if mask is not None and not ignore_mask and mask_after == "add":
            A = A + np.asarray(mask, dtype=float)
        return A @ V  # (T_q, d_v)


def _qkv_cases(rng, T_q=3, T_k=5, d_k=4, d_v=2, mask=None):
    return Case((rand(rng, T_q, d_k), rand(rng, T_k, d_k), rand(rng, T_k, d_v)), {} if mask is None else {"mask": mask})


def _stable(S):
    return np.exp(S - np.max(S))


def _misfit(shapes: np.ndarray) -> str | None:
    """How the five shapes (rows: Q, K, V, Q Kᵀ, output) fail to fit together, or ``None``: Q, K, V,
    Q Kᵀ and the output have one row per token, Q Kᵀ is square, K has Q's width and the output V's.
    Facts of the lecture, not the answer: no T, d_k or d_v is known here."""
    (q, k, v, s, o) = (tuple(r) for r in shapes.astype(int))
    if len({q[0], k[0], v[0], s[0], o[0]}) > 1:
        return "Q, K, V, Q Kᵀ and the output must all have one row per token (the same number of rows)"
    if s[1] != s[0]:
        return "Q Kᵀ compares every query with every key: it is square"
    if k[1] != q[1]:
        return "K must have as many columns as Q (d_k), or Q Kᵀ is not defined"
    if o[1] != v[1]:
        return "the output A V has as many columns as V (d_v)"
    return None


def _shapes_fit(outcomes: list[Outcome]) -> Finding | None:
    """The public check of ``shape_answers``, which the package can decide without the answer
    (it must not hold it, not even as a digest): a (5, 2) array of positive whole numbers whose
    rows fit together (:func:`_misfit`); a transposed answer is named. The values are judged by
    the hidden check, when graded."""
    got = outcomes[0].values
    assert got is not None, "verify sees only calls that returned numbers"
    if len(got) != 1:
        return Finding(count_message(SHAPE_ANSWERS, got, 1), Kind.WRONG_COUNT)
    a = got[0]
    if a.shape != (5, 2):
        return Finding(f"expected a (5, 2) array (one row per matrix: rows, columns), got shape {a.shape}",
                       Kind.WRONG_SHAPE)
    if not (np.isfinite(a).all() and (a == np.round(a)).all() and (a >= 1).all()):
        return Finding("every entry is a number of rows or columns: a whole number of at least 1", Kind.WRONG_VALUES)
    if (why := _misfit(a)) is None:
        return None
    return Finding.mistake(_ROWS_COLUMNS) if _misfit(a[:, ::-1]) is None else Finding(why, Kind.WRONG_VALUES)


# --- the records, in the order of the notebooks ------------------------------------------------
EMBED = Exercise("embed", text.embed, exact=True, mistakes=[
    Mistake(lambda E, ids: np.asarray(E).T[np.asarray(ids)], "looked up columns of E: rows are the token types", id="columns-of-E"),
    Mistake(lambda E, ids: np.asarray(E)[: len(ids)], "took the first len(ids) rows of E instead of the rows named by ids", id="first-rows"),
])
EMBED.check("lookup", "X stacks the rows of E named by ids",
            lambda rng: [Case((rand(rng, 5, 6), np.array([4, 0, 4, 2])))])
EMBED.check("length-one", "a vocabulary of width 1, and a single id (no axis of length 1 may be dropped)",
            lambda rng: [Case((rand(rng, 4, 1), np.array([3, 1]))), Case((rand(rng, 3, 2), np.array([2])))])

PROJECT = Exercise("project", lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_V), returns=("Q", "K", "V"), mistakes=[
    Mistake(lambda X, W_Q, W_K, W_V: tuple(np.asarray(w).T @ np.asarray(X).T for w in (W_Q, W_K, W_V)),
            "returned the transposes: Q = X W_Q has one row per token", id="transposes"),
])
PROJECT.check("shapes", "Q, K, V = X W_Q, X W_K, X W_V",
              lambda rng: [Case((rand(rng, 5, 6), rand(rng, 6, 3), rand(rng, 6, 3), rand(rng, 6, 2)))])

_ROWS_COLUMNS = "each shape is (rows, columns): Q has one row per token"
SHAPE_ANSWERS = Exercise("shape_answers", lecture_shapes, exact=True, mistakes=[
    Mistake(lambda: lecture_shapes()[:, ::-1], _ROWS_COLUMNS, id="columns-rows"),
])
SHAPE_ANSWERS.check("lecture", "five shapes that fit together (their values are checked only when graded: the "
                    "package does not hold the answer)", lambda rng: [Case(())],
                    verify=lambda cases, outcomes: _shapes_fit(outcomes))

SOFTMAX = Exercise("softmax", numerics.softmax, extra=_softmax_extra,
                   diagnoses={"overflow": _OVERFLOW, "all-masked": _ALL_MASKED, "underflow": _UNDERFLOW,
                              "not-normalised": _NOT_NORMALISED, "clipped-scores": _CLIPPED}, contract=_softmax_contract, mistakes=[
    Mistake(lambda S, axis=-1: numerics.softmax(S, axis=0),
            "normalised along axis 0 (down the columns): normalise each row, along the given axis", id="axis-0"),
    Mistake(lambda S, axis=-1: _stable(S) / _stable(S).sum(),
            "normalised over the whole array: weights must sum to 1 along the given axis only", id="whole-array"),
    Mistake(lambda S, axis=-1: np.exp(S), "forgot to divide by the sum: weights must sum to 1 along the axis", id="no-division"),
    Mistake(lambda S, axis=-1: S, "returned the scores unchanged", id="scores-unchanged"),
])
# the second case holds the −∞ scores attention gives softmax under a causal mask: the public cases of a
# function cover every kind of input the public cases of a function calling it pass to it
# (tests/test_dependency_inputs_covered.py), so a softmax wrong there fails here, not only in attention
SOFTMAX.check("rows-sum-to-one", "each row is a distribution",
              lambda rng: [Case((rand(rng, 3, 5),)), Case((rand(rng, 4, 4) + numerics.causal_mask(4),))])
SOFTMAX.check("large-scores", "large scores do not overflow",
              lambda rng: [Case((np.array([[1000.0, 999.0, 0.0], [-1000.0, -1001.0, -1002.0]]),))])
SOFTMAX.check("axis", "the axis argument is respected",
              lambda rng: [Case((rand(rng, 4, 3),), {"axis": 0}), Case((rand(rng, 2, 3, 4),), {"axis": 1})])
SOFTMAX.check("extreme", "scores of ±3·10⁴: no clipping, subtract the row maximum",
              lambda rng: [Case((np.array([[3e4, -3e4, 0.0], [-3e4, 2.0 - 3e4, 1.0 - 3e4]]),))])
SOFTMAX.check("masked-float32", "float32 scores with -inf entries (weight exactly 0), and a single row",
              lambda rng: [Case((np.where(np.eye(3, 4) > 0, -np.inf, rand(rng, 3, 4)).astype(np.float32),)),
                           Case((rand(rng, 1, 4, scale=2, dtype=np.float32),))])

SCALED_SCORES = Exercise("scaled_scores", numerics.scaled_scores, contract=_scaled_scores_contract, mistakes=[
    Mistake(lambda Q, K: Q @ K.T, "missing the 1/√d_k scaling of the scores", id="no-scaling"),
    Mistake(lambda Q, K: Q @ K.T / Q.shape[1], "divided by d_k: the scaling is 1/√d_k", id="divided-by-d_k"),
    Mistake(lambda Q, K: K @ Q.T / np.sqrt(Q.shape[1]),
            "transposed: scores have shape (T_q, T_k), one row per query (Q Kᵀ, not K Qᵀ)", id="transposed"),
    Mistake(lambda Q, K: Q @ K.T / np.sqrt(K.shape[0]), "scaled by √T_k: the scaling is 1/√d_k", id="scaled-by-T_k"),
    Mistake(lambda Q, K: Q @ K.T / Q.shape[1] ** 1 / 2,
            "divided by d_k/2: in Python d_k ** 1/2 is (d_k ** 1) / 2; write d_k ** 0.5 or np.sqrt(d_k)", id="power-one-half"),
])
SCALED_SCORES.check("shape-and-scale", "Q Kᵀ / √d_k with T_q ≠ T_k",
                    lambda rng: [Case((rand(rng, 3, 4), rand(rng, 5, 4)))])
SCALED_SCORES.check("one-query-float32", "a single query, float32 inputs; then a single key",
                    lambda rng: [Case((rand(rng, 1, 4, dtype=np.float32), rand(rng, 3, 4, dtype=np.float32))),
                                 Case((rand(rng, 2, 3), rand(rng, 1, 3)))])

ATTENTION = Exercise("attention", numerics.attention, depends=(SOFTMAX, SCALED_SCORES), extra=_attention_extra,
                     diagnoses={"output-overflow": _OUTPUT_OVERFLOW, "output-nan": _OUTPUT_NAN}, mistakes=[
    Mistake(lambda Q, K, V, mask=None: _attention_variant(Q, K, V, mask, scale=False),
            "missing the 1/√d_k scaling of the scores", id="no-scaling"),
    Mistake(lambda Q, K, V, mask=None: _attention_variant(Q, K, V, mask, axis=0),
            "softmax taken over the queries (axis 0): each query's weights over the keys must sum to 1", id="softmax-over-queries"),
    Mistake(lambda Q, K, V, mask=None: _attention_variant(Q, K, V, mask, mask_after="multiply"),
            "mask applied after softmax: rows no longer sum to 1; add the mask to the scores", id="mask-after-softmax"),
    Mistake(lambda Q, K, V, mask=None: _attention_variant(Q, K, V, mask, mask_after="add"),
            "mask applied after softmax (softmax(S) + mask): -inf in the weights makes the output NaN; add the "
            "mask to the scores, before the softmax", id="mask-added-to-weights"),
    Mistake(lambda Q, K, V, mask=None: _attention_variant(Q, K, V, mask, mask_after="scores-times"),
            "multiplied the scores by the mask: the mask is additive (0 keeps, -inf forbids), add it to the scores", id="multiplicative-mask"),
    Mistake(lambda Q, K, V, mask=None: _attention_variant(Q, K, V, mask, ignore_mask=True),
            "the mask was ignored: add it to the scores before the softmax", id="mask-ignored"),
])
ATTENTION.check("no-mask", "softmax(Q Kᵀ/√d_k) V for T_q ≠ T_k", lambda rng: [_qkv_cases(rng)])
ATTENTION.check("causal-mask", "an additive causal mask", lambda rng: [_qkv_cases(rng, 4, 4, 3, 2, numerics.causal_mask(4))])


def _large_scores(rng) -> Case:
    """(3, 4), (5, 4), (5, 2): scores of about 800 (a shared last coordinate of 40 adds 1600 / √4 to
    each), so exp overflows unless the row maximum is subtracted; one query's scores still differ as
    usual."""
    case = _qkv_cases(rng)
    case.args[0][:, -1] = case.args[1][:, -1] = 40.0
    return case


ATTENTION.check("large-scores", "scores of several hundred do not overflow", lambda rng: [_large_scores(rng)])
ATTENTION.check("one-query-float32", "a single query, float32 inputs; then a single key",
                lambda rng: [Case((rand(rng, 1, 3, dtype=np.float32), rand(rng, 4, 3, dtype=np.float32),
                                   rand(rng, 4, 2, dtype=np.float32))),
                             Case((rand(rng, 2, 3), rand(rng, 1, 3), rand(rng, 1, 2)))])


def _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, *, split="blocks", full_width=False, project=True,
                        merge="blocks"):
    """Multi-head attention with one or two classic slips (for the named mistakes of ``multi_head_attention``).

    ``split``: ``"blocks"`` gives head ``j`` columns ``j d_k .. (j + 1) d_k - 1`` (right); ``"tokens"``
    reshapes ``X W`` of shape (T, d) straight to (h, T, d_k), cutting the tokens instead of the width;
    ``"interleaved"`` deals the columns out in turn (head ``j`` gets columns ``j, j + h, ...``).
    ``full_width`` scales the scores by 1/√d (the full width) instead of each head's 1/√d_k.
    ``project=False`` returns the concatenated heads without ``W_O``. ``merge``: ``"blocks"`` puts the
    heads side by side (right); ``"tokens"`` reshapes (h, T, d_v) straight to (T, h d_v);
    ``"interleaved"`` orders the columns width first, head second.
    Shapes: (T, d), (d, d), (d, d), (d, h d_v), (h d_v, d), int -> (T, d).
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape

    def cut(M):  # (T, width) -> (h, T, width / h)
        if split == "tokens":
            return M.reshape(h, T, -1)
        if split == "interleaved":
            return M.reshape(T, -1, h).transpose(2, 0, 1)
        return heads.split_heads(M, h)

    Q, K, V = (cut(X @ np.asarray(W, dtype=float)) for W in (W_Q, W_K, W_V))
    if full_width:  # the package's attention divides by √d_k: a query √(d_k / d) as long divides by √d
        Q = Q * np.sqrt(Q.shape[-1] / d)
    H = numerics.attention(Q, K, V)  # (h, T, d_v)
    if merge == "tokens":
        concat = H.reshape(T, -1)
    elif merge == "interleaved":
        concat = H.transpose(1, 2, 0).reshape(T, -1)
    else:
        concat = heads.merge_heads(H)
    return concat @ np.asarray(W_O, dtype=float) if project else concat


def heads_case(rng, T: int, d_k: int, d_v: int, h: int, dtype=np.float64) -> Case:
    """X (T, d), W_Q and W_K (d, d), W_V (d, h d_v), W_O (h d_v, d) and h, for d = h d_k; the
    weights scaled by 1/√(fan-in), so the scores stay near 1 and no softmax saturates."""
    d = h * d_k
    return Case((rand(rng, T, d, dtype=dtype), rand(rng, d, d, scale=d**-0.5, dtype=dtype),
                 rand(rng, d, d, scale=d**-0.5, dtype=dtype), rand(rng, d, h * d_v, scale=d**-0.5, dtype=dtype),
                 rand(rng, h * d_v, d, scale=(h * d_v)**-0.5, dtype=dtype), h))


_SPLIT_HINT = ("head r, counting from 1, takes columns (r−1)·d_k to r·d_k − 1 of X W_Q (reshape to (T, h, d_k), then "
               "move the head axis first)")
_MERGE_HINT = ("head r's output must fill columns (r−1)·d_v to r·d_v − 1 of the concatenation, head 1 first "
               "(np.concatenate(heads, axis=1), or move the head axis after the tokens before reshaping)")
MULTI_HEAD_ATTENTION = Exercise("multi_head_attention", heads.multi_head_attention,
                                depends=(SOFTMAX, SCALED_SCORES, ATTENTION), mistakes=[
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, split="tokens", merge="tokens"),
            "split and merged with reshape alone: (T, d) reshaped straight to (h, T, d_k) cuts the tokens, not the "
            f"width; {_SPLIT_HINT}, and merge back the same way", id="reshape-only"),
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, split="tokens"),
            f"heads split along the wrong axis: (T, d) reshaped straight to (h, T, d_k) cuts the tokens, not the width; "
            f"{_SPLIT_HINT}", id="split-tokens"),
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, split="interleaved"),
            f"heads split along the wrong axis: each head took every h-th column; {_SPLIT_HINT}",
            id="split-interleaved"),
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, full_width=True),
            "scores scaled by 1/√d of the full width: each head scales by its own width, 1/√d_k with d_k = d/h",
            id="full-width-scaling"),
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, project=False),
            "missing the output projection: multiply the concatenated heads by W_O", id="no-output-projection"),
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, merge="tokens"),
            "heads merged in the wrong order: (h, T, d_v) reshaped straight to (T, h·d_v) mixes the rows of "
            f"different tokens; {_MERGE_HINT}", id="merge-tokens"),
    Mistake(lambda X, W_Q, W_K, W_V, W_O, h: _multi_head_variant(X, W_Q, W_K, W_V, W_O, h, merge="interleaved"),
            f"heads merged in the wrong order: their columns were interleaved; {_MERGE_HINT}", id="merge-interleaved"),
])
MULTI_HEAD_ATTENTION.check("two-heads", "two heads of width d_k = 3 (d = 6) over four tokens",
                           lambda rng: [heads_case(rng, T=4, d_k=3, d_v=3, h=2)])
MULTI_HEAD_ATTENTION.check("value-width", "two heads whose values are wider than their queries (d_k = 2, d_v = 3)",
                           lambda rng: [heads_case(rng, T=3, d_k=2, d_v=3, h=2)])
MULTI_HEAD_ATTENTION.check("float32-and-one-token", "float32 inputs, then one token through one head of values of width 1",
                           lambda rng: [heads_case(rng, T=3, d_k=2, d_v=2, h=2, dtype=np.float32),
                                        heads_case(rng, T=1, d_k=2, d_v=1, h=1)])


def _dots(q, k):
    return np.sum(np.asarray(q) * np.asarray(k), axis=1)  # (T,): q_i · k_i


SCORE_STDS = Exercise("score_stds", score_stds, returns=("the std of q·k", "the std of q·k/√d_k"), mistakes=[
    Mistake(lambda q, k: (_dots(q, k).std(), (_dots(q, k) / q.shape[1]).std()),
            "the second value divides by d_k: the scaled score is q·k/√d_k", id="divided-by-d_k"),
    Mistake(lambda q, k: ((_dots(q, k) / np.sqrt(q.shape[1])).std(), _dots(q, k).std()),
            "the two values are swapped: first the std of q·k, then the std of q·k/√d_k", id="swapped"),
    Mistake(lambda q, k: (_dots(q, k).var(), (_dots(q, k) / np.sqrt(q.shape[1])).var()),
            "returned variances: take the standard deviation (.std()), the square root of the variance", id="variances"),
    Mistake(lambda q, k: (_dots(q, k).std(ddof=1), (_dots(q, k) / np.sqrt(q.shape[1])).std(ddof=1)),
            "divides by n-1 (ddof=1, the sample standard deviation): the values are the right ones times "
            "√(n/(n-1)); use the population std, .std() with NumPy's default ddof=0", id="ddof-1"),
    Mistake(lambda q, k: ((q @ k.T).std(), (q @ k.T / np.sqrt(q.shape[1])).std()),
            "used every pair q_i·k_j (q @ k.T): the scores pair row i of q with row i of k only, (q * k).sum(axis=1)",
            id="all-pairs"),
])
SCORE_STDS.check("small", "standard deviations of q·k and q·k/√d_k",
                 lambda rng: [Case((rand(rng, 200, 16), rand(rng, 200, 16)))])
SCORE_STDS.check("width-one", "vectors of width d_k = 1", lambda rng: [Case((rand(rng, 100, 1), rand(rng, 100, 1)))])

SOFTMAX_JACOBIAN = Exercise("softmax_jacobian", numerics.softmax_jacobian, mistakes=[
    Mistake(lambda a: -np.outer(a, a), "missing the diagonal term a_j·1[j = l]", id="no-diagonal-term"),
    Mistake(lambda a: np.diag(a * (1 - a)), "only the diagonal: off-diagonal entries are -a_j a_l", id="diagonal-only"),
    Mistake(lambda a: np.outer(a, a) - np.diag(a), "sign flipped: J = diag(a) - a aᵀ", id="sign-flipped"),
    Mistake(lambda a: np.diag(a) - np.asarray(a) @ np.asarray(a),
            "a @ a is a number (the dot product a·a), not the outer product a aᵀ: use np.outer(a, a)", id="dot-for-outer"),
    Mistake(lambda a: np.diag(a) - np.asarray(a) * np.asarray(a).T,
            "a * a.T is a² entry by entry (.T does nothing to a 1-D array), not the outer product a aᵀ: use "
            "np.outer(a, a) or a[:, None] * a", id="elementwise-for-outer"),
])
SOFTMAX_JACOBIAN.check("small", "the Jacobian of a softmax over three scores",
                       lambda rng: [Case((numerics.softmax(np.array([1.0, 2.0, 0.5])),))])
SOFTMAX_JACOBIAN.check("one-score", "a softmax over a single score", lambda rng: [Case((np.array([1.0]),))])

# Building the (T, T) Jacobian and multiplying is right in value, so no check can name it without a
# memory or time budget, and such a budget would make a verdict depend on the machine: the hints
# steer away from it instead. "J transposed" is no mistake here either: the softmax's J is symmetric.
SOFTMAX_VJP = Exercise("softmax_vjp", training.softmax_vjp, mistakes=[
    Mistake(lambda a, g: -a * np.dot(a, g), "missing the diagonal term: Jᵀg = a * (g - a·g), not -a (a·g)", id="no-diagonal-term"),
    Mistake(lambda a, g: a * (np.dot(a, g) - g), "sign flipped: Jᵀg = a * (g - a·g), not a * (a·g - g)", id="sign-flipped"),
    Mistake(lambda a, g: g - np.dot(a, g), "missing the factor a: multiply (g - a·g) by the weights, entry by entry", id="no-factor-a"),
    Mistake(lambda a, g: a * (1 - a) * g, "only the diagonal of J: the off-diagonal entries -a_j a_l contribute too", id="diagonal-only"),
    Mistake(lambda a, g: a * (g - np.sum(g)),
            "sum(g) is not the dot product a·g: weight each g_l by a_l, np.dot(a, g) or (a * g).sum()", id="sum-for-dot"),
    Mistake(lambda a, g: a * (g - np.mean(g)),
            "mean(g) is not the dot product a·g: weight each g_l by a_l, np.dot(a, g) or (a * g).sum()", id="mean-for-dot"),
])
SOFTMAX_VJP.check("small", "Jᵀg for a softmax over three scores",
                  lambda rng: [Case((numerics.softmax(np.array([1.0, 2.0, 0.5])), np.array([1.0, -2.0, 0.5])))])

PERMUTATION_MATRIX = Exercise("permutation_matrix", lambda perm: np.eye(len(perm))[np.asarray(perm)], exact=True, mistakes=[
    Mistake(lambda perm: np.eye(len(perm))[np.asarray(perm)].T,
            "this is the inverse permutation (the transpose): row i of P X must be X[perm[i]]", id="inverse"),
])
PERMUTATION_MATRIX.check("small", "(P X)[i] = X[perm[i]]", lambda rng: [Case(([2, 0, 1],))])
PERMUTATION_MATRIX.check("one", "a permutation of a single item", lambda rng: [Case(([0],))])

_MULTIPLICATIVE = "multiplicative 0/1 mask: the mask is additive, 0 to keep and -inf to forbid"
CAUSAL_MASK = Exercise("causal_mask", numerics.causal_mask, exact=True, extra=_mask_extra, diagnoses={"mask-nan": _MASK_NAN},
                       mistakes=[
    Mistake(lambda T: np.where(np.triu(np.ones((T, T)), 0) > 0, -np.inf, 0.0),
            "off by one: the diagonal is masked, but a token may attend to itself", id="off-by-one"),
    Mistake(lambda T: np.where(np.tril(np.ones((T, T)), -1) > 0, -np.inf, 0.0),
            "masked below the diagonal: token i may read j ≤ i, so -inf goes above the diagonal", id="below-diagonal"),
    Mistake(lambda T: np.tril(np.ones((T, T))), _MULTIPLICATIVE, id="multiplicative-mask"),
])
CAUSAL_MASK.check("T4", "the causal mask for T = 4", lambda rng: [Case((4,))])
CAUSAL_MASK.check("T1", "the causal mask for T = 1", lambda rng: [Case((1,))])

PADDING_MASK = Exercise("padding_mask", numerics.padding_mask, exact=True, extra=_mask_extra, diagnoses={"mask-nan": _MASK_NAN},
                        mistakes=[
    Mistake(lambda lengths, T: np.where(np.arange(T)[None, :] <= np.asarray(lengths)[:, None], 0.0, -np.inf),
            "off by one: position j = lengths[b] is already padding", id="off-by-one"),
    Mistake(lambda lengths, T: (np.arange(T)[None, :] < np.asarray(lengths)[:, None]).astype(float), _MULTIPLICATIVE, id="multiplicative-mask"),
    Mistake(lambda lengths, T: numerics.padding_mask(lengths, T).T, "transposed: the mask has shape (B, T)", id="transposed"),
])
PADDING_MASK.check("small", "the padding mask for three sequences of lengths 2, 4, 1", lambda rng: [Case(([2, 4, 1], 4))])

ATTENTION_FLOPS = Exercise("attention_flops", cost.attention_flops, exact=True, mistakes=[
    # 2 T² d is both slips (one product at 2 FLOPs per multiply-add, or both at 1): the message names both
    Mistake(lambda T, d: 2 * T**2 * d,
            "half the FLOPs: a multiply-add counted as one FLOP (it is 2, a multiply and an add), or only one of "
            "the two products Q Kᵀ and A V counted", id="half"),
    Mistake(lambda T, d: 2 * T**2 * d / 2,
            "a quarter of the FLOPs: a multiply-add counts as 2 FLOPs, and both products Q Kᵀ and A V count", id="quarter"),
    Mistake(lambda T, d: 4 * T * d**2, "T and d swapped: the score matrix is T×T", id="T-d-swapped"),
    Mistake(lambda T, d: 2 * T**2 * (2 * d - 1),
            "off by 2T²: you counted d-1 additions per dot product of length d; the course counts d multiply-adds, "
            "2d FLOPs", id="d-minus-1-adds"),
    Mistake(lambda T, d: 4 * T**2 * d + T**2,
            "off by T²: you counted the scaling or the softmax too; count only the two products Q Kᵀ and A V",
            id="counted-scaling"),
    Mistake(lambda T, d: 4 * T ^ 2 * d, "T ^ 2 is not a power in Python (^ is bitwise xor): write T**2", id="xor-for-power"),
])
ATTENTION_FLOPS.check("lecture", "the FLOPs of Q Kᵀ and A V for the lecture's T = 10, d = 512", lambda rng: [Case((10, 512))])
ATTENTION_FLOPS.check("gpt3", "GPT-3's T = 2048, d = 12288 (a count beyond 32-bit integers)",
                      lambda rng: [Case((2048, 12288))])

CROSSOVER_LENGTH = Exercise("crossover_length", cost.crossover_length, exact=True, mistakes=[
    Mistake(lambda d: 24 * d / 2, "solve 4 T² d = 24 T d² for T", id="unsolved"),
    Mistake(lambda d: 6 * d**2, "T = 6 d, not 6 d²: divide both sides by 4 T d", id="6-d-squared"),
])
CROSSOVER_LENGTH.check("lecture", "the crossover lengths at the lecture's two widths", lambda rng: [Case((4096,)), Case((8192,))])
CROSSOVER_LENGTH.check("gpt3", "the crossover length at GPT-3's width d = 12288", lambda rng: [Case((12288,))])

# no reference here: the package students install must not hold Problem 20's answer
LOOKUP_TABLE_WEIGHTS = Exercise("lookup_table_weights", None, returns=("W_Q", "W_K", "W_V"), verifier=_lookup_verify,
                                diagnoses={"not-saturated": _NOT_SATURATED, "wrong-target": _WRONG_TARGET,
                                           "w_v-not-values": _W_V_NOT_VALUES, "lookup-in-w_v": _LOOKUP_IN_W_V})
LOOKUP_TABLE_WEIGHTS.check("permutation", "an exact lookup table at beta = 1000",
                           lambda rng: [Case(([2, 0, 1], rand(rng, 3, 2), 1000.0), meta={"sequence": [1, 2, 0]})])
LOOKUP_TABLE_WEIGHTS.check("repeated-targets", "four types, two of them targeting the same type, at beta = 1000",
                           lambda rng: [Case(([3, 0, 3, 1], rand(rng, 4, 3), 1000.0), meta={"sequence": [2, 0, 3, 1]})])
LOOKUP_TABLE_WEIGHTS.check("length-one", "values of width 1, and a single type, at beta = 1000",
                           lambda rng: [Case(([1, 0], rand(rng, 2, 1), 1000.0), meta={"sequence": [0, 1]}),
                                        Case(([0], rand(rng, 1, 2), 1000.0))])

#: Every graded exercise by function name.
EXERCISES: dict[str, Exercise] = {e.function: e for e in (
    EMBED, PROJECT, SHAPE_ANSWERS, SOFTMAX, SCALED_SCORES, ATTENTION, MULTI_HEAD_ATTENTION, SCORE_STDS, SOFTMAX_JACOBIAN, SOFTMAX_VJP,
    PERMUTATION_MATRIX, CAUSAL_MASK, PADDING_MASK, ATTENTION_FLOPS, CROSSOVER_LENGTH, LOOKUP_TABLE_WEIGHTS)}


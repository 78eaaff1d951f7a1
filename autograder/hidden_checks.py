"""Hidden checks: thorough cases the students never see (random shapes with T_q != T_k,
extreme scores, masks, float32 inputs). Every check draws its inputs from the generator it is given,
which grading seeds from the submission's code, so changed code meets new inputs.

Keep this file out of anything published to students: only `notebooks/` and `selfattn`
are theirs. Importing it attaches the checks to the exercises' records
(:mod:`selfattn.checks.exercises`), so each decides with its exercise's reference and mistakes.
"""

from __future__ import annotations

import numpy as np

from selfattn import numerics
from selfattn.checks.calling import Case
from selfattn.checks.exercises import (
    ATTENTION,
    ATTENTION_FLOPS,
    CAUSAL_MASK,
    CROSSOVER_LENGTH,
    EMBED,
    LOOKUP_TABLE_WEIGHTS,
    MULTI_HEAD_ATTENTION,
    PADDING_MASK,
    PERMUTATION_MATRIX,
    PROJECT,
    SCALED_SCORES,
    SCORE_STDS,
    SHAPE_ANSWERS,
    SOFTMAX,
    SOFTMAX_JACOBIAN,
    SOFTMAX_VJP,
    heads_case,
)
from selfattn.checks.record import rand


def _shapes(rng, n=3):
    """n pairs (T_q, d_k) for scores against T_k = T_q + 2 keys. The first has d_k >= 2 and
    T_k not in (d_k, d_k²), so 1/√d_k is never 1 and dividing by √T_k is not the same as dividing by
    √d_k or by d_k: every named mistake shows, under its own name."""
    d = int(rng.integers(2, 7))
    t = int(rng.choice([t for t in range(1, 7) if t + 2 not in (d, d * d)]))
    return [(t, d)] + [(int(rng.integers(1, 7)), int(rng.integers(1, 7))) for _ in range(n - 1)]


def _mask_keep_one(rng, T_q, T_k, fill=-np.inf):
    """(T_q, T_k) additive mask in which every row keeps a key and every key is kept by a row (a
    softmax over the wrong axis then meets no slice that is entirely -inf, and is named as such);
    when T_q > 1 and T_k > 1, row 0 forbids a key (so ignoring the mask, or applying it late,
    always shows) and the last row keeps every key (so a mask used the wrong way leaves a row of
    numbers beside its NaN, and is named)."""
    keep = rng.random((T_q, T_k)) < 0.6
    keep[np.arange(T_q), rng.integers(0, T_k, T_q)] = True
    keep[rng.integers(0, T_q, T_k), np.arange(T_k)] = True
    if T_q > 1 and T_k > 1:
        j = int(rng.integers(0, T_k))
        keep[0, j] = False
        keep[0, (j + 1 + int(rng.integers(0, T_k - 1))) % T_k] = True
        keep[-1] = True
    return np.where(keep, 0.0, fill)


def _cycle(rng, n: int) -> list[int]:
    """A random permutation of n items that is one n-cycle: for n >= 3 it is not its own inverse,
    so a transposed or inverted answer always differs."""
    order = rng.permutation(n)
    perm = np.empty(n, dtype=int)
    perm[order] = np.roll(order, -1)
    return [int(x) for x in perm]


def _repeated(rng, m: int) -> list[int]:
    """m random targets among m types of which at least two are equal (so no permutation of the
    types fits them: an answer that inverts the targets fails)."""
    t = rng.integers(0, m, m)
    i, j = rng.choice(m, 2, replace=False)
    t[j] = t[i]
    return [int(x) for x in t]


def _attn_cases(rng, dtype=np.float64, large=False, mask=None):
    """Three (Q, K, V) cases with T_q != T_k. The first has T_q, T_k, d_k >= 2, so the scaling, the
    axis of the softmax and a mask all show in it. With ``large`` every score is about 800 (a shared
    last coordinate adds 800 to each): exp overflows unless the row maximum is subtracted, while the
    scores of one query still differ as usual (so 1/√d_k shows too)."""
    out = []
    for i in range(3):
        T_q, T_k, d_k, d_v = (int(x) for x in rng.integers(1, 7, 4))
        if i == 0:
            T_q, T_k, d_k = (int(x) for x in rng.integers(2, 7, 3))
        T_k = T_k if T_k != T_q else T_k + 1
        Q, K, V = rand(rng, T_q, d_k, dtype=dtype), rand(rng, T_k, d_k, dtype=dtype), rand(rng, T_k, d_v, dtype=dtype)
        if large:
            Q[:, -1] = K[:, -1] = np.sqrt(800 * np.sqrt(d_k))
        kw = {} if mask is None else {"mask": mask(rng, T_q, T_k)}
        out.append(Case((Q, K, V), kw))
    return out


def _heads_cases(rng, dtype=np.float64):
    """Three multi-head cases of random sizes. The first has T, h, d_k, d_v >= 2, so every named
    mistake shows in it (cutting the tokens needs T > 1 and h > 1; interleaving the columns needs
    d_k, d_v > 1; 1/√d needs h > 1); the others may have one head, one token or width 1."""
    out = [heads_case(rng, *(int(x) for x in rng.integers(2, 5, 4)), dtype=dtype)]
    out += [heads_case(rng, *(int(x) for x in rng.integers(1, 5, 4)), dtype=dtype) for _ in range(2)]
    return out


def _extreme_scores(rng) -> np.ndarray:
    """(2, 3) scores of about ±1e4: one row spread over ±big, one row of nearly equal huge negatives."""
    big = float(rng.uniform(5e3, 2e4))
    return np.array([[big, -big, 0.0], [-big, -big + 1, -big + 2]])[:, rng.permutation(3)]


EMBED.hidden("random", "random vocabularies and repeated ids",
    lambda rng: [Case((rand(rng, m, d), rng.integers(0, m, n))) for m, d, n in ((9, 4, 6), (1, 3, 2), (5, 1, 5))])
PROJECT.hidden("random", "random widths with d_k ≠ d_v",
    lambda rng: [Case((rand(rng, 4, 7), rand(rng, 7, 3), rand(rng, 7, 3), rand(rng, 7, 5)))])
SOFTMAX.hidden("random-shapes", "random shapes and axes",
    lambda rng: [Case((rand(rng, 2, 3, 4, scale=3),), {"axis": a}) for a in (0, 1, -1)])
SOFTMAX.hidden("minus-inf", "-inf scores get weight exactly 0",
    lambda rng: [Case((_mask_keep_one(rng, 3, 5) + rand(rng, 3, 5, scale=2),))])
SOFTMAX.hidden("extreme", "scores of ±1e4",
    lambda rng: [Case((_extreme_scores(rng),))])
SOFTMAX.hidden("float32", "float32 scores",
    lambda rng: [Case((rand(rng, 4, 6, scale=5, dtype=np.float32),))])
SCALED_SCORES.hidden("random", "random shapes with T_q ≠ T_k",
    lambda rng: [Case((rand(rng, tq, d), rand(rng, tq + 2, d))) for tq, d in _shapes(rng)])
SCALED_SCORES.hidden("float32", "float32 inputs",
    lambda rng: [Case((rand(rng, 3, 8, dtype=np.float32), rand(rng, 6, 8, dtype=np.float32)))])
ATTENTION.hidden("random", "random shapes, T_q ≠ T_k, d_k ≠ d_v",
    lambda rng: _attn_cases(rng))
ATTENTION.hidden("large-scores", "scores in the hundreds",
    lambda rng: _attn_cases(rng, large=True))
ATTENTION.hidden("random-masks", "random additive masks, every row keeping a key",
    lambda rng: _attn_cases(rng, mask=_mask_keep_one))
ATTENTION.hidden("float32", "float32 inputs",
    lambda rng: _attn_cases(rng, dtype=np.float32))
MULTI_HEAD_ATTENTION.hidden("random", "random numbers of heads, head widths, value widths and output widths",
    lambda rng: _heads_cases(rng))
MULTI_HEAD_ATTENTION.hidden("float32", "float32 inputs",
    lambda rng: _heads_cases(rng, dtype=np.float32))
# the wide case first: on it every named mistake differs from every other (at d_k = 1 a variance near 1
# can pass for a std divided by n-1, and the first case that fails names the mistake)
SCORE_STDS.hidden("random", "other widths",
    lambda rng: [Case((rand(rng, 300, d), rand(rng, 300, d))) for d in (64, 1)])
SOFTMAX_JACOBIAN.hidden("random", "random weight vectors, including nearly one-hot",
    lambda rng: [Case((numerics.softmax(rand(rng, n, scale=s)),)) for n, s in ((1, 1), (5, 1), (6, 30))])
# the spread-out draws come first: on nearly one-hot weights every answer is nearly 0
SOFTMAX_VJP.hidden("random", "random weights and upstream gradients, including nearly one-hot weights",
    lambda rng: [Case((numerics.softmax(rand(rng, n, scale=s)), rand(rng, n))) for n, s in ((5, 1), (8, 1), (6, 30))])
PERMUTATION_MATRIX.hidden("random", "random permutations",
    lambda rng: [Case((list(map(int, rng.permutation(n))),)) for n in (1, 8)] + [Case((_cycle(rng, 5),))])
CAUSAL_MASK.hidden("sizes", "T = 1 and a larger T",
    lambda rng: [Case((1,)), Case((int(rng.integers(6, 12)),))])
PADDING_MASK.hidden("random", "random lengths, including full and empty rows",
    lambda rng: [Case((list(map(int, rng.permutation([0, 5, int(rng.integers(1, 5))]))), 5)),
                 Case((list(map(int, rng.integers(1, 7, 4))), 6))])
ATTENTION_FLOPS.hidden("random", "other sizes",
    lambda rng: [Case((int(T), int(d))) for T, d in rng.integers(1, 5000, (3, 2))])
CROSSOVER_LENGTH.hidden("random", "other widths, one of them wider than any model of the lecture",
    lambda rng: [Case((int(d),)) for d in (1, rng.integers(2, 4096), 8192, rng.integers(16384, 32768))])
LOOKUP_TABLE_WEIGHTS.hidden("random", "random targets, repeated targets, several value widths",
    lambda rng: [Case((list(map(int, t)), rand(rng, len(t), dv), 1000.0), meta={"sequence": list(map(int, rng.permutation(len(t))))})
                 for t, dv in ((_cycle(rng, 6), 3), (_repeated(rng, 4), 1), ([0], 2))])
# the answer is a value: the student package cannot check it (it would hold it), so it is judged here
SHAPE_ANSWERS.hidden("values", "the shapes of the lecture's example", lambda rng: [Case(())])

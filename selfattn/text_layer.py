"""One causal attention layer trained on real text, character by character (chapter 10).

The text is the Zen of Python, the nineteen lines the standard library's ``this`` module holds,
lower-cased: a real text that ships with every Python. A window of ``T`` characters of types
``t_1 .. t_T`` goes through

    X = E[t] + E_pos                       # (T, d): character i's embedding plus position i's vector
    O = softmax(X W_Q (X W_K)ᵀ/√d + M) X W_V   # (T, d): one head, causal mask M, d_k = d_v = d
    logits = (X + O) W_U                   # (T, m): the character itself plus what it read
    L = mean_i -log softmax(logits_i)[t_{i+1}]

and every matrix (``E``, ``E_pos``, ``W_Q``, ``W_K``, ``W_V``, ``W_U``) is learned by Adam, with the backward
pass of :mod:`selfattn.training` for the head. The same layer with ``O`` left out
(``attend=False``) can only learn which character follows which: the baseline that shows what
reading the earlier characters adds. Every array carries a leading axis ``N``, one layer per seed.
"""

from __future__ import annotations

import codecs
import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from . import numerics
from .training import attention_backward, attention_forward

__all__ = [
    "FIRST",
    "SEEDS",
    "STEPS",
    "STRIDE",
    "WIDTH",
    "WINDOW",
    "Corpus",
    "TextExperiment",
    "layer_gradient_check",
    "layer_loss_and_grads",
    "own_word_share",
    "text_experiment",
    "train_layer",
    "word_starts",
    "zen",
]

Array = NDArray[np.floating]
Params = dict[str, Array]
NAMES = ("E", "E_pos", "W_Q", "W_K", "W_V", "W_U")


@cache
def zen() -> str:
    """The Zen of Python's nineteen lines, lower-cased, without its title line."""
    with contextlib.redirect_stdout(io.StringIO()):   # importing ``this`` prints the text once
        import this
    text = codecs.decode(this.s, "rot13")
    return text.split("\n\n", 1)[1].lower()


@dataclass(frozen=True)
class Corpus:
    """A text as character types and ids.

    Attributes
    ----------
    types : str
        The ``m`` distinct characters, sorted; type ``t`` is ``types[t]``.
    ids : ndarray of int, shape (n,)
        The text, one type per character.
    """

    types: str
    ids: NDArray[np.int_]

    @classmethod
    def from_text(cls, text: str) -> Corpus:
        types = "".join(sorted(set(text)))
        return cls(types, np.array([types.index(c) for c in text], dtype=int))

    def part(self, start: float, stop: float) -> Corpus:
        """The characters from fraction ``start`` to ``stop`` of the text, with the same types."""
        n = len(self.ids)
        return Corpus(self.types, self.ids[round(start * n):round(stop * n)])

    def windows(self, T: int, stride: int) -> tuple[NDArray[np.int_], NDArray[np.int_]]:
        """Windows of ``T`` characters every ``stride`` characters, and the character after each.

        Returns
        -------
        x, y : ndarray of int, shape (W, T)
            ``y[w, i]`` is the character that follows ``x[w, i]`` in the text.
        """
        starts = np.arange(0, len(self.ids) - T, stride)
        if starts.size == 0:
            raise ValueError(f"a text of {len(self.ids)} characters has no window of T={T} characters and a next one")
        at = starts[:, None] + np.arange(T)
        return self.ids[at], self.ids[at + 1]

    def separators(self) -> NDArray[np.int_]:
        """Types of the characters that end a word: space, newline and punctuation."""
        return np.array([t for t, c in enumerate(self.types) if not c.isalnum() and c != "'"], dtype=int)


def init_layer(m: int, d: int, T: int, seeds: Sequence[int]) -> Params:
    """One layer per seed: ``E`` (N, m, d) and ``E_pos`` (N, T, d) with entries of variance ``1/4``, the
    projections with entries of variance ``1/d``."""
    params: Params = {name: [] for name in NAMES}   # type: ignore[misc]
    for seed in seeds:
        rng = np.random.default_rng(seed)
        params["E"].append(rng.standard_normal((m, d)) / 2)
        params["E_pos"].append(rng.standard_normal((T, d)) / 2)
        for name in NAMES[2:-1]:
            params[name].append(rng.standard_normal((d, d)) / np.sqrt(d))
        params["W_U"].append(rng.standard_normal((d, m)) / np.sqrt(d))
    return {name: np.array(stack) for name, stack in params.items()}


def _per_seed(P: Array, W: Array) -> Array:
    """``P`` (N, B, T, a) times ``W`` (N, a, b), one product per seed: (N, B, T, b)."""
    N, B, T, a = P.shape
    return (P.reshape(N, B * T, a) @ W).reshape(N, B, T, W.shape[-1])


def _outer(P: Array, G: Array) -> Array:
    """``Σ_{b,i} P[n,b,i]ᵀ G[n,b,i]``: the gradient of a per-seed matrix, (N, a, c)."""
    N, B, T, a = P.shape
    return np.swapaxes(P.reshape(N, B * T, a), -1, -2) @ G.reshape(N, B * T, G.shape[-1])


def layer_loss_and_grads(params: Params, x: NDArray[np.int_], y: NDArray[np.int_],
                         attend: bool = True) -> tuple[Array, Params, Array]:
    """Loss, gradients and weights of every seed's layer on the windows ``x``.

    Parameters
    ----------
    params : dict of ndarray
        ``E`` (N, m, d), ``E_pos`` (N, T, d), ``W_Q``, ``W_K``, ``W_V`` (N, d, d), ``W_U`` (N, d, m).
    x, y : ndarray of int, shape (B, T)
        Windows and the character after each of their characters.
    attend : bool
        ``False`` leaves the head out: the logits are ``X W_U``.

    Returns
    -------
    loss : ndarray, shape (N,)
        Mean cross-entropy, in nats per character.
    grads : dict of ndarray
        One per parameter, of its shape (zero for the head's when ``attend=False``).
    A : ndarray, shape (N, B, T, T)
        The head's weights (zeros when ``attend=False``).
    """
    E, W_U = params["E"], params["W_U"]
    N, (B, T) = E.shape[0], x.shape
    X = E[:, x] + params["E_pos"][:, None]                 # (N, B, T, d)
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    A = np.zeros((N, B, T, T))
    H = X
    if attend:
        Q, K, V = (_per_seed(X, params[name]) for name in ("W_Q", "W_K", "W_V"))
        O, A = attention_forward(Q, K, V, numerics.causal_mask(T))
        H = X + O
    logits = _per_seed(H, W_U)                             # (N, B, T, m)
    p = numerics.softmax(logits, axis=-1)
    picked = np.take_along_axis(p, np.broadcast_to(y[..., None], (N, B, T, 1)), axis=-1)[..., 0]
    loss = -np.log(picked).mean(axis=(1, 2))
    d_logits = p
    np.put_along_axis(d_logits, np.broadcast_to(y[..., None], (N, B, T, 1)), picked[..., None] - 1, axis=-1)
    d_logits /= B * T
    grads["W_U"] = _outer(H, d_logits)
    d_H = _per_seed(d_logits, np.swapaxes(W_U, -1, -2))     # (N, B, T, d)
    d_X = d_H
    if attend:
        head = attention_backward(Q, K, V, A, d_H)
        d_X = d_H.copy()
        for name, g in (("W_Q", head.Q), ("W_K", head.K), ("W_V", head.V)):
            grads[name] = _outer(X, g)
            d_X += _per_seed(g, np.swapaxes(params[name], -1, -2))
    one_hot = np.eye(E.shape[1])[x]                        # (B, T, m)
    grads["E"] = np.einsum("btm,nbtd->nmd", one_hot, d_X, optimize=True)
    grads["E_pos"] = d_X.sum(axis=1)
    return loss, grads, A


def layer_gradient_check(T: int = 6, d: int = 4, m: int = 5, seed: int = 0, h: float = 1e-6) -> float:
    """Largest gap between :func:`layer_loss_and_grads` and central finite differences, over every
    entry of every parameter, for a random layer on random windows of length ``T``."""
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, m, size=(2, 3, T))
    params = init_layer(m, d, T, [seed])
    _, grads, _ = layer_loss_and_grads(params, x, y)
    worst = 0.0
    for name, p in params.items():
        for idx in np.ndindex(p.shape):
            keep = p[idx]
            p[idx] = keep + h
            up = layer_loss_and_grads(params, x, y)[0][0]
            p[idx] = keep - h
            down = layer_loss_and_grads(params, x, y)[0][0]
            p[idx] = keep
            worst = max(worst, abs((up - down) / (2 * h) - grads[name][idx]))
    return worst


def train_layer(x: NDArray[np.int_], y: NDArray[np.int_], m: int, seeds: Sequence[int], d: int = 32,
                steps: int = 200, lr: float = 0.02, attend: bool = True) -> tuple[Params, Array]:
    """Adam (β = 0.9, 0.999) on every seed's layer at once, each step on all the windows.

    Returns
    -------
    params : dict of ndarray
        The trained layers (leading axis: seed).
    loss : ndarray, shape (N, steps + 1)
        Loss before each step and after the last.
    """
    params = init_layer(m, d, x.shape[1], seeds)
    first = {name: np.zeros_like(p) for name, p in params.items()}
    second = {name: np.zeros_like(p) for name, p in params.items()}
    curve = []
    for step in range(1, steps + 2):
        loss, grads, _ = layer_loss_and_grads(params, x, y, attend)
        curve.append(loss)
        if step > steps:
            break
        for name, g in grads.items():
            first[name] = 0.9 * first[name] + 0.1 * g
            second[name] = 0.999 * second[name] + 0.001 * g * g
            params[name] -= lr * (first[name] / (1 - 0.9 ** step)) / (
                np.sqrt(second[name] / (1 - 0.999 ** step)) + 1e-8)
    return params, np.stack(curve, axis=1)


def word_starts(x: NDArray[np.int_], separators: NDArray[np.int_]) -> NDArray[np.int_]:
    """The first position (0-based) of each character's own word: the last separator at or before it
    (or position 0 when the window has none so far).

    Parameters
    ----------
    x : ndarray of int, shape (B, T)
    separators : ndarray of int
        Types that end a word (:meth:`Corpus.separators`).

    Returns
    -------
    ndarray of int, shape (B, T)
    """
    pos = np.arange(x.shape[-1])
    return np.maximum.accumulate(np.where(np.isin(x, separators), pos, 0), axis=-1)


def own_word_share(A: Array, x: NDArray[np.int_], separators: NDArray[np.int_], first: int) -> tuple[Array, float]:
    """How much of each query's weight stays inside its own word, and what an even spread would give.

    A query's own word is its character and the characters back to the last separator before it
    (space, newline, punctuation; the separator included). Queries before position ``first``
    (0-based) are left out: they have few keys to choose from.

    Parameters
    ----------
    A : ndarray, shape (N, B, T, T)
    x : ndarray of int, shape (B, T)
    separators : ndarray of int
    first : int

    Returns
    -------
    share : ndarray, shape (N,)
        Mean over the queries of the weight on their own word.
    even : float
        The same mean if every query spread its weight evenly over the keys it may see.
    """
    T = x.shape[1]
    pos = np.arange(T)
    start = word_starts(x, separators)
    inside = (pos[None, None, :] >= start[:, :, None]) & (pos[None, None, :] <= pos[None, :, None])
    keep = pos >= first
    share = (A * inside).sum(axis=-1)[..., keep].mean(axis=(1, 2))
    even = ((pos - start + 1) / (pos + 1))[:, keep].mean()
    return share, float(even)


@dataclass(frozen=True)
class TextExperiment:
    """What :func:`text_experiment` measured, one entry per seed (axis ``N``).

    Attributes
    ----------
    corpus : Corpus
    seeds : ndarray of int, shape (N,)
    loss : ndarray, shape (N, steps + 1)
        The layer's loss on the whole text, during training.
    plain_loss : ndarray, shape (N, steps + 1)
        The same layer without its head, trained the same way.
    weights : ndarray, shape (N, B, T, T)
        The trained heads' weights on the windows ``x``.
    x : ndarray of int, shape (B, T)
    own_word : ndarray, shape (N,)
        Weight a query keeps inside its own word (:func:`own_word_share`).
    even : float
        The same for weights spread evenly.
    held_out : ndarray, shape (2, N)
        Loss on the last fifth of the text of layers trained on the first four fifths, with the
        head (row 0) and without it (row 1).
    chance : float
        ``ln m``: the loss of a guess that gives every character type the same probability.
    """

    corpus: Corpus
    seeds: NDArray[np.int_]
    loss: Array
    plain_loss: Array
    weights: Array
    x: NDArray[np.int_]
    own_word: Array
    even: float
    held_out: Array
    chance: float


#: The chapter's seeds: every one of them is shown, none chosen.
SEEDS = tuple(range(6))
#: Adam steps of the chapter's runs (the loss has stopped falling fast by then).
STEPS = 200
#: The chapter's window length ``T``, width ``d`` and stride (a window starts every ``STRIDE`` characters).
WINDOW, WIDTH, STRIDE = 32, 32, 8
#: Queries before this position (0-based) are left out of :func:`own_word_share`: they have few keys.
FIRST = 8


def text_experiment(seeds: Sequence[int] = SEEDS, T: int = WINDOW, d: int = WIDTH, steps: int = STEPS,
                    lr: float = 0.02, stride: int = STRIDE, first: int = FIRST) -> TextExperiment:
    """Train the layer on the Zen of Python from each seed, with and without its head, and measure.

    Parameters
    ----------
    seeds : sequence of int
    T : int
        Window length (characters).
    d : int
        Width of the embeddings and of the head (``d_k = d_v = d``).
    steps, lr : int, float
        Adam steps (each on every window) and rate.
    stride : int
        A window starts every ``stride`` characters.
    first : int
        Queries before this position are left out of :func:`own_word_share`.
    """
    if len(seeds) == 0:
        raise ValueError("text_experiment needs at least one seed")
    corpus = Corpus.from_text(zen())
    m = len(corpus.types)
    x, y = corpus.windows(T, stride)
    trained, loss = train_layer(x, y, m, seeds, d, steps, lr)
    _, plain = train_layer(x, y, m, seeds, d, steps, lr, attend=False)
    A = layer_loss_and_grads(trained, x, y)[2]
    own, even = own_word_share(A, x, corpus.separators(), first)
    train_x, train_y = corpus.part(0, 0.8).windows(T, stride)
    test_x, test_y = corpus.part(0.8, 1).windows(T, stride)
    held = [layer_loss_and_grads(train_layer(train_x, train_y, m, seeds, d, steps, lr, attend)[0],
                                 test_x, test_y, attend)[0] for attend in (True, False)]
    return TextExperiment(corpus, np.asarray(seeds, dtype=int), loss, plain, A, x, own, even,
                          np.array(held), float(np.log(m)))

"""One causal attention layer trained on real text, character by character (chapter 10).

The text is :func:`prose`, the English of the standard library's help texts (``pydoc_data.topics``),
about 200,000 characters that ship with every Python; the nineteen lines of the Zen of Python
(:func:`zen`) stay for small runs. A window of ``T`` characters of types ``t_1 .. t_T`` goes through

    X = E[t] + E_pos                       # (T, d): character i's embedding plus position i's vector
    O = softmax(X W_Q (X W_K)ᵀ/√d + M) X W_V   # (T, d): one head, causal mask M, d_k = d_v = d
    logits = (X + O) W_U                   # (T, m): the character itself plus what it read
    L = mean_i -log softmax(logits_i)[t_{i+1}]

and every matrix (``E``, ``E_pos``, ``W_Q``, ``W_K``, ``W_V``, ``W_U``) is learned by Adam, with the
head's backward pass of :mod:`selfattn.training` written out in the arrays' own float type. The same
layer with ``O`` left out (``attend=False``) sees only its own character and its position: the
baseline that shows what reading the earlier characters adds. Every array carries a leading axis
``N``, one layer per seed, and every seed goes through each matrix product at once.
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

__all__ = [
    "BATCH",
    "BLOCK",
    "EVERY",
    "FIRST",
    "PROBE",
    "PROSE_CHARACTERS",
    "RATE",
    "SAMPLED",
    "SAMPLE_LENGTH",
    "SEEDS",
    "SMALL",
    "SMALL_STEPS",
    "STEPS",
    "STRIDE",
    "WIDTH",
    "WINDOW",
    "Adam",
    "Corpus",
    "EnglishRun",
    "Training",
    "attention_shares",
    "english_experiment",
    "init_layer",
    "layer_gradient_check",
    "layer_loss",
    "layer_loss_and_grads",
    "letter_share",
    "longest_copy",
    "own_word_share",
    "probe_starts",
    "prose",
    "sample",
    "train_layer",
    "train_on_text",
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


#: The characters :func:`prose` keeps (after lower-casing): letters, digits, space and the punctuation of
#: running text.
PROSE_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789 .,;:'()-"


@cache
def prose() -> str:
    """The English prose of the standard library's help texts (``pydoc_data.topics``, what ``help()``
    prints about the language's keywords and topics), as one line of text.

    The topics are joined in the order of their names. Dropped, and why:

    - lines indented by three spaces or more and lines starting with ``>>>``: they hold the code
      examples, grammar rules and interactive sessions, which are Python, not English, but also the
      indented descriptions of methods and the notes, about half of the help texts; a filter line by
      line cannot tell the two apart, and what is left is still some 200,000 characters of English;
    - case (upper case is lower-cased) and every character not in :data:`PROSE_CHARACTERS` (symbols,
      underscores, quotes other than ``'``): each type costs the layer a row of ``E`` and a column of
      ``W_U``, and these are rare and mostly from code;
    - line breaks and runs of spaces, which become one space: the help texts are wrapped at a fixed
      width, so where a line breaks says nothing about the language.

    The text depends on the Python version (the help texts change with the language); the chapter's
    claims are checked on it when the book is built.
    """
    import pydoc_data.topics

    raw = "\n".join(pydoc_data.topics.topics[name] for name in sorted(pydoc_data.topics.topics))
    lines = [line for line in raw.split("\n") if line.strip() and not line.startswith(("   ", ">>>"))]
    text = " ".join(" ".join(lines).lower().split())
    keep = set(PROSE_CHARACTERS)
    return " ".join("".join(c for c in text if c in keep).split())


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

    def split(self, block: int = 1000, every: int = 10) -> tuple[Corpus, Corpus]:
        """The text cut into blocks of ``block`` characters, every ``every``-th block held out.

        Blocks from all over the text are held out, so the held-out text is like the training text (a
        held-out tail would be other topics, easier or harder than the rest). Each part's blocks are
        joined: a window that crosses a join reads two blocks' ends side by side, one window start in
        ``block``.

        Returns
        -------
        train, held : Corpus
            The same types as this corpus.
        """
        if block < 1 or every < 2:
            raise ValueError(f"split needs block >= 1 and every >= 2, got block={block}, every={every}")
        held = (np.arange(len(self.ids)) // block) % every == every - 1
        return Corpus(self.types, self.ids[~held]), Corpus(self.types, self.ids[held])

    def at(self, starts: NDArray[np.int_], T: int) -> tuple[NDArray[np.int_], NDArray[np.int_]]:
        """The windows of ``T`` characters that start at ``starts`` (any shape ``S``), and the character
        after each of their characters: two arrays of shape ``S + (T,)``."""
        starts = np.asarray(starts)
        if starts.size and (starts.min() < 0 or starts.max() + T >= len(self.ids)):
            raise ValueError(f"a window of T={T} characters and a next one must start in 0..{len(self.ids) - T - 1}")
        at = starts[..., None] + np.arange(T)
        return self.ids[at], self.ids[at + 1]

    def separators(self) -> NDArray[np.int_]:
        """Types of the characters that end a word: space, newline and punctuation."""
        return np.array([t for t, c in enumerate(self.types) if not c.isalnum() and c != "'"], dtype=int)


def init_layer(m: int, d: int, T: int, seeds: Sequence[int], dtype: type = np.float64) -> Params:
    """One layer per seed: ``E`` (N, m, d) and ``E_pos`` (N, T, d) with entries of variance ``1/4``, the
    projections with entries of variance ``1/d``; every array of type ``dtype``."""
    params: Params = {name: [] for name in NAMES}   # type: ignore[misc]
    for seed in seeds:
        rng = np.random.default_rng(seed)
        params["E"].append(rng.standard_normal((m, d)) / 2)
        params["E_pos"].append(rng.standard_normal((T, d)) / 2)
        for name in NAMES[2:-1]:
            params[name].append(rng.standard_normal((d, d)) / np.sqrt(d))
        params["W_U"].append(rng.standard_normal((d, m)) / np.sqrt(d))
    return {name: np.array(stack, dtype=dtype) for name, stack in params.items()}


def _per_seed_ids(x: NDArray[np.int_], N: int) -> NDArray[np.int_]:
    """Windows ``x`` of shape (B, T), shared by every seed, or (N, B, T), one batch per seed: (N, B, T)."""
    if x.ndim == 2:
        return np.broadcast_to(x, (N, *x.shape))
    if x.ndim != 3 or x.shape[0] != N:
        raise ValueError(f"windows must have shape (B, T) or (N={N}, B, T), got {x.shape}")
    return x


def _head_backward(Q: Array, K: Array, V: Array, A: Array, dO: Array, c: float) -> tuple[Array, Array, Array]:
    """The head's five lines (this chapter's first section), in the arrays' own float type:
    ``dV = Aᵀ dO``, ``dS = A ⊙ (dO Vᵀ − rowsum(A ⊙ dO Vᵀ))``, ``dQ = c dS K``, ``dK = c dSᵀ Q``."""
    dV = np.swapaxes(A, -1, -2) @ dO
    dA = dO @ np.swapaxes(V, -1, -2)
    dA -= (A * dA).sum(axis=-1, keepdims=True)
    dA *= A                                                # now dS
    dA *= c
    return dA @ K, np.swapaxes(dA, -1, -2) @ Q, dV


def _forward(params: Params, x: NDArray[np.int_], attend: bool) -> dict[str, Array]:
    """Every intermediate of the layer on the windows ``x`` ((B, T) or (N, B, T), ``T`` at most the
    layer's window): ``X``, ``Q``, ``K``, ``V``, ``A``, ``H`` (N, B, T, ·) and ``p`` (N, B·T, m)."""
    E = params["E"]
    N, _, d = E.shape
    x = _per_seed_ids(x, N)
    _, B, T = x.shape
    X = E[np.arange(N)[:, None, None], x] + params["E_pos"][:, None, :T]   # (N, B, T, d)
    out = {"X": X}
    H = X
    if attend:
        W = np.concatenate([params["W_Q"], params["W_K"], params["W_V"]], axis=-1)   # (N, d, 3d)
        QKV = (X.reshape(N, B * T, d) @ W).reshape(N, B, T, 3 * d)
        Q, K, V = (np.ascontiguousarray(QKV[..., k * d:(k + 1) * d]) for k in range(3))
        S = Q @ np.swapaxes(K, -1, -2)                     # (N, B, T, T)
        S *= 1 / np.sqrt(d)
        S[..., ~np.tri(T, dtype=bool)] = -np.inf           # the causal mask
        S -= S.max(axis=-1, keepdims=True)
        A = np.exp(S, out=S)
        A /= A.sum(axis=-1, keepdims=True)
        H = X + A @ V
        out.update(Q=Q, K=K, V=V, A=A)
    logits = H.reshape(N, B * T, d) @ params["W_U"]       # (N, B·T, m)
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits, out=logits)
    p /= p.sum(axis=-1, keepdims=True)
    out.update(H=H, p=p)
    return out


def layer_loss(params: Params, x: NDArray[np.int_], y: NDArray[np.int_], attend: bool = True,
               chunk: int = 256) -> Array:
    """Mean cross-entropy (nats per character) of every seed's layer on the windows ``x``, without
    gradients, ``chunk`` windows at a time.

    Parameters
    ----------
    params : dict of ndarray
    x, y : ndarray of int, shape (B, T) or (N, B, T)
    attend : bool
    chunk : int

    Returns
    -------
    ndarray, shape (N,)
    """
    N = params["E"].shape[0]
    x, y = _per_seed_ids(x, N), _per_seed_ids(y, N)
    total = np.zeros(N)
    for at in range(0, x.shape[1], chunk):
        p = _forward(params, x[:, at:at + chunk], attend)["p"]
        picked = np.take_along_axis(p, y[:, at:at + chunk].reshape(N, -1, 1), axis=-1)
        total -= np.log(picked).sum(axis=(1, 2))
    return total / y[0].size


def layer_loss_and_grads(params: Params, x: NDArray[np.int_], y: NDArray[np.int_],
                         attend: bool = True) -> tuple[Array, Params, Array]:
    """Loss, gradients and weights of every seed's layer on the windows ``x``.

    The arithmetic runs in the parameters' float type (float32 for training, float64 for the
    gradient check); every seed's layer goes through each matrix product at once.

    Parameters
    ----------
    params : dict of ndarray
        ``E`` (N, m, d), ``E_pos`` (N, T, d), ``W_Q``, ``W_K``, ``W_V`` (N, d, d), ``W_U`` (N, d, m).
    x, y : ndarray of int, shape (B, T) or (N, B, T)
        Windows and the character after each of their characters: the same windows for every seed,
        or one batch per seed.
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
    N, m, d = E.shape
    x, y = _per_seed_ids(x, N), _per_seed_ids(y, N)
    _, B, T = x.shape
    fwd = _forward(params, x, attend)
    X, H, p = fwd["X"], fwd["H"], fwd["p"]
    rows = np.arange(N * B * T)
    flat = p.reshape(-1, m)
    picked = flat[rows, y.reshape(-1)]
    loss = -np.log(picked.reshape(N, -1)).mean(axis=1)
    flat[rows, y.reshape(-1)] -= 1                         # p becomes ∂L/∂logits · B T
    p /= B * T
    grads = {name: np.zeros_like(v) for name, v in params.items()}
    grads["W_U"] = np.swapaxes(H.reshape(N, B * T, d), -1, -2) @ p
    d_X = (p @ np.swapaxes(W_U, -1, -2)).reshape(N, B, T, d)   # ∂L/∂H, and the path straight to X
    A = np.zeros((N, B, T, T), dtype=E.dtype)
    if attend:
        A = fwd["A"]
        dQ, dK, dV = _head_backward(fwd["Q"], fwd["K"], fwd["V"], A, d_X, 1 / np.sqrt(d))
        d_QKV = np.concatenate([dQ, dK, dV], axis=-1).reshape(N, B * T, 3 * d)
        W = np.concatenate([params["W_Q"], params["W_K"], params["W_V"]], axis=-1)
        g = np.swapaxes(X.reshape(N, B * T, d), -1, -2) @ d_QKV   # (N, d, 3d)
        grads["W_Q"], grads["W_K"], grads["W_V"] = (g[..., k * d:(k + 1) * d] for k in range(3))
        d_X = d_X + (d_QKV @ np.swapaxes(W, -1, -2)).reshape(N, B, T, d)
    one_hot = np.zeros((N, B * T, m), dtype=E.dtype)
    one_hot.reshape(-1, m)[rows, x.reshape(-1)] = 1
    grads["E"] = np.swapaxes(one_hot, -1, -2) @ d_X.reshape(N, B * T, d)
    grads["E_pos"][:, :T] = d_X.sum(axis=1)
    return loss, grads, A


def layer_gradient_check(T: int = 6, d: int = 4, m: int = 5, seed: int = 0, h: float = 1e-6,
                         B: int = 3, seeds: int = 1) -> float:
    """Largest gap between :func:`layer_loss_and_grads` and central finite differences, over every
    entry of every parameter of ``seeds`` random layers (float64) on ``B`` random windows of length
    ``T`` (a different batch per seed when ``seeds > 1``)."""
    rng = np.random.default_rng(seed)
    shape = (B, T) if seeds == 1 else (seeds, B, T)
    x, y = rng.integers(0, m, size=(2, *shape))
    params = init_layer(m, d, T, [seed + k for k in range(seeds)])
    _, grads, _ = layer_loss_and_grads(params, x, y)
    worst = 0.0
    for name, p in params.items():
        for idx in np.ndindex(p.shape):
            keep = p[idx]
            p[idx] = keep + h
            up = layer_loss_and_grads(params, x, y)[0].sum()
            p[idx] = keep - h
            down = layer_loss_and_grads(params, x, y)[0].sum()
            p[idx] = keep
            worst = max(worst, abs((up - down) / (2 * h) - grads[name][idx]))
    return worst


class Adam:
    """Adam (β = 0.9, 0.999, ε = 1e-8) on a dict of arrays, in place, in the arrays' float type."""

    def __init__(self, params: Params, lr: float) -> None:
        self.params, self.lr, self.step = params, lr, 0
        self.first = {name: np.zeros_like(p) for name, p in params.items()}
        self.second = {name: np.zeros_like(p) for name, p in params.items()}

    def update(self, grads: Params) -> None:
        """One step down ``grads``."""
        self.step += 1
        rate = self.lr * np.sqrt(1 - 0.999 ** self.step) / (1 - 0.9 ** self.step)
        for name, g in grads.items():
            first, second = self.first[name], self.second[name]
            first *= 0.9
            first += 0.1 * g
            second *= 0.999
            second += 0.001 * g * g
            self.params[name] -= rate * first / (np.sqrt(second) + 1e-8)


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
    adam = Adam(params, lr)
    curve = []
    for step in range(steps + 1):
        loss, grads, _ = layer_loss_and_grads(params, x, y, attend)
        curve.append(loss)
        if step < steps:
            adam.update(grads)
    return params, np.stack(curve, axis=1)


@dataclass(frozen=True)
class Training:
    """What :func:`train_on_text` recorded, one entry per seed (axis ``N``).

    Attributes
    ----------
    params : dict of ndarray
        The layers after the last step.
    steps : ndarray of int, shape (K,)
        The steps after which the losses were measured (0: before the first).
    held : ndarray, shape (N, K)
        Loss on the held-out text's probe windows, in nats per character.
    train : ndarray, shape (N, K)
        Loss on as many probe windows of the training text.
    snapshots : dict of int to dict of ndarray
        The layers after each step asked for in ``keep``.
    """

    params: Params
    steps: NDArray[np.int_]
    held: Array
    train: Array
    snapshots: dict[int, Params]


def probe_starts(corpus: Corpus, T: int, count: int) -> NDArray[np.int_]:
    """``count`` window starts spread evenly over ``corpus`` (the same every time: a fixed probe)."""
    return np.linspace(0, len(corpus.ids) - T - 1, count).astype(int)


def train_on_text(train: Corpus, held: Corpus, seeds: Sequence[int], attend: bool = True, T: int = 32,
                  d: int = 32, steps: int = 1000, batch: int = 64, lr: float = 0.01, every: int = 50,
                  probe: int = 256, keep: Sequence[int] = (), dtype: type = np.float32) -> Training:
    """Adam on every seed's layer at once, each step on ``batch`` random windows of the training text.

    Seed ``s`` sets the layer's first weights and the order of its batches (windows start anywhere in
    ``train``, drawn with replacement). Every ``every`` steps, and before the first, the loss is
    measured on ``probe`` fixed windows of each text (:func:`probe_starts`).

    Parameters
    ----------
    train, held : Corpus
        The text trained on and the text held out (the same types).
    seeds : sequence of int
    attend : bool
        ``False`` trains the layer without its head.
    T, d : int
        Window length and width.
    steps, batch, lr : int, int, float
        Adam steps, windows per step, rate.
    every, probe : int
        How often and on how many windows the losses are measured.
    keep : sequence of int
        Steps after which a copy of the layers is kept.
    dtype : type
        Float type of the layers and of the arithmetic.
    """
    if len(seeds) == 0:
        raise ValueError("train_on_text needs at least one seed")
    params = init_layer(len(train.types), d, T, seeds, dtype)
    adam = Adam(params, lr)
    draws = [np.random.default_rng([seed, 1]) for seed in seeds]
    top = len(train.ids) - T - 1
    probes = [c.at(probe_starts(c, T, probe), T) for c in (held, train)]
    at, held_loss, train_loss, snapshots = [], [], [], {}
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            at.append(step)
            held_loss.append(layer_loss(params, *probes[0], attend))
            train_loss.append(layer_loss(params, *probes[1], attend))
        if step in keep:
            snapshots[step] = {name: v.copy() for name, v in params.items()}
        if step == steps:
            break
        x, y = train.at(np.stack([draw.integers(0, top + 1, batch) for draw in draws]), T)
        adam.update(layer_loss_and_grads(params, x, y, attend)[1])
    return Training(params, np.array(at), np.stack(held_loss, axis=1), np.stack(train_loss, axis=1), snapshots)


def sample(params: Params, prompt: NDArray[np.int_], count: int, seed: int = 0,
           attend: bool = True) -> NDArray[np.int_]:
    """Text drawn from every seed's layer, one character at a time after ``prompt``.

    Each next character is drawn from the layer's distribution at the last position of the window of
    the (at most ``T``) characters before it.

    Returns
    -------
    ndarray of int, shape (N, count)
        The drawn characters (the prompt not included).
    """
    N, T = params["E"].shape[0], params["E_pos"].shape[1]
    rng = np.random.default_rng(seed)
    text = np.repeat(np.asarray(prompt)[None], N, axis=0)
    for _ in range(count):
        window = text[:, -T:][:, None]                     # (N, 1, ≤T)
        p = _forward(params, window, attend)["p"][:, -1].astype(float)
        cumulative = np.cumsum(p / p.sum(axis=-1, keepdims=True), axis=-1)
        drawn = (cumulative < rng.random((N, 1))).sum(axis=-1)
        text = np.concatenate([text, np.minimum(drawn, p.shape[-1] - 1)[:, None]], axis=1)
    return text[:, len(prompt):]


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


def attention_shares(A: Array, x: NDArray[np.int_], space: int, separators: NDArray[np.int_],
                     first: int) -> dict[str, tuple[Array, float]]:
    """Where the queries' weight goes, and what an even spread over the keys would give.

    Queries before position ``first`` (0-based) are left out: they have few keys to choose from.

    Parameters
    ----------
    A : ndarray, shape (N, B, T, T)
    x : ndarray of int, shape (B, T)
    space : int
        The type of the space character.
    separators : ndarray of int
        Types that end a word (:meth:`Corpus.separators`).
    first : int

    Returns
    -------
    dict
        For ``"self"`` (the query's own character), ``"previous"`` (the character before it),
        ``"spaces"`` (every space it may see) and ``"word"`` (its own word, :func:`own_word_share`):
        the mean weight over the queries, shape (N,), and the same mean for even weights.
    """
    T = x.shape[1]
    pos = np.arange(T)
    keep = pos >= max(first, 1)
    spaces = np.tri(T, dtype=bool)[None] & (x == space)[:, None, :]   # (B, T, T): key j ≤ i is a space
    diagonal = A[..., pos, pos]
    previous = A[..., pos[1:], pos[:-1]]
    previous = np.concatenate([np.zeros_like(previous[..., :1]), previous], axis=-1)
    on_spaces = (A * spaces).sum(axis=-1)
    even = 1 / (pos + 1)
    shares = {
        "self": (diagonal[..., keep].mean(axis=(1, 2)), float(even[keep].mean())),
        "previous": (previous[..., keep].mean(axis=(1, 2)), float(even[keep].mean())),
        "spaces": (on_spaces[..., keep].mean(axis=(1, 2)), float((spaces.sum(axis=-1) * even)[:, keep].mean())),
    }
    shares["word"] = own_word_share(A, x, separators, first)
    return shares


def longest_copy(text: str, source: str) -> int:
    """The length of the longest run of characters of ``text`` that occurs, as it is, in ``source``."""
    best, i = 0, 0
    for start in range(len(text)):
        i = max(i, start)
        while i < len(text) and text[start:i + 1] in source:
            i += 1
        best = max(best, i - start)
    return best


def letter_share(text: str) -> float:
    """The share of ``text``'s characters that are letters or spaces."""
    return sum(c.isalpha() or c == " " for c in text) / max(len(text), 1)


@dataclass(frozen=True)
class EnglishRun:
    """What :func:`english_experiment` measured, one entry per seed (axis ``N``).

    Attributes
    ----------
    corpus, train, held : Corpus
        The prose, and its training and held-out parts (:meth:`Corpus.split`).
    small : Corpus
        The first :data:`SMALL` characters of the training part.
    seeds : ndarray of int, shape (N,)
    head, plain, small_head : Training
        The layer with its head and without it on the training part, and with its head on ``small``;
        each measured on the same held-out part.
    chance : float
        ``ln m``: the loss of a guess that gives every character type the same probability.
    x : ndarray of int, shape (B, T)
        The held-out probe windows.
    weights : ndarray, shape (N, B, T, T)
        The trained heads' weights on them.
    shares : dict
        :func:`attention_shares` of those weights.
    samples : dict of (str, int) to list of str
        Text drawn from the layers: ``("head", step)`` and ``("small", step)``, one string per seed.
    copies : dict of (str, int) to ndarray of int, shape (N,)
        :func:`longest_copy` of each sample in its run's training text.
    held_copy, small_held_copy : int
        :func:`longest_copy` of a held-out passage as long as a sample, in the training part and in
        ``small``: what real English shares with the text by chance.
    """

    corpus: Corpus
    train: Corpus
    held: Corpus
    small: Corpus
    seeds: NDArray[np.int_]
    head: Training
    plain: Training
    small_head: Training
    chance: float
    x: NDArray[np.int_]
    weights: Array
    shares: dict[str, tuple[Array, float]]
    samples: dict[tuple[str, int], list[str]]
    copies: dict[tuple[str, int], NDArray[np.int_]]
    held_copy: int
    small_held_copy: int


#: The chapter's seeds: every one of them is shown, none chosen.
SEEDS = tuple(range(4))
#: Adam steps on the prose, and on its small slice (which it has learned by heart long before).
STEPS, SMALL_STEPS = 1000, 600
#: The chapter's window length ``T``, width ``d``, windows per step and Adam's rate.
WINDOW, WIDTH, BATCH, RATE = 32, 32, 64, 0.01
#: The held-out part is every tenth block of this many characters (:meth:`Corpus.split`).
BLOCK = 1000
#: Characters of the small slice.
SMALL = 3000
#: Steps between two measurements of the losses, and held-out windows they are measured on.
EVERY, PROBE = 50, 256
#: Steps after which text is drawn from the layers, and its length in characters.
SAMPLED, SAMPLE_LENGTH = (0, 100, SMALL_STEPS, STEPS), 300
#: Queries before this position (0-based) are left out of :func:`attention_shares`: they have few keys.
FIRST = 8
#: Window stride of the Zen runs (:func:`train_layer` on :func:`zen`, ``benchmarks/blas_threads.py``).
STRIDE = 8


def english_experiment(seeds: Sequence[int] = SEEDS) -> EnglishRun:
    """Train the layer on :func:`prose` from each seed, with and without its head, and on a small slice
    of it; measure the held-out losses, where the heads look and what the layers write."""
    if len(seeds) == 0:
        raise ValueError("english_experiment needs at least one seed")
    corpus = Corpus.from_text(prose())
    train, held = corpus.split(BLOCK)
    small = Corpus(corpus.types, train.ids[:SMALL])
    settings = dict(T=WINDOW, d=WIDTH, batch=BATCH, lr=RATE, every=EVERY, probe=PROBE)
    head = train_on_text(train, held, seeds, steps=STEPS, keep=SAMPLED, **settings)
    plain = train_on_text(train, held, seeds, attend=False, steps=STEPS, **settings)
    small_head = train_on_text(small, held, seeds, steps=SMALL_STEPS, keep=SAMPLED, **settings)
    x, y = held.at(probe_starts(held, WINDOW, PROBE), WINDOW)
    weights = layer_loss_and_grads(head.params, x, y)[2]
    shares = attention_shares(weights, x, corpus.types.index(" "), corpus.separators(), FIRST)
    decode = lambda ids: "".join(corpus.types[t] for t in ids)   # noqa: E731
    texts = {"head": decode(train.ids), "small": decode(small.ids)}
    prompt = held.ids[:WINDOW]
    samples, copies = {}, {}
    for name, run in (("head", head), ("small", small_head)):
        for step, params in run.snapshots.items():
            drawn = [decode(row) for row in sample(params, prompt, SAMPLE_LENGTH)]
            samples[name, step] = drawn
            copies[name, step] = np.array([longest_copy(t, texts[name]) for t in drawn])
    passage = decode(held.ids[WINDOW:WINDOW + SAMPLE_LENGTH])
    return EnglishRun(corpus, train, held, small, np.asarray(seeds, dtype=int), head, plain, small_head,
                      float(np.log(len(corpus.types))), x, weights, shares, samples, copies,
                      longest_copy(passage, texts["head"]), longest_copy(passage, texts["small"]))

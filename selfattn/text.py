"""A toy word-level tokenizer, vocabulary and embedding lookup for the lecture's sentences."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["SENTENCES", "Vocabulary", "embed", "random_embeddings", "tokenize"]

#: The sentences the lecture uses, by a short name.
SENTENCES: dict[str, str] = {
    "hungry": "the cat was hungry",
    "sat": "the cat sat",
    "porch": "The cat, which had been hiding under the porch all morning, was hungry.",
    "dog_bites_man": "dog bites man",
    "man_bites_dog": "man bites dog",
}

_TOKEN = re.compile(r"[a-z0-9']+")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-case word tokens; punctuation is dropped.

    >>> tokenize("The cat, which had been hiding")
    ['the', 'cat', 'which', 'had', 'been', 'hiding']
    """
    if not isinstance(text, str):
        raise ValueError(f"tokenize takes a string, got {type(text).__name__}")
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Vocabulary:
    """A fixed list of ``m`` token types; type ``t`` is row ``t`` of an embedding matrix."""

    types: tuple[str, ...]

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Vocabulary:
        """Types in order of first appearance across ``texts``."""
        seen: dict[str, None] = {}
        for text in texts:
            for tok in tokenize(text):
                seen.setdefault(tok, None)
        return cls(tuple(seen))

    def __len__(self) -> int:
        return len(self.types)

    def encode(self, text: str) -> NDArray[np.int64]:
        """Token ids, shape (T,).  Unknown words raise ``ValueError`` naming them."""
        index = {t: i for i, t in enumerate(self.types)}
        toks = tokenize(text)
        missing = sorted({t for t in toks if t not in index})
        if missing:
            raise ValueError(f"tokens not in the vocabulary: {missing}")
        return np.array([index[t] for t in toks], dtype=np.int64)

    def decode(self, ids: Sequence[int]) -> list[str]:
        """Token strings for ids."""
        return [self.types[int(i)] for i in ids]


def embed(E: NDArray[np.floating], ids: Sequence[int] | NDArray[np.integer]) -> NDArray[np.floating]:
    """Look up rows of the embedding matrix.

    Parameters
    ----------
    E : ndarray, shape (m, d)
        One row per token type.
    ids : array_like of int, shape (T,)

    Returns
    -------
    X : ndarray, shape (T, d)
        Row ``i`` is ``E[ids[i]]``.
    """
    E = np.asarray(E)
    idx = np.asarray(ids)
    if E.ndim != 2:
        raise ValueError(f"E must have shape (m, d), got shape {E.shape}")
    if idx.ndim != 1 or (not np.issubdtype(idx.dtype, np.integer) and idx.size):
        raise ValueError(f"ids must be a 1-D integer array, got shape {idx.shape} and dtype {idx.dtype}")
    if idx.size and (idx.min() < 0 or idx.max() >= E.shape[0]):
        raise ValueError(f"ids must lie in [0, m={E.shape[0]}), got {idx.tolist()}")
    return E[idx.astype(np.int64)]


def random_embeddings(m: int, d: int, seed: int = 0) -> NDArray[np.float64]:
    """An ``(m, d)`` embedding matrix with unit-variance Gaussian entries, as at initialisation."""
    return np.random.default_rng(seed).standard_normal((m, d))

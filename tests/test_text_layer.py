"""Chapter 10's text layer: its gradients, its measurements and its text, each able to fail."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfattn import text_layer as tl


@given(st.integers(0, 2**16), st.integers(3, 7), st.integers(2, 5))
def test_the_layers_gradients_are_the_finite_differences(seed, T, d):
    assert tl.layer_gradient_check(T=T, d=d, m=4, seed=seed) < 1e-7


def test_the_gradient_check_sees_a_wrong_gradient(monkeypatch):
    """Break the head's backward pass (drop the softmax's Jacobian): the check must notice."""
    from selfattn import training

    def no_softmax(Q, K, V, A, dO, scaled=True):
        right = training.attention_backward(Q, K, V, A, dO, scaled)
        return training.AttentionGrads(Q=0 * right.Q, K=0 * right.K, V=right.V, S=right.S)

    monkeypatch.setattr(tl, "attention_backward", no_softmax)
    assert tl.layer_gradient_check(T=5, d=3, m=4, seed=1) > 1e-4


@given(st.text(alphabet="ab .\n", min_size=12, max_size=60), st.integers(2, 8), st.integers(1, 5))
def test_each_windows_next_characters_are_the_texts(text, T, stride):
    corpus = tl.Corpus.from_text(text)
    if len(text) <= T:
        with pytest.raises(ValueError, match="no window"):
            corpus.windows(T, stride)
        return
    x, y = corpus.windows(T, stride)
    for w, start in enumerate(range(0, len(text) - T, stride)):
        assert "".join(corpus.types[t] for t in x[w]) == text[start:start + T]
        assert "".join(corpus.types[t] for t in y[w]) == text[start + 1:start + T + 1]


@given(st.text(alphabet="ab .\n", min_size=1, max_size=40))
def test_a_words_start_is_the_last_separator_before_it(text):
    corpus = tl.Corpus.from_text(text)
    x = corpus.ids[None]
    starts = tl.word_starts(x, corpus.separators())[0]
    for i, s in enumerate(starts):
        before = [j for j in range(i + 1) if text[j] in " .\n"]
        assert s == (before[-1] if before else 0), (text, i, s)


def _rows(draw, B, T):
    raw = np.array(draw(st.lists(st.floats(0.01, 1), min_size=B * T * T, max_size=B * T * T))).reshape(1, B, T, T)
    raw = np.where(np.tri(T, dtype=bool), raw, 0)
    return raw / raw.sum(axis=-1, keepdims=True)


@given(st.data())
def test_the_own_word_share_is_the_weight_inside_the_word(data):
    T, B = data.draw(st.integers(3, 8)), data.draw(st.integers(1, 3))
    text = data.draw(st.text(alphabet="ab \n", min_size=B * T, max_size=B * T))
    corpus = tl.Corpus.from_text(text)
    x = corpus.ids.reshape(B, T)
    seps = corpus.separators()
    first = data.draw(st.integers(0, T - 1))
    A = _rows(data.draw, B, T)
    share, even = tl.own_word_share(A, x, seps, first)
    starts = tl.word_starts(x, seps)
    by_hand = np.mean([A[0, b, i, starts[b, i]:i + 1].sum() for b in range(B) for i in range(first, T)])
    assert share[0] == pytest.approx(by_hand)
    uniform = np.tri(T)[None, None] / np.arange(1, T + 1)[:, None]
    assert tl.own_word_share(uniform, x, seps, first)[0][0] == pytest.approx(even)
    on_itself = np.eye(T)[None, None].repeat(B, axis=1)
    assert tl.own_word_share(on_itself, x, seps, first)[0][0] == pytest.approx(1.0)


def test_the_zen_is_the_nineteen_lines_of_this_and_printed_nowhere(capsys):
    text = tl.zen()
    lines = text.splitlines()
    assert len(lines) == 19 and lines[0] == "beautiful is better than ugly."
    assert lines[-1].startswith("namespaces are one honking great idea")
    assert capsys.readouterr().out == ""


def test_a_short_run_learns_and_its_head_helps():
    corpus = tl.Corpus.from_text(tl.zen()[:200])
    x, y = corpus.windows(12, 4)
    m = len(corpus.types)
    _, with_head = tl.train_layer(x, y, m, seeds=[0, 1], d=8, steps=60, lr=0.05)
    _, without = tl.train_layer(x, y, m, seeds=[0, 1], d=8, steps=60, lr=0.05, attend=False)
    assert with_head.shape == (2, 61)
    assert np.all(with_head[:, -1] < 0.5 * with_head[:, 0])
    assert np.all(with_head[:, -1] < without[:, -1])
    np.testing.assert_allclose(with_head[:, 0], np.log(m), rtol=0.3)


def test_seeds_are_independent_and_reproducible():
    corpus = tl.Corpus.from_text(tl.zen()[:120])
    x, y = corpus.windows(8, 4)
    m = len(corpus.types)
    _, both = tl.train_layer(x, y, m, seeds=[3, 5], d=4, steps=5)
    _, alone = tl.train_layer(x, y, m, seeds=[5], d=4, steps=5)
    np.testing.assert_allclose(both[1], alone[0], rtol=1e-12)
    assert not np.allclose(both[0], both[1])


def test_an_experiment_needs_a_seed():
    with pytest.raises(ValueError, match="at least one seed"):
        tl.text_experiment(seeds=[])

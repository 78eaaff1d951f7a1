"""Chapter 10's text layer: its gradients, its measurements and its text, each able to fail."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfattn import text_layer as tl


@given(st.integers(0, 2**16), st.integers(3, 7), st.integers(2, 5))
def test_the_layers_gradients_are_the_finite_differences(seed, T, d):
    assert tl.layer_gradient_check(T=T, d=d, m=4, seed=seed) < 1e-7


@settings(max_examples=15)
@given(st.integers(0, 2**16), st.integers(1, 5), st.integers(1, 3), st.integers(2, 3), st.integers(2, 6))
def test_every_seeds_gradients_are_the_finite_differences(seed, T, B, seeds, m):
    """Several seeds at once, each on its own batch, windows as short as one character."""
    assert tl.layer_gradient_check(T=T, d=3, m=m, seed=seed, B=B, seeds=seeds) < 1e-7


def test_the_gradient_check_sees_a_wrong_gradient(monkeypatch):
    """Break the head's backward pass (drop the softmax's Jacobian): the check must notice."""
    right = tl._head_backward

    def no_softmax(Q, K, V, A, dO, c):
        dQ, dK, dV = right(Q, K, V, A, dO, c)
        return 0 * dQ, 0 * dK, dV

    monkeypatch.setattr(tl, "_head_backward", no_softmax)
    assert tl.layer_gradient_check(T=5, d=3, m=4, seed=1) > 1e-4


@settings(max_examples=20)
@given(st.integers(0, 2**16), st.integers(2, 12), st.integers(1, 4), st.booleans())
def test_float32_gives_the_float64_loss_and_gradients(seed, T, N, attend):
    """The trainer's float32 arithmetic agrees with float64 on the same layers and windows."""
    rng = np.random.default_rng(seed)
    m, d = 7, 8
    x, y = rng.integers(0, m, size=(2, N, 5, T))
    wide = tl.init_layer(m, d, T, range(N))
    narrow = {k: v.astype(np.float32) for k, v in wide.items()}
    loss64, grads64, A64 = tl.layer_loss_and_grads(wide, x, y, attend)
    loss32, grads32, A32 = tl.layer_loss_and_grads(narrow, x, y, attend)
    assert loss32.dtype == np.float32 and grads32["E"].dtype == np.float32
    np.testing.assert_allclose(loss32, loss64, rtol=1e-5)
    for k in grads64:
        np.testing.assert_allclose(grads32[k], grads64[k], atol=1e-5 * np.abs(grads64[k]).max() + 1e-9)
    np.testing.assert_allclose(A32, A64, atol=1e-5)
    np.testing.assert_allclose(tl.layer_loss(wide, x, y, attend, chunk=2), loss64, rtol=1e-10)


def test_each_seeds_batch_is_its_own():
    """One batch per seed: seed n's loss and gradients are those of seed n's layer alone on its batch."""
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, size=(2, 3, 4, 6))
    params = tl.init_layer(5, 4, 6, [7, 8, 9])
    loss, grads, _ = tl.layer_loss_and_grads(params, x, y)
    for n, seed in enumerate([7, 8, 9]):
        alone, alone_grads, _ = tl.layer_loss_and_grads(tl.init_layer(5, 4, 6, [seed]), x[n], y[n])
        assert loss[n] == pytest.approx(alone[0], rel=1e-12)
        for k in grads:
            np.testing.assert_allclose(grads[k][n], alone_grads[k][0], rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="shape"):
        tl.layer_loss_and_grads(params, x[:2], y[:2])


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
        tl.english_experiment(seeds=[])
    corpus = tl.Corpus.from_text(tl.zen())
    with pytest.raises(ValueError, match="at least one seed"):
        tl.train_on_text(corpus, corpus, seeds=[])


def test_the_prose_is_english_without_code():
    text = tl.prose()
    assert len(text) > 100_000
    assert set(text) <= set(tl.PROSE_CHARACTERS)
    assert "  " not in text and text == text.strip()
    assert ">>>" not in text and "\n" not in text
    import pydoc_data.topics

    keep = set(tl.PROSE_CHARACTERS)

    def norm(line: str) -> str:
        return " ".join("".join(c for c in line.lower() if c in keep).split())

    lines = [line for v in pydoc_data.topics.topics.values() for line in v.splitlines()]
    # lines long enough not to occur in the text by chance: the indented ones are gone, the others kept
    indented = [norm(line) for line in lines if line.startswith("   ") and len(norm(line)) >= 40]
    flush = [norm(line) for line in lines if not line.startswith(("   ", ">>>")) and len(norm(line)) >= 40]
    assert np.mean([line in text for line in indented]) < 0.05
    assert np.mean([line in text for line in flush]) > 0.95
    assert "the assert statement" in text


@given(st.text(alphabet="abc .", min_size=0, max_size=80), st.integers(1, 9), st.integers(2, 5))
def test_a_split_holds_out_every_nth_block(text, block, every):
    corpus = tl.Corpus.from_text(text or "a")
    train, held = corpus.split(block, every)
    ids = list(corpus.ids)
    blocks = [ids[i:i + block] for i in range(0, len(ids), block)]
    assert list(held.ids) == [t for k, b in enumerate(blocks) if k % every == every - 1 for t in b]
    assert list(train.ids) == [t for k, b in enumerate(blocks) if k % every != every - 1 for t in b]
    assert train.types == held.types == corpus.types


def test_a_split_needs_blocks():
    with pytest.raises(ValueError, match="block"):
        tl.Corpus.from_text("abc").split(0)


@given(st.text(alphabet="ab .", min_size=6, max_size=50), st.integers(1, 5), st.data())
def test_windows_at_starts_are_the_texts(text, T, data):
    corpus = tl.Corpus.from_text(text)
    if len(text) <= T + 1:
        return
    starts = np.array(data.draw(st.lists(st.integers(0, len(text) - T - 1), min_size=1, max_size=4)))
    x, y = corpus.at(starts, T)
    for w, s in enumerate(starts):
        assert "".join(corpus.types[t] for t in x[w]) == text[s:s + T]
        assert "".join(corpus.types[t] for t in y[w]) == text[s + 1:s + T + 1]
    with pytest.raises(ValueError, match="must start"):
        corpus.at(np.array([len(text) - T]), T)


@given(st.text(alphabet="ab", max_size=14), st.text(alphabet="ab", max_size=14))
def test_the_longest_copy_is_the_longest_common_run(text, source):
    runs = [j - i for i in range(len(text)) for j in range(i + 1, len(text) + 1) if text[i:j] in source]
    assert tl.longest_copy(text, source) == max(runs, default=0)


def test_letter_share_counts_letters_and_spaces():
    assert tl.letter_share("ab c.") == pytest.approx(0.8)
    assert tl.letter_share("") == 0


@given(st.data())
def test_the_attention_shares_are_the_weights_by_hand(data):
    T, B = data.draw(st.integers(3, 8)), data.draw(st.integers(1, 3))
    text = data.draw(st.text(alphabet="ab .", min_size=B * T, max_size=B * T))
    corpus = tl.Corpus.from_text(text + " ")
    x = corpus.ids[:B * T].reshape(B, T)
    space, seps = corpus.types.index(" "), corpus.separators()
    first = data.draw(st.integers(1, T - 1))
    A = _rows(data.draw, B, T)
    shares = tl.attention_shares(A, x, space, seps, first)
    queries = [(b, i) for b in range(B) for i in range(first, T)]
    assert shares["self"][0][0] == pytest.approx(np.mean([A[0, b, i, i] for b, i in queries]))
    assert shares["previous"][0][0] == pytest.approx(np.mean([A[0, b, i, i - 1] for b, i in queries]))
    by_hand = np.mean([sum(A[0, b, i, j] for j in range(i + 1) if x[b, j] == space) for b, i in queries])
    assert shares["spaces"][0][0] == pytest.approx(by_hand)
    assert shares["word"][0][0] == pytest.approx(tl.own_word_share(A, x, seps, first)[0][0])
    uniform = np.tri(T)[None, None] / np.arange(1, T + 1)[:, None]
    for name, (share, even) in tl.attention_shares(uniform, x, space, seps, first).items():
        assert share[0] == pytest.approx(even), name


def test_a_layer_that_only_predicts_one_type_samples_it():
    params = tl.init_layer(5, 4, 6, [0, 1])
    v = params["E"][:, :1]                                   # every type's embedding the same vector
    params["E"][:] = v
    params["E_pos"][:] = 0
    params["W_U"][:] = 0
    params["W_U"][..., 3] = 1e3 * v[:, 0] / (v[:, 0] ** 2).sum(axis=-1, keepdims=True)   # score 1000 for type 3
    drawn = tl.sample(params, np.array([0, 1]), 20, attend=False)
    assert drawn.shape == (2, 20) and np.all(drawn == 3)
    free = tl.init_layer(5, 4, 6, [0, 1])
    again = tl.sample(free, np.array([0, 1, 2]), 15, seed=4)
    assert np.array_equal(again, tl.sample(free, np.array([0, 1, 2]), 15, seed=4))
    assert again.min() >= 0 and again.max() < 5 and len(set(again.ravel())) > 1


def test_a_short_run_on_the_prose_beats_the_uniform_guess_held_out():
    corpus = tl.Corpus.from_text(tl.prose()[:30_000])
    train, held = corpus.split(500)
    run = tl.train_on_text(train, held, [0, 1], T=8, d=8, steps=60, batch=16, lr=0.03, every=20,
                           probe=32, keep=(0, 60))
    assert run.held.shape == run.train.shape == (2, 4) and list(run.steps) == [0, 20, 40, 60]
    assert np.all(run.held[:, -1] < np.log(len(corpus.types)) - 0.5)
    assert sorted(run.snapshots) == [0, 60] and run.params["E"].dtype == np.float32
    np.testing.assert_array_equal(run.snapshots[60]["W_U"], run.params["W_U"])
    alone = tl.train_on_text(train, held, [1], T=8, d=8, steps=60, batch=16, lr=0.03, every=20, probe=32)
    np.testing.assert_allclose(alone.held[0], run.held[1], rtol=1e-5)

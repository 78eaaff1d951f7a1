"""Every number the lecture quotes, reproduced by the library."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import selfattn as sa


def test_hungry_weights_and_output():
    np.testing.assert_array_equal(sa.HUNGRY.raw_scores(), [-2, 4, 0, 0])
    np.testing.assert_array_equal(sa.HUNGRY.scores(), [-1, 2, 0, 0])
    assert tuple(sa.HUNGRY.weights().round(3)) == (0.038, 0.757, 0.102, 0.102)
    assert tuple(sa.HUNGRY.output().round(2)) == (0.76, 0.20)


def test_cat_sat_weights_equal_output_with_one_hot_values():
    np.testing.assert_array_equal(sa.SAT.raw_scores(), [0, 2, 1])
    assert tuple(sa.SAT.scores().round(2)) == (0.0, 1.41, 0.71)
    assert tuple(sa.SAT.weights().round(2)) == (0.14, 0.58, 0.28)
    np.testing.assert_allclose(sa.SAT.output(), sa.SAT.weights())


def test_score_spread_tracks_sqrt_dk_and_scaled_stays_at_one():
    sizes = [1, 4, 16, 64, 256]
    unscaled, scaled = sa.score_spread(sizes, n_pairs=5000, seed=1)
    np.testing.assert_allclose(unscaled / np.sqrt(sizes), 1.0, atol=0.08)
    np.testing.assert_allclose(scaled, 1.0, atol=0.08)


def test_unscaled_scores_saturate_and_starve_the_gradient_at_dk_256():
    on = sa.saturation(d_k=256, trials=400, scaled=True, seed=2)
    off = sa.saturation(d_k=256, trials=400, scaled=False, seed=2)
    assert off.max_weight > 0.8 > 0.5 > on.max_weight
    assert off.score_grad_norm < on.score_grad_norm / 2
    assert off.jacobian_norm < on.jacobian_norm / 2


@given(d_k=st.integers(1, 64), T=st.integers(1, 12), trials=st.integers(1, 30), seed=st.integers(0, 2**16),
       scaled=st.booleans())
def test_saturation_trials_are_each_trial_computed_on_its_own(d_k, T, trials, seed, scaled):
    """The trials computed at once are the lecture's trials one at a time: per trial a query, then
    its keys, then a unit direction dL/da, drawn in that order from one generator."""
    from selfattn.experiments import saturation_trials

    got = saturation_trials(d_k=d_k, T=T, trials=trials, scaled=scaled, seed=seed)
    rng = np.random.default_rng(seed)
    for t in range(trials):
        q, K = rng.standard_normal(d_k), rng.standard_normal((T, d_k))
        a = sa.softmax(K @ q / (np.sqrt(d_k) if scaled else 1.0))
        g = rng.standard_normal(T)
        J = sa.softmax_jacobian(a)
        expected = (a.max(), np.linalg.norm(J), np.linalg.norm(J.T @ (g / np.linalg.norm(g))))
        np.testing.assert_allclose([got[k][t] for k in ("max_weight", "jacobian_norm", "score_grad_norm")],
                                   expected, rtol=1e-12, atol=1e-15, err_msg=f"trial {t}")


def test_cost_model_and_crossover():
    assert sa.attention_flops(10, 512) == 2 * 2 * 10**2 * 512
    assert sa.projection_mlp_flops(10, 512) == 24 * 10 * 512**2
    for d in (64, 4096, 8192):
        T = sa.crossover_length(d)
        assert sa.attention_flops(T, d) == sa.projection_mlp_flops(T, d)
        assert sa.attention_flops(T + 1, d) > sa.projection_mlp_flops(T + 1, d)
        assert sa.attention_flops(T - 1, d) < sa.projection_mlp_flops(T - 1, d)
    assert sa.crossover_length(4096) == 24_576  # "about 25k tokens"
    assert sa.crossover_length(8192) == 49_152
    assert sa.score_matrix_bytes(4096, heads=2, bytes_per_entry=2) == 4096 * 4096 * 2 * 2


def test_porch_sentence_distance_and_receptive_field():
    toks = sa.tokenize(sa.SENTENCES["porch"])
    assert toks.index("hungry") - toks.index("cat") == 11
    assert sa.receptive_field(6) == 13 and sa.receptive_field(5) == 11
    assert sa.conv_layers_to_connect(11) == 6


def test_shape_question_T10_d512():
    T, d, d_k, d_v = 10, 512, 64, 64
    rng = np.random.default_rng(0)
    X = rng.standard_normal((T, d))
    W_Q, W_K, W_V = (rng.standard_normal((d, k)) for k in (d_k, d_k, d_v))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    assert Q.shape == K.shape == (10, 64) and V.shape == (10, 64)
    assert sa.scaled_scores(Q, K).shape == (10, 10)
    assert sa.attention(Q, K, V).shape == (10, 64)
    assert sa.lecture_shapes().tolist() == [[10, 64], [10, 64], [10, 64], [10, 10], [10, 64]]


def test_vocabulary_and_embedding_lookup():
    vocab = sa.Vocabulary.from_texts(sa.SENTENCES.values())
    ids = vocab.encode("the cat was hungry")
    E = sa.random_embeddings(len(vocab), 8, seed=3)
    X = sa.embed(E, ids)
    assert X.shape == (4, 8)
    np.testing.assert_array_equal(X[1], E[vocab.types.index("cat")])
    assert vocab.decode(ids) == ["the", "cat", "was", "hungry"]
    with pytest.raises(ValueError, match="not in the vocabulary"):
        vocab.encode("the zebra")
    with pytest.raises(ValueError, match=r"\[0, m="):
        sa.embed(E, [len(vocab)])


def test_shift_matrix_is_a_permutation():
    P = sa.shift_matrix(5, 1)
    X = np.arange(10.0).reshape(5, 2)
    np.testing.assert_array_equal(P @ X, np.roll(X, 1, axis=0))
    np.testing.assert_array_equal(P.T @ P, np.eye(5))


def test_notebook_01_states_the_receptive_field_criterion_the_widget_draws():
    """The widget lights the field of the output midway between cat and hungry; the text says so, with its L."""
    import json
    from pathlib import Path

    from selfattn import demos, lecture

    root = Path(__file__).resolve().parent.parent
    left, right = demos.PORCH_PAIR
    layers = lecture.conv_layers_to_connect(right - left)
    for folder in ("solutions", "notebooks"):
        nb = json.loads((root / folder / "attention" / "01-embeddings.ipynb").read_text(encoding="utf-8"))
        prose = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "first sees" not in prose, f"{folder}: the old criterion (when hungry first sees cat)"
        assert "midway between *cat* and *hungry*" in prose, f"{folder}: the widget's criterion is not stated"
        assert f"from L = {layers} layers on" in prose, f"{folder}: the text should say L = {layers}"

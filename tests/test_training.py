"""The backward pass of chapter 10 against finite differences (hypothesis), and the chapter's claims
on the very functions and settings the chapter calls."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import selfattn as sa
from selfattn import demos, training

moderate = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def central_difference(f, x, h=1e-6):
    """Gradient of the scalar function ``f`` at ``x`` by central differences (an oracle independent
    of any formula)."""
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        grad[idx] = (f(up) - f(down)) / (2 * h)
    return grad


@st.composite
def scores_and_upstream(draw, max_n=8):
    n = draw(st.integers(1, max_n))
    s = draw(arrays(np.float64, (n,), elements=moderate))
    g = draw(arrays(np.float64, (n,), elements=moderate))
    return s, g


@given(scores_and_upstream())
def test_softmax_vjp_is_the_gradient_of_g_dot_softmax(sg):
    s, g = sg
    numeric = central_difference(lambda x: float(g @ sa.softmax(x)), s)
    np.testing.assert_allclose(training.softmax_vjp(sa.softmax(s), g), numeric, atol=1e-7)


@given(scores_and_upstream())
def test_softmax_vjp_is_the_jacobian_product_without_the_jacobian(sg):
    s, g = sg
    a = sa.softmax(s)
    np.testing.assert_allclose(training.softmax_vjp(a, g), sa.softmax_jacobian(a).T @ g, atol=1e-12)


def test_softmax_vjp_works_row_by_row():
    rng = np.random.default_rng(1)
    A, G = sa.softmax(rng.standard_normal((4, 6))), rng.standard_normal((4, 6))
    rows = np.stack([training.softmax_vjp(a, g) for a, g in zip(A, G, strict=True)])
    np.testing.assert_allclose(training.softmax_vjp(A, G), rows, atol=1e-15)


def test_softmax_vjp_names_mismatched_shapes_in_one_line():
    with pytest.raises(ValueError, match=r"same shape, got \(3,\) and \(4,\)") as err:
        training.softmax_vjp(np.ones(3) / 3, np.ones(4))
    assert "\n" not in str(err.value)


@st.composite
def heads(draw):
    T, d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    Q, K = (draw(arrays(np.float64, (T, d_k), elements=moderate)) for _ in range(2))
    V, R = (draw(arrays(np.float64, (T, d_v), elements=moderate)) for _ in range(2))
    return Q, K, V, R, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(heads())
def test_attention_backward_matches_finite_differences(head):
    Q, K, V, R, causal, scaled = head
    mask = sa.causal_mask(len(Q)) if causal else None

    def loss(Q_, K_, V_):
        return float(np.sum(training.attention_forward(Q_, K_, V_, mask, scaled)[0] * R))

    _, A = training.attention_forward(Q, K, V, mask, scaled)
    grads = training.attention_backward(Q, K, V, A, R, scaled)
    for got, numeric in ((grads.Q, central_difference(lambda x: loss(x, K, V), Q)),
                         (grads.K, central_difference(lambda x: loss(Q, x, V), K)),
                         (grads.V, central_difference(lambda x: loss(Q, K, x), V))):
        np.testing.assert_allclose(got, numeric, atol=1e-5, rtol=1e-5)


def test_the_forward_pass_is_the_packages_attention():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((5, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    mask = sa.causal_mask(5)
    np.testing.assert_allclose(training.attention_forward(Q, K, V, mask)[0], sa.attention(Q, K, V, mask), atol=1e-12)


def test_the_chapters_gradient_check_is_at_rounding_level():
    assert training.gradient_check(T=5, d_k=4, d_v=3, causal=True, seed=0) < 1e-7


# ------------------------------------------------------------------ the chapter's claims, its settings
def chapter_runs(seed=0):
    """The chapter's two runs (same initialisation and orders, the same score step), for one seed."""
    step = training.score_step(demos.LOOKUP_RATE, 256, scaled=True)
    kw = dict(tau=demos.LOOKUP_TAU, d_k=256, steps=demos.LOOKUP_STEPS, seed=seed)
    return (training.train_lookup(scaled=True, lr=training.rate_for_score_step(step, 256, True), **kw),
            training.train_lookup(scaled=False, lr=training.rate_for_score_step(step, 256, False), **kw))


@pytest.fixture(scope="module")
def runs():
    return chapter_runs(0)


@given(st.floats(1e-6, 1e3), st.integers(1, 1024), st.booleans())
def test_the_score_step_is_the_rate_times_the_squared_factor_and_inverts(lr, d_k, scaled):
    step = training.score_step(lr, d_k, scaled)
    assert step == pytest.approx(lr / d_k if scaled else lr, rel=1e-12)
    assert training.rate_for_score_step(step, d_k, scaled) == pytest.approx(lr, rel=1e-12)


def test_a_step_moves_the_unscaled_heads_scores_d_k_times_as_far_at_the_same_rate():
    """The confound the chapter removes: one step at the same weights, the same gradient at the softmax's
    input and the same learning rate, measured on the softmax's input (first order, tiny rate)."""
    rng = np.random.default_rng(3)
    m, d_k, lr = 5, 64, 1e-7
    W_Q, W_K, G = rng.standard_normal((m, d_k)), rng.standard_normal((m, d_k)), rng.standard_normal((m, m))
    moved = []
    for scaled in (True, False):
        c = 1 / np.sqrt(d_k) if scaled else 1.0
        Q, K = W_Q - lr * c * G @ W_K, W_K - lr * c * G.T @ W_Q     # the backward pass's dQ = c G K, dK = c Gᵀ Q
        moved.append(np.linalg.norm(c * Q @ K.T - c * W_Q @ W_K.T))
    assert moved[1] / moved[0] == pytest.approx(d_k, rel=1e-4)
    assert training.score_step(1.0, d_k, False) / training.score_step(1.0, d_k, True) == pytest.approx(d_k)


def test_forward_and_backward_take_leading_batch_axes():
    rng = np.random.default_rng(4)
    Q, K, V, R = (rng.standard_normal((3, 5, w)) for w in (4, 4, 2, 2))
    for scaled in (True, False):
        O, A = training.attention_forward(Q, K, V, scaled=scaled)
        grads = training.attention_backward(Q, K, V, A, R, scaled=scaled)
        for b in range(3):
            O_b, A_b = training.attention_forward(Q[b], K[b], V[b], scaled=scaled)
            g_b = training.attention_backward(Q[b], K[b], V[b], A_b, R[b], scaled=scaled)
            np.testing.assert_allclose(O[b], O_b, atol=1e-14)
            for got, want in ((grads.Q, g_b.Q), (grads.K, g_b.K), (grads.V, g_b.V), (grads.S, g_b.S)):
                np.testing.assert_allclose(got[b], want, atol=1e-14)


def test_the_order_the_types_are_shown_in_changes_nothing_but_rounding():
    kw = dict(tau=demos.LOOKUP_TAU, d_k=32, steps=40, lr=2.0, seed=5, snapshots=[0, 40])
    for scaled in (True, False):
        shuffled = training.train_lookup(scaled=scaled, **kw)
        in_order = training.train_lookup(scaled=scaled, shuffle=False, **kw)
        np.testing.assert_allclose(in_order.loss, shuffled.loss, rtol=1e-12)
        np.testing.assert_allclose(in_order.snapshots, shuffled.snapshots, atol=1e-12)


def test_the_sweeps_seed_is_train_lookups_run_at_the_same_score_step():
    steps_at = [2.0 ** -8, 2.0 ** -5]
    sweep = training.sweep_lookup(demos.LOOKUP_TAU, steps_at, [2, 7], d_k=32, steps=30)
    for head, scaled in enumerate((True, False)):
        for r, e in enumerate(steps_at):
            for n, seed in enumerate((2, 7)):
                run = training.train_lookup(demos.LOOKUP_TAU, d_k=32, scaled=scaled, steps=30, seed=seed,
                                            lr=training.rate_for_score_step(e, 32, scaled), snapshots=[0, 30])
                np.testing.assert_allclose(sweep.loss[head, r, n], run.loss, rtol=1e-12)
                np.testing.assert_allclose(sweep.target_weight[head, r, n], run.target_weight, atol=1e-12)
                np.testing.assert_allclose(sweep.born_weights[head, n], run.snapshots[0], atol=1e-12)
                np.testing.assert_allclose(sweep.final_weights[head, r, n], run.snapshots[-1], atol=1e-12)


def test_a_sweep_needs_seeds_and_score_steps():
    with pytest.raises(ValueError, match="at least one seed and one score step"):
        training.sweep_lookup(demos.LOOKUP_TAU, [], [0])


def test_the_chapters_claim_on_a_small_sweep():
    """The chapter's claim, on fewer seeds and steps: at the same score step the scaled head learns the
    lookup in every seed and the unscaled one in none, which is born with most queries saturated."""
    sweep = training.sweep_lookup(demos.LOOKUP_TAU, [2.0 ** -8, 2.0 ** -6], range(8), d_k=256, steps=200)
    share = sweep.reached(training.REACHED).mean(axis=2)
    np.testing.assert_array_equal(share, [[1, 1], [0, 0]])
    saturated = (sweep.born_weights.max(axis=-1) > 0.99).mean(axis=(1, 2))
    assert saturated[0] == 0 and saturated[1] > 0.5, saturated
    assert sweep.target_weight[1].max() < training.REACHED


def test_the_chapters_run_learns_with_the_scaling_and_not_without(runs):
    on, off = runs
    assert off.max_weight[0] > 0.8 > 0.5 > on.max_weight[0], (off.max_weight[0], on.max_weight[0])
    assert on.loss[-1] < 1e-3 * on.loss[0], (on.loss[0], on.loss[-1])
    assert off.loss[-1] < off.loss[0], (off.loss[0], off.loss[-1])     # it does descend, but not to the lookup
    assert off.target_weight[-1] < training.REACHED <= on.target_weight[-1]


def test_still_share_counts_the_steps_that_do_not_move():
    np.testing.assert_array_equal(training.moving_steps([2.0, 2.0, 1.0, 1.0, 1.0]), [1])
    assert training.still_share([2.0, 2.0, 1.0, 1.0, 1.0]) == 0.75
    assert training.still_share([3.0, 2.0, 1.0]) == 0.0


def test_the_scaled_head_learns_the_lookup(runs):
    on, _ = runs
    final = on.snapshots[-1]
    assert on.snapshot_steps[-1] == demos.LOOKUP_STEPS
    np.testing.assert_array_equal(final.argmax(axis=1), demos.LOOKUP_TAU)
    np.testing.assert_allclose(final.sum(axis=1), 1.0, atol=1e-12)


def test_the_lookup_slider_shows_the_weights_over_training():
    box = demos.lookup_training(d_k=256, scaled=True, seed=0)
    slider, stack = box.children
    assert slider.description == "training step"
    labels = list(slider._options_labels)
    assert labels == [str(t) for t in demos.LOOKUP_FRAMES] and len(labels) == len(stack.children)
    assert labels[0] == "0" and labels[-1] == str(demos.LOOKUP_STEPS)
    captions = [re.search(r"<figcaption>(.*?)</figcaption>", f.value).group(1) for f in stack.children]
    on_target = [float(re.search(r"Mean weight on the target: ([\d.]+)", c).group(1)) for c in captions]
    assert on_target[-1] > 0.95 > 0.5 > on_target[0], on_target
    assert f"print-frame-{len(labels) - 1}" in slider._dom_classes  # the printed book shows the learned head


def test_snapshot_steps_outside_the_run_are_named():
    with pytest.raises(ValueError, match=r"snapshot steps must lie in 0\.\.5"):
        training.train_lookup(demos.LOOKUP_TAU, steps=5, snapshots=[0, 6])


def test_teacher_forcing_one_pass_equals_t_passes():
    assert training.teacher_forcing_gap(T=8, d_model=6, d_k=4, seed=0) < 1e-12
    assert training.teacher_forcing_gap(T=1) == 0.0


@given(st.integers(1, 9), st.integers(0, 50))
def test_teacher_forcing_trains_every_position_with_one_backward_pass(T, seed):
    loss_gap, grad_gap = training.teacher_forcing_gradient_gap(T=T, d_k=3, d_v=2, seed=seed)
    assert loss_gap < 1e-12 and grad_gap < 1e-12, (loss_gap, grad_gap)

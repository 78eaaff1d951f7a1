"""The course's interactive figures, one function each, shared by the book and the notebooks.

Every function returns a widget whose frames are switched in the browser (see
:mod:`selfattn.widgets`), so it responds on the static site and in JupyterLab alike; in a notebook
each frame is drawn when first shown, on the book's pages all of them up front.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import ipywidgets as W
import numpy as np
from matplotlib.patches import Rectangle

from . import cost, experiments, heads, lecture, numerics, text, training
from .plots import COLORS, heatmap, new_figure, weights_bar
from .widgets import figure_frame, grid_frames, mark_print_frame, slider_frames, toggle_frames

__all__ = [
    "PRINT_FRAMES",
    "cost_calculator",
    "head_maps",
    "lookup_sharpness",
    "lookup_training",
    "masks",
    "receptive_field",
    "receptive_field_frame",
    "saturation",
    "score_histograms",
    "score_matrices",
    "temperature",
    "word_orders",
    "word_orders_positions",
]


PORCH = text.tokenize(text.SENTENCES["porch"])
PORCH_PAIR = (PORCH.index("cat"), PORCH.index("hungry"))  # the two words chapter 1 connects
COST_WIDTHS = [768, 2048, 4096, 8192]
#: Chapter 10's lookup: a target map on 8 types (0-based), learned in LOOKUP_STEPS steps at d_k = 256.
LOOKUP_TAU = (2, 0, 3, 1, 5, 7, 4, 6)
LOOKUP_STEPS = 400
LOOKUP_RATE = 4.0
#: The steps its slider shows: most of the learning happens in the first few.
LOOKUP_FRAMES = (0, 1, 2, 3, 4, 6, 10, 50, LOOKUP_STEPS)
#: The sharpness factors of chapter 9's slider; the code printed above it runs every other one
#: (``SHARPNESS[::2]``), so the printed numbers and the slider cover the same range.
SHARPNESS = (1, 2, 4, 8, 16, 32, 64)
COST_LENGTHS = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]

# The frame the printed book shows of each widget: widget -> {control's description: option label}.
# It is the frame its chapter discusses; scripts/book_pdf.py sets every control to it before printing.
PRINT_FRAMES: dict[str, dict[str, str]] = {
    # the first depth at which one output's field holds both cat and hungry (chapter 1's L)
    "receptive_field": {"layers L": str(lecture.conv_layers_to_connect(PORCH_PAIR[1] - PORCH_PAIR[0]))},
    # shared vectors: each token scores itself highest, the flaw chapter 2 fixes with W_Q, W_K
    "score_matrices": {"scores:": "X Xᵀ"},
    # a low temperature: the weights sharpen towards one-hot (θ = 1 is chapter 3's own figure)
    "temperature": {"temperature θ": "0.25"},
    # four heads: chapter 3's figure already prints the two-head split
    "head_maps": {"heads h:": "4"},
    # d_k = 64, the width whose measured spread chapter 4 compares with √64 = 8
    "score_histograms": {"head width d_k": "64"},
    # unscaled at d_k = 256, the saturated case of chapter 5's demonstration
    "saturation": {"scores:": "unscaled", "head width d_k": "256"},
    # the reversed sentence of chapter 6: same outputs, rows reordered
    "word_orders": {"word order:": "man bites dog"},
    # the same reversed sentence with position encodings: the outputs change, not only their order
    "word_orders_positions": {"word order:": "man bites dog"},
    # the causal mask, chapter 7's main case
    "masks": {"mask:": "causal"},
    # d = 4096 at the first length past chapter 8's crossover: attention has just taken over
    "cost_calculator": {"width d:": "4096",
                        "sequence length T": f"{min(T for T in COST_LENGTHS if T > cost.crossover_length(4096)):,}"},
    # the sharpest query: the blend has become a lookup of the cat's value
    "lookup_sharpness": {"sharpness β": f"{SHARPNESS[-1]}"},
    # the last step: the learned head reads each type's target (chapter 10's end state)
    "lookup_training": {"training step": str(LOOKUP_STEPS)},
}


def _print_marked(name: str, box: W.VBox) -> W.VBox:
    """Mark the controls of widget ``name`` with the frame :data:`PRINT_FRAMES` declares for it."""
    wanted = dict(PRINT_FRAMES[name])
    for control in box.children:
        label = wanted.pop(getattr(control, "description", None), None)
        if label is not None:
            mark_print_frame(control, list(control._options_labels).index(label))
    if wanted:
        raise ValueError(f"{name}: PRINT_FRAMES names controls the widget lacks: {sorted(wanted)}")
    return box


def receptive_field_frame(L: int, tokens: Sequence[str], left: int, right: int) -> dict[str, int | bool]:
    """What one frame of :func:`receptive_field` shows, as numbers (positions 1-based).

    The lecture's criterion: the words at ``left`` and ``right`` (0-based) can influence each
    other once some output's receptive field of ``2L + 1`` positions holds both. The frame shows
    the field of the output midway between them, the one that reaches both first.
    """
    centre = (left + right + 1) // 2
    reach = lecture.receptive_field(L) // 2
    first, last = max(0, centre - reach), min(len(tokens) - 1, centre + reach)
    return {
        "L": L,
        "field": lecture.receptive_field(L),
        "centre": centre + 1,
        "first": first + 1,
        "last": last + 1,
        "lit": last - first + 1,
        "connected": first <= left and right <= last,
    }


def receptive_field_table(max_layers: int = 8) -> str:
    """The frames of :func:`receptive_field` as an HTML table, printed in their place on paper.

    One row per slider position ``L = 0 .. max_layers - 1``: the field, the positions it lights and
    whether cat and hungry are both inside. Wrapped in ``div.print-only`` (the course stylesheet shows
    it in print only, where the slider cannot move).
    """
    left, right = PORCH_PAIR
    rows = []
    for L in range(max_layers):
        f = receptive_field_frame(L, PORCH, left, right)
        rows.append(f"<tr><td>{L}</td><td>{f['field']}</td><td>{f['first']} to {f['last']}</td>"
                    f"<td>{'yes' if f['connected'] else 'no'}</td></tr>")
    return ('<div class="print-only"><table class="table"><caption>What the slider shows at each '
            f"L: the field of the output at position {receptive_field_frame(0, PORCH, left, right)['centre']}"
            "</caption><thead><tr><th>layers L</th><th>field (positions)</th><th>lit positions</th>"
            "<th>cat and hungry inside</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")


def receptive_field(max_layers: int = 8) -> W.VBox:
    """Slider over stacked 3-tap convolutions: from how many layers on do 'cat' and 'hungry' share a field?"""
    porch = PORCH
    left, right = PORCH_PAIR

    def frame(L: int):
        f = receptive_field_frame(L, porch, left, right)
        seen = [f["first"] <= i + 1 <= f["last"] for i in range(len(porch))]
        colors = [COLORS["orange"] if i in (left, right) and s else COLORS["sky"] if s else "#eeeeee"
                  for i, s in enumerate(seen)]
        fig, (ax,) = new_figure(7.5, 2.1)
        ax.bar(range(len(porch)), np.ones(len(porch)), color=colors, edgecolor="white")
        for i, w in enumerate(porch):
            ax.text(i, 0.5, w, rotation=90, ha="center", va="center", fontsize=9, color="black")
        ax.set_xticks(range(len(porch)), range(1, len(porch) + 1))
        ax.set_yticks([])
        ax.set_xlabel(f"token position (the output shown is at position {f['centre']})")
        verdict = ("cat and hungry share this field: they are connected" if f["connected"]
                   else "no field holds both cat and hungry yet")
        ax.set_title(f"L = {L}: receptive field {f['field']} positions; {verdict}", fontsize=10)
        caption = (f"L = {L} stacked 3-tap layers: the output at position {f['centre']} sees a receptive field of "
                   f"{f['field']} positions, {f['lit']} of them inside the sentence (positions {f['first']} to "
                   f"{f['last']}, lit). "
                   + ("Cat and hungry are both inside: connected." if f["connected"]
                      else f"Cat (position {left + 1}) and hungry (position {right + 1}) are not both inside."))
        return figure_frame(fig, alt=caption, caption=caption)

    return _print_marked("receptive_field", slider_frames(list(range(max_layers)), frame, "layers L", start=1))


def score_matrices() -> W.VBox:
    """Toggle X Xᵀ against Q Kᵀ for 'the cat was hungry'."""
    vocab = text.Vocabulary.from_texts([text.SENTENCES["hungry"]])
    X = text.embed(text.random_embeddings(len(vocab), 8, seed=4), vocab.encode(text.SENTENCES["hungry"]))
    W_Q, W_K = np.random.default_rng(5).standard_normal((2, 8, 8)) / np.sqrt(8)
    toks = list(vocab.types)

    def frame(i: int):
        S = X @ X.T if i == 0 else (X @ W_Q) @ (X @ W_K).T
        name = "X Xᵀ (shared vectors)" if i == 0 else "Q Kᵀ (separate projections)"
        fig, (ax,) = new_figure(4.6, 3.4)
        heatmap(ax, S, toks, toks, title=name, cmap="RdBu_r", vmin=-12, vmax=12)
        sym = "symmetric, largest entries on the diagonal" if i == 0 else "not symmetric"
        return figure_frame(fig, alt=f"Score matrix {name} for 'the cat was hungry': {sym}.")

    return _print_marked("score_matrices", toggle_frames(["X Xᵀ", "Q Kᵀ"], frame, "scores:"))


def temperature() -> W.VBox:
    """Temperature slider on the 'hungry' query's weights."""
    ex = lecture.HUNGRY

    def frame(theta: float):
        w = numerics.softmax(ex.scores() / theta)
        fig, (ax,) = new_figure(5, 2.8)
        weights_bar(ax, ex.tokens, w, title=f"temperature θ = {theta:g}", highlight=1)
        return figure_frame(fig, alt=f"Weights of 'hungry' at temperature {theta:g}: "
                            + ", ".join(f"{t} {a:.2f}" for t, a in zip(ex.tokens, w, strict=True)))

    thetas = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    return _print_marked("temperature", slider_frames(thetas, frame, "temperature θ", start=3, fmt=lambda t: f"{t:g}"))


#: The head counts :func:`head_maps` offers for its layer of width 8 (head widths 8, 4, 2).
HEAD_COUNTS = (1, 2, 4)


def head_maps_frame(h: int, seed: int = 7) -> tuple[list[str], np.ndarray]:
    """What one frame of :func:`head_maps` shows: the words of 'the cat was hungry' and the weights of
    its ``h`` heads, shape (h, T, T), computed by :func:`selfattn.heads.multi_head_weights`.

    The layer is chapter 3's figure of two heads (width 8, embeddings of seed 4, projections of ``seed``
    scaled by 2/√8); only the number of heads it is split into changes.
    """
    vocab = text.Vocabulary.from_texts([text.SENTENCES["hungry"]])
    ids = vocab.encode(text.SENTENCES["hungry"])
    X = text.embed(text.random_embeddings(len(vocab), 8, seed=4), ids)
    W_Q, W_K = np.random.default_rng(seed).standard_normal((2, 8, 8)) / np.sqrt(8) * 2
    return list(vocab.decode(ids)), heads.multi_head_weights(X, W_Q, W_K, h=h)


def head_maps(counts: Sequence[int] = HEAD_COUNTS) -> W.VBox:
    """Buttons for the number of heads: the attention weights of each head of one layer of width 8."""
    def frame(i: int):
        h = counts[i]
        words, A = head_maps_frame(h)  # (h, T, T)
        rows = 1 if h <= 2 else 2
        cols = h // rows
        fig, axes = new_figure(4.2 * cols, 3.4 * rows, ncols=cols, nrows=rows)
        for r, ax in enumerate(axes):
            heatmap(ax, A[r], words, words, title=f"head {r + 1} of {h} (d_k = {8 // h})", vmin=0, vmax=1)
        reads = "; ".join(f"head {r + 1}: " + ", ".join(f"{q} → {words[int(np.argmax(A[r, i]))]}"
                                                        for i, q in enumerate(words)) for r in range(h))
        caption = (f"{h} head{'s' if h > 1 else ''} of width d_k = {8 // h} splitting one layer of width 8 on "
                   f"'the cat was hungry'; each row sums to one. The key each query weighs most: {reads}.")
        return figure_frame(fig, alt=caption, caption=caption)

    return _print_marked("head_maps", toggle_frames([str(h) for h in counts], frame, "heads h:"))


def score_histograms(
    sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), n_pairs: int = 5000, seed: int = 0
) -> W.VBox:
    """Head-width slider: histograms of unscaled and scaled scores of ``n_pairs`` random pairs.

    The pairs are those of :func:`selfattn.experiments.score_spread` with the same arguments (chapter 4's
    table), so every frame's standard deviation is the one the chapter quotes.
    """
    draws = {d_k: np.einsum("nd,nd->n", q, k) for d_k, q, k in experiments.score_pairs(sizes, n_pairs, seed)}
    unscaled, scaled = experiments.score_spread(sizes, n_pairs, seed)
    spreads = {d_k: (u, s) for d_k, u, s in zip(sizes, unscaled, scaled, strict=True)}

    def frame(d_k: int):
        dots = draws[d_k]  # (n_pairs,), drawn as histograms
        spread, spread_scaled = spreads[d_k]
        fig, (ax,) = new_figure(5.6, 3.0)
        bins = np.linspace(-40, 40, 81)
        ax.hist(np.clip(dots, -40, 40), bins=bins, histtype="stepfilled", color=COLORS["red"], alpha=0.6,
                label="q·k")
        ax.hist(dots / np.sqrt(d_k), bins=bins, histtype="stepfilled", color=COLORS["blue"], alpha=0.6,
                label="q·k / √d_k")
        ax.set_xlabel("score")
        ax.set_ylabel(f"count of {n_pairs:,} pairs")
        ax.set_title(f"d_k = {d_k}: std {spread:.2f} unscaled, {spread_scaled:.2f} scaled")
        ax.legend(frameon=False)
        return figure_frame(fig, alt=f"Histograms at d_k = {d_k}: unscaled scores spread with standard deviation "
                            f"{spread:.2f}, scaled scores with {spread_scaled:.2f}.")

    start = list(sizes).index(16) if 16 in sizes else 0
    return _print_marked("score_histograms", slider_frames(list(sizes), frame, "head width d_k", start=start))


def saturation(widths: Sequence[int] = (4, 16, 64, 256, 1024), T: int = 16, trials: int = 2000,
               seed: int = 0) -> W.VBox:
    """Scaled/unscaled toggle and head-width slider: largest weights and Jacobian norms over ``trials``.

    Each frame is :func:`selfattn.experiments.saturation_trials` with the same arguments, the
    computation chapter 5 quotes at ``d_k = 256``.
    """
    @functools.cache
    def trials_of(i: int, d_k: int) -> dict[str, np.ndarray]:  # run when its frame is first drawn
        return experiments.saturation_trials(d_k=d_k, T=T, trials=trials, scaled=i == 0, seed=seed)

    def frame(i: int, j: int):
        d_k = widths[j]
        run = trials_of(i, d_k)
        top, norm = float(np.median(run["max_weight"])), float(np.median(run["jacobian_norm"]))
        mode = "scaled" if i == 0 else "unscaled"
        fig, (ax,) = new_figure(5.6, 2.8)
        ax.hist(run["max_weight"], bins=np.linspace(0, 1, 41), histtype="stepfilled",
                color=COLORS["blue" if i == 0 else "red"])
        ax.set_xlim(0, 1)
        ax.set_xlabel("largest attention weight of the query")
        ax.set_ylabel(f"trials of {trials:,}")
        ax.set_title(f"{mode}, d_k = {d_k}: median largest weight {top:.3f}, median ‖J‖ = {norm:.3f}", fontsize=10)
        return figure_frame(fig, alt=f"{mode.capitalize()} scores at d_k = {d_k}, {trials:,} queries against {T} "
                            f"keys: median largest weight {top:.3f}, median Jacobian norm {norm:.3f}.")

    mode = W.ToggleButtons(options=[("scaled", 0), ("unscaled", 1)], index=0, description="scores:")
    width = W.SelectionSlider(options=[(str(w), j) for j, w in enumerate(widths)], index=2,
                              description="head width d_k", style={"description_width": "initial"})
    return _print_marked("saturation", grid_frames(mode, width, frame, 2, len(widths)))


def word_orders(seed: int = 0) -> W.VBox:
    """Every order of 'dog bites man': the output rows move with their words and never change."""
    return _word_orders(seed, positions=False)


def word_orders_positions(seed: int = 0) -> W.VBox:
    """Every order of 'dog bites man' with each position's sinusoidal encoding
    (:func:`selfattn.lecture.sinusoidal_positions`) added to its token's vector: a word's output row
    changes with the place it stands in."""
    return _word_orders(seed, positions=True)


def _word_orders(seed: int, positions: bool) -> W.VBox:
    """Every order of 'dog bites man' through one attention layer, with or without position encodings."""
    vocab = text.Vocabulary.from_texts([text.SENTENCES["dog_bites_man"]])
    X = text.embed(text.random_embeddings(len(vocab), 8, seed=seed), vocab.encode(text.SENTENCES["dog_bites_man"]))
    W_Q, W_K, W_V = np.random.default_rng(seed + 1).standard_normal((3, 8, 8)) / np.sqrt(8)
    words = list(vocab.decode(vocab.encode(text.SENTENCES["dog_bites_man"])))
    orders = list(itertools.permutations(range(len(words))))
    where = lecture.sinusoidal_positions(len(words), 8) if positions else np.zeros((len(words), 8))  # (3, 8)

    def frame(i: int):
        perm = list(orders[i])
        Z = X[perm] + where
        out = numerics.attention(Z @ W_Q, Z @ W_K, Z @ W_V)
        fig, (ax,) = new_figure(6.2, 2.2)
        label = " ".join(words[p] for p in perm)
        heatmap(ax, out, [words[p] for p in perm], [str(j) for j in range(8)], cmap="RdBu_r", vmin=-1.5, vmax=1.5,
                xlabel="output coordinate", ylabel="token", title=label)
        if positions:
            alt = (f"Outputs for the order '{label}' with position encodings added: each word's output row "
                   "depends on where the word stands, not only on the word.")
        else:
            alt = f"Outputs for the order '{label}': each word keeps the same output row, only the row order changes."
        return figure_frame(fig, alt=alt)

    labels = [" ".join(words[p] for p in o) for o in orders]
    return _print_marked("word_orders_positions" if positions else "word_orders",
                         toggle_frames(labels, frame, "word order:"))


def masks() -> W.VBox:
    """Toggle no mask / causal / padding: which weights a mask forbids, drawn as masked, not as zeros."""
    toks = text.tokenize("the cat sat on mats")
    X = text.embed(text.random_embeddings(5, 8, seed=3), np.arange(5))
    W_Q, W_K = np.random.default_rng(4).standard_normal((2, 8, 8)) / np.sqrt(8)
    Q, K = X @ W_Q, X @ W_K
    length = 3
    padded = [*toks[:length], *["<pad>"] * (len(toks) - length)]  # "the cat sat" padded to 5 positions
    choices = [
        ("no mask", None, toks,
         "No mask: every token may read every token, so no weight is forced to zero; each row sums to one."),
        ("causal", numerics.causal_mask(5), toks,
         "Causal mask: the cells above the diagonal (later tokens) are masked, marked ×, and get weight exactly "
         "zero; each row's remaining weights sum to one."),
        (f"padding (length {length})", numerics.padding_mask([length], 5)[0][None, :], padded,
         "Padding mask: 'the cat sat' padded to 5 positions; the two <pad> keys are masked, marked ×, and get "
         "weight exactly zero; each row's remaining weights sum to one."),
    ]

    def frame(i: int):
        name, M, labels, caption = choices[i]
        A = numerics.attention_weights(Q, K, M)
        forbidden = None if M is None else np.isneginf(np.broadcast_to(M, A.shape))
        fig, (ax,) = new_figure(4.8, 3.6)
        heatmap(ax, A, labels, labels, title=name, vmin=0, vmax=1, masked=forbidden)
        return figure_frame(fig, alt=caption, caption=caption)

    return _print_marked("masks", toggle_frames([c[0] for c in choices], frame, "mask:"))


def cost_legend(share: float) -> str:
    """The key of :func:`cost_calculator`'s bar: a swatch of each colour, what it counts and its share.

    Parameters
    ----------
    share : float
        Attention's share of the layer's FLOPs, in [0, 1].
    """
    def item(colour: str, what: str, part: float) -> str:
        swatch = (f'<span aria-hidden="true" style="display:inline-block;width:0.9em;height:0.9em;'
                  f'vertical-align:-0.1em;margin-right:0.3em;border:1px solid #888;'
                  f'background:{COLORS[colour]}"></span>')
        return (f'<span class="cost-legend-item" style="margin-right:1.2em;white-space:nowrap">'
                f'{swatch}{what} ({100 * part:.0f}%)</span>')

    return (f'<p class="cost-legend" style="margin:0.3em 0 0">{item("red", "attention", share)} '
            f'{item("blue", "projections + MLP", 1 - share)}</p>')


def cost_calculator() -> W.VBox:
    """Width buttons and a length slider: FLOPs of attention against projections and MLP."""
    widths, lengths = COST_WIDTHS, COST_LENGTHS

    def frame(i: int, j: int):
        d, T = widths[i], lengths[j]
        att, rest = cost.attention_flops(T, d), cost.projection_mlp_flops(T, d)
        share = att / (att + rest)
        mem = cost.score_matrix_bytes(T, heads=1, bytes_per_entry=2) / 2**20
        bar = (f'<div role="img" aria-label="{100 * share:.0f}% attention, {100 * (1 - share):.0f}% projections + MLP" '
               f'style="display:flex;width:100%;max-width:420px;height:22px;border:1px solid #888">'
               f'<div style="width:{100 * share:.1f}%;background:{COLORS["red"]}"></div>'
               f'<div style="width:{100 * (1 - share):.1f}%;background:{COLORS["blue"]}"></div></div>'
               + cost_legend(share))
        verdict = "attention dominates" if T > cost.crossover_length(d) else "projections + MLP dominate"
        return W.HTML(
            f"<p><b>d = {d}, T = {T:,}</b>: attention {att:.3g} FLOPs, projections + MLP {rest:.3g} FLOPs "
            f"({100 * share:.0f}% attention: {verdict}; crossover at T = {cost.crossover_length(d):,}).</p>{bar}"
            f"<p>One T×T score matrix in 16-bit floats: {mem:,.0f} MiB per head.</p>")

    d_pick = W.ToggleButtons(options=[(str(d), i) for i, d in enumerate(widths)], index=2, description="width d:")
    T_pick = W.SelectionSlider(options=[(f"{T:,}", j) for j, T in enumerate(lengths)], index=5,
                                 description="sequence length T", style={"description_width": "initial"})
    return _print_marked("cost_calculator", grid_frames(d_pick, T_pick, frame, len(widths), len(lengths)))


def lookup_sharpness() -> W.VBox:
    """Scale the 'hungry' query by beta: the blend turns into a lookup of the cat's value."""
    ex = lecture.HUNGRY

    def frame(beta: float):
        w = numerics.attention_weights(beta * ex.q[None, :], ex.K)[0]
        fig, (ax,) = new_figure(5, 2.8)
        weights_bar(ax, ex.tokens, w, title=f"query scaled by β = {beta:g}", highlight=1)
        return figure_frame(fig, alt=f"With the query scaled by {beta:g} the weight on 'cat' is {w[1]:.4f}.")

    widget = slider_frames(list(SHARPNESS), frame, "sharpness β", start=0, fmt=lambda b: f"{b:g}")
    return _print_marked("lookup_sharpness", widget)


def lookup_training_table(d_k: int = 256, scaled: bool = True, frames: Sequence[int] = LOOKUP_FRAMES,
                          seed: int = 0) -> str:
    """The frames of :func:`lookup_training` as an HTML table, printed in their place on paper.

    One row per slider position: the training step, the mean weight on the target and the loss, from
    the same run (same arguments) the slider shows. Wrapped in ``div.print-only``, like
    :func:`receptive_field_table`.
    """
    run = training.train_lookup(LOOKUP_TAU, d_k=d_k, scaled=scaled, steps=LOOKUP_STEPS, lr=LOOKUP_RATE,
                                seed=seed, snapshots=frames)
    rows = "".join(f"<tr><td>{int(s):,}</td><td>{run.target_weight[int(s)]:.2f}</td>"
                   f"<td>{run.loss[int(s)]:.3f}</td></tr>" for s in run.snapshot_steps)
    return ('<div class="print-only"><table class="table"><caption>What the slider shows at each training step '
            f"(d_k = {d_k}, {'scaled' if scaled else 'unscaled'}, seed {seed})</caption><thead><tr>"
            "<th>training step</th><th>mean weight on the target</th><th>loss</th></tr></thead><tbody>"
            + rows + "</tbody></table></div>")


def lookup_training(d_k: int = 256, scaled: bool = True, frames: Sequence[int] = LOOKUP_FRAMES,
                    seed: int = 0) -> W.VBox:
    """Slider over training steps: a head's weights as it learns Problem 20's lookup by gradient descent.

    Frame ``i`` is the weights at step ``frames[i]`` of :func:`selfattn.training.train_lookup` on
    :data:`LOOKUP_TAU` (rows: query types, columns: key types; the target of each row is outlined).
    """
    run = training.train_lookup(LOOKUP_TAU, d_k=d_k, scaled=scaled, steps=LOOKUP_STEPS, lr=LOOKUP_RATE,
                                seed=seed, snapshots=frames)
    types = [str(t + 1) for t in range(len(LOOKUP_TAU))]
    at = {int(s): i for i, s in enumerate(run.snapshot_steps)}

    def frame(step: int):
        A = run.snapshots[at[step]]
        on_target = float(run.target_weight[step])
        fig, (ax,) = new_figure(4.4, 3.6)
        heatmap(ax, A, types, types, title=f"step {step}: mean weight on the target {on_target:.2f}",
                vmin=0, vmax=1, fmt="{:.1f}", xlabel="key type", ylabel="query type")
        for row, col in enumerate(LOOKUP_TAU):
            ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor=COLORS["orange"], lw=2.5))
        caption = (f"Attention weights after {step} of {LOOKUP_STEPS} gradient steps; the target key of each query "
                   f"type is outlined. Mean weight on the target: {on_target:.2f}, loss {run.loss[step]:.3f}.")
        return figure_frame(fig, alt=caption, caption=caption)

    return _print_marked("lookup_training", slider_frames([int(s) for s in run.snapshot_steps], frame,
                                                          "training step", start=0))

"""Chapter 10 as a reader sees it on the built site: its numbers are the training runs' (recomputed
here with the chapter's settings), and they say what the chapter claims."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from browser_support import SITE

from selfattn import demos, training

REL = "book/10-training.html"


@pytest.fixture(scope="module")
def page() -> tuple[str, str]:
    path = SITE / REL
    assert path.exists(), f"{REL} is not built: run `make book` first"
    doc = path.read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>|<style.*?</style>", " ", doc,
                                                       flags=re.S)))
    return doc, " ".join(text.split())


@pytest.fixture(scope="module")
def runs():
    """The chapter's seed-0 runs: both heads at the same score step."""
    step = training.score_step(demos.LOOKUP_RATE, 256, scaled=True)
    kw = dict(tau=demos.LOOKUP_TAU, d_k=256, steps=demos.LOOKUP_STEPS, seed=0)
    return (training.train_lookup(scaled=True, lr=training.rate_for_score_step(step, 256, True), **kw),
            training.train_lookup(scaled=False, lr=training.rate_for_score_step(step, 256, False), **kw))


@pytest.fixture(scope="module")
def sweep():
    """The chapter's sweep, recomputed with its settings."""
    return training.sweep_lookup(demos.LOOKUP_TAU, training.SWEEP_SCORE_STEPS, training.SWEEP_SEEDS, d_k=256,
                                 steps=demos.LOOKUP_STEPS)


def _number(text: str, pattern: str) -> str:
    m = re.search(pattern, text)
    assert m, f"{REL} does not say {pattern!r}"
    return m.group(1)


#: A number as the page writes it (a full stop after it ends the sentence).
NUM = r"(\d+(?:\.\d+)?)"


def _tight(text: str) -> str:
    """The page's text with no space before closing punctuation or after an opening bracket (the glued
    numbers are separate elements, so the text around them has spaces the page does not show)."""
    return re.sub(r"\(\s+", "(", re.sub(r"\s+([),.;%])", r"\1", text))


def _fraction(said: str) -> float:
    """A score step as the page writes it: ``1/1024`` or ``1``."""
    top, _, bottom = said.partition("/")
    return float(top) / float(bottom or 1)


def test_the_page_states_the_seed_0_runs_numbers(page, runs):
    text = _tight(page[1])
    on, off = runs
    said = re.search(rf"scaled head’s loss falls from {NUM} to {NUM} and its mean weight on the targets ends at "
                     rf"{NUM}; the unscaled head’s loss goes from {NUM} to {NUM} and its weight on the targets ends "
                     rf"at {NUM}", text)
    assert said, "the page does not state the seed-0 runs' losses and weights"
    assert said.groups() == (f"{on.loss[0]:.2f}", f"{on.loss[-1]:.4f}", f"{on.target_weight[-1]:.3f}",
                             f"{off.loss[0]:.2f}", f"{off.loss[-1]:.2f}", f"{off.target_weight[-1]:.3f}"), said.groups()
    lr = float(_number(text, r"uses the score step \S+ \(\\\(\\eta =\\\) (\d+(?:\.\d+)?) for the scaled head"))
    assert lr == demos.LOOKUP_RATE


def test_the_claim_is_what_the_sweep_shows(page, sweep):
    """The claim in bold: over one range of score steps the scaled head learns the lookup in every seed and
    the unscaled one in none; the range the page names is exactly where that holds."""
    text = _tight(page[1])
    reached = sweep.reached(training.REACHED)
    share = reached.mean(axis=2)
    assert float(_number(text, r"ends at (\d+(?:\.\d+)?) or more")) == training.REACHED
    assert int(_number(text, r"from (\d+) initialisations")) == len(sweep.seeds)
    claim = re.search(rf"at every score step from (\S+) to (\S+) \(learning rates {NUM} to {NUM} for the scaled "
                      r"head\) the scaled head learns the lookup in every seed and the unscaled head in none", text)
    assert claim, "the page does not state the range of score steps where the gap holds"
    low, high = _fraction(claim.group(1)), _fraction(claim.group(2))
    named = (sweep.score_steps >= low * (1 - 1e-9)) & (sweep.score_steps <= high * (1 + 1e-9))
    holds = (share[0] == 1) & (share[1] == 0)
    assert named.any() and np.array_equal(named, holds), (claim.groups(), share)
    assert (float(claim.group(3)), float(claim.group(4))) == (low * 256, high * 256)
    runs = re.search(r"unscaled head learns it in (\d+) of its (\d+) runs", text)
    assert runs and (int(runs.group(1)), int(runs.group(2))) == (int(reached[1].sum()), reached[1].size), runs
    best = float(_number(text, r"never exceeds (\d+(?:\.\d+)?)"))
    assert best == round(float(sweep.target_weight[1].max()), 2) and best < training.REACHED
    ends = re.search(r"smallest score step, (\S+), only (\d+)% of the seeds arrive within \d+ steps, and at the "
                     r"largest, (\S+), only (\d+)%", text)
    assert ends, "the page does not say how the scaled head does at the ends of the sweep"
    assert (_fraction(ends.group(1)), _fraction(ends.group(3))) == (sweep.score_steps[0], sweep.score_steps[-1])
    assert (int(ends.group(2)), int(ends.group(4))) == (round(100 * share[0, 0]), round(100 * share[0, -1]))
    assert share[0, 0] < 1 and share[0, -1] < 1     # "does not learn at every score step either"


def test_the_mechanism_is_what_the_sweep_shows(page, sweep):
    text = _tight(page[1])
    tau = np.array(demos.LOOKUP_TAU)
    here = int(np.flatnonzero(np.isclose(sweep.score_steps, training.score_step(demos.LOOKUP_RATE, 256, True)))[0])
    saturated = sweep.born_weights.max(axis=-1) > 0.99
    born_key, final_key = sweep.born_weights.argmax(axis=-1), sweep.final_weights[1, here].argmax(axis=-1)
    sat = re.search(r"(\d+)% of its queries are born saturated, with more than 0.99 of their weight on one key "
                    r"\(scaled: (\d+)%\)", text)
    assert sat and (int(sat.group(1)), int(sat.group(2))) == (round(100 * saturated[1].mean()),
                                                                round(100 * saturated[0].mean())), sat
    assert saturated[0].mean() == 0 < 0.5 < saturated[1].mean()   # "none of its queries saturated"; "many"
    stay = int(_number(text, r"score step (\d+)% of them still put their largest weight on the key they were born on"))
    stays = (final_key == born_key[1])[saturated[1]].mean()
    assert stay == round(100 * stays) and stays > 0.5                # "most of these queries stay"
    held = int(_number(text, r"but (\d+)% of all its queries are held on a wrong key"))
    assert held == round(100 * (saturated[1] & (born_key[1] != tau) & (final_key == born_key[1])).mean())
    loss = sweep.loss[:, here]                                         # (2 heads, seeds, steps + 1)
    fall = int(_number(text, r"it ends at a median of (\d+)% of where it started"))
    assert fall == round(100 * np.median(loss[1, :, -1] / loss[1, :, 0])) and fall < 100   # "does not stand still"
    # the figure's alt text: the scaled band falls to nearly zero in 100 steps, the unscaled one stays far above
    median = np.median(loss, axis=1)
    assert median[0, 100] < 0.01 * median[0, 0] and median[1, -1] > 100 * median[0, -1] and median[1, 0] > median[0, 0]


def test_the_checks_agree_to_rounding(page):
    _, text = page
    assert float(_number(text, r"agrees to (\S+) \.")) < 1e-7      # backward pass vs finite differences
    assert float(_number(text, r"separate passes agree to (\S+) ,")) < 1e-12   # teacher forcing
    assert float(_number(text, r"training loss \(to (\S+) \)")) < 1e-12
    assert float(_number(text, r"\\\(\\mathbf\{V\}\\\) \(to (\S+) \)")) < 1e-12   # its gradient


def test_the_slider_ends_on_the_learned_lookup(page):
    doc, _ = page
    captions = []
    for blob in re.findall(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', doc, re.S):
        for model in json.loads(blob)["state"].values():
            value = model.get("state", {}).get("value", "")
            if model.get("model_name") == "HTMLModel" and "gradient steps" in value:
                captions.append(html.unescape(re.search(r"<figcaption>(.*?)</figcaption>", value).group(1)))
    # the page's widget state is keyed by model id, so its frames come in no particular order
    captions.sort(key=lambda c: int(re.match(r"Attention weights after (\d+) of", c).group(1)))
    steps = [int(re.match(r"Attention weights after (\d+) of", c).group(1)) for c in captions]
    assert len(set(steps)) == len(steps) > 2 and steps[0] == 0 and steps[-1] == demos.LOOKUP_STEPS, steps
    weights = [float(re.search(r"Mean weight on the target: ([\d.]+)", c).group(1)) for c in captions]
    assert weights[0] < 0.5 and weights[-1] > 0.95, weights


@pytest.fixture(scope="module")
def text_run():
    """The chapter's English runs, recomputed with its settings (every seed)."""
    from selfattn import text_layer

    return text_layer.english_experiment(text_layer.SEEDS)


def _span(values, fmt: str) -> str:
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}–{hi}"


def test_the_text_layers_table_is_every_seeds_run(page, text_run):
    """The table the section prints has one row per seed, each the recomputed run's numbers."""
    text = page[1]
    rows = re.findall(r"(?<!\S)(\d+) (\d+\.\d{3}) (\d+\.\d{3}) (\d+\.\d{3}) (\d+) (\d+)% (\d+)% (\d+)%(?!\S)", text)
    r = text_run
    small = r.small_head
    expected = [(str(s), f"{r.head.held[n].min():.3f}", f"{r.plain.held[n].min():.3f}", f"{small.held[n].min():.3f}",
                 str(small.steps[small.held[n].argmin()]), *(f"{100 * r.shares[k][0][n]:.0f}"
                                                             for k in ("self", "previous", "spaces")))
                for n, s in enumerate(r.seeds)]
    assert rows == expected, f"the page's table {rows} is not the runs' {expected}"


def test_the_text_layers_claims_are_what_every_seed_shows(page, text_run):
    """The sentences of the section carry the recomputed runs' numbers, and what they say of every seed
    holds in every seed."""
    from selfattn import text_layer

    text = _tight(page[1])
    r = text_run
    best_head, best_plain = r.head.held.min(axis=1), r.plain.held.min(axis=1)
    assert np.all(best_head < best_plain) and np.all(best_plain < r.chance)
    said = f"Held out, the layer scores {_span(best_head, '.2f')} nats per character at best with its head and " \
           f"{_span(best_plain, '.2f')} without it, against {r.chance:.2f} for a guess"
    assert said in text, f"the page does not say: {said}"
    gap = r.head.held[:, -1] - r.head.train[:, -1]
    gap_plain = r.plain.held[:, -1] - r.plain.train[:, -1]
    assert np.all(np.abs(gap - gap_plain) < 0.02)
    said = f"sits {_span(gap, '.2f')} above its loss on the text it trains on"
    assert said in text, f"the page does not say: {said}"
    small = r.small_head
    at = small.steps[small.held.argmin(axis=1)]
    said = f"Its held-out loss is best, {_span(small.held.min(axis=1), '.2f')}, at step {_span(at, 'd')}, and " \
           f"climbs to {_span(small.held[:, -1], '.2f')} by step {text_layer.SMALL_STEPS}, while its loss on its " \
           f"own characters falls to {_span(small.train[:, -1], '.2f')}, in every seed"
    assert said in text, f"the page does not say: {said}"
    shares = {k: v for k, (v, _) in r.shares.items()}
    said = f"put {_span(100 * shares['self'], '.0f')}% of a query"   # the page's apostrophe is typographic
    assert said in text, f"the page does not say: {said}"
    said = f"weight on its own character and {_span(100 * shares['previous'], '.0f')}% on the character before it"
    assert said in text, f"the page does not say: {said}"
    assert all(np.all(v > r.shares[k][1]) for k, v in shares.items())
    copies = max(int(c.max()) for (name, _), c in r.copies.items() if name == "head")
    assert copies < r.held_copy
    said = f"is at most {copies} characters for the layer trained on the whole text"
    assert said in text, f"the page does not say: {said}"
    assert f"{len(r.corpus.ids):,} characters of" in text
    assert "millions of characters" not in text

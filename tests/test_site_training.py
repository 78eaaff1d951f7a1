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
    kw = dict(tau=demos.LOOKUP_TAU, d_k=256, steps=demos.LOOKUP_STEPS, lr=demos.LOOKUP_RATE, seed=0)
    return training.train_lookup(scaled=True, **kw), training.train_lookup(scaled=False, **kw)


def _number(text: str, pattern: str) -> str:
    m = re.search(pattern, text)
    assert m, f"{REL} does not say {pattern!r}"
    return m.group(1)


def test_the_page_states_the_runs_numbers_and_they_show_the_claim(page, runs):
    _, text = page
    on, off = runs
    born = re.search(r"largest weight is on average ([\d.]+) , against ([\d.]+) for the scaled one", text)
    assert born and born.groups() == (f"{off.max_weight[0]:.2f}", f"{on.max_weight[0]:.2f}"), born
    assert float(born.group(1)) > 0.8 > 0.5 > float(born.group(2))
    grads = re.search(r"median norm of (\S+) , against (\S+) for the scaled head", text)
    assert grads and grads.groups() == (f"{np.median(off.score_grad_norm):.0e}", f"{np.median(on.score_grad_norm):.0e}")
    assert float(grads.group(1)) < 1e-3 * float(grads.group(2))
    still = float(_number(text, r"on ([\d.]+) % of its steps its loss moves by less than one part in a million"))
    assert still == round(100 * training.still_share(off.loss), 1) and still > 90
    falls = re.search(r"scaled head’s loss falls from ([\d.]+) to ([\d.]+)", text)
    assert falls and falls.groups() == (f"{on.loss[0]:.2f}", f"{on.loss[-1]:.4f}")
    assert float(falls.group(2)) < 1e-3 * float(falls.group(1))
    target = re.search(r"puts on average ([\d.]+) of each query’s weight on its target; the unscaled one puts ([\d.]+)",
                       text)
    assert target and float(target.group(1)) > 0.95 and float(target.group(2)) <= 0.5


def test_the_checks_agree_to_rounding(page):
    _, text = page
    assert float(_number(text, r"agrees to (\S+) \.")) < 1e-7      # backward pass vs finite differences
    assert float(_number(text, r"separate passes agree to (\S+) ,")) < 1e-12   # teacher forcing


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

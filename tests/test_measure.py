"""selfattn.measure.ScalingFit: the exponent of a power law read off repeated timings, robust to a
disturbed repeat, and the sentence chapter 8 states from it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from selfattn.measure import ScalingFit, scaling

SIZES = np.array([512.0, 768, 1024, 1536, 2048, 3072])


@given(p=st.floats(0.5, 3.0), c=st.floats(1e-9, 1e-3), repeats=st.integers(1, 9),
       slow=st.floats(1.0, 100.0), seed=st.integers(0, 2**16))
def test_exponent_of_a_power_law_survives_a_disturbed_repeat(p, c, repeats, slow, seed):
    exact = c * SIZES**p
    rng = np.random.default_rng(seed)
    times = np.repeat(exact[None], repeats + 1, axis=0)
    times[0] *= 1 + slow * rng.random(SIZES.size)  # one repeat met a busy machine at every size
    fit = ScalingFit(SIZES, times)
    assert np.allclose(fit.fastest, exact)
    assert abs(fit.exponent - p) < 1e-9
    assert fit.exponents.shape == (repeats + 1,)
    assert np.allclose(fit.exponents[1:], p)


@given(p=st.floats(0.5, 3.0))
def test_verdict_says_quadratic_exactly_when_the_exponent_is_near_two(p):
    fit = ScalingFit(SIZES, (1e-6 * SIZES**p)[None])
    said = fit.verdict(2.0, 0.25)
    if abs(p - 2) < 0.2499:
        assert said.startswith("between 1.75 and 2.25: the time grows as T²"), said
    elif abs(p - 2) > 0.2501:
        assert said.startswith("outside 1.75 to 2.25"), said
    assert "T²" in said


def test_scaling_times_every_size_in_every_repeat():
    calls = []
    fit = scaling(lambda n: (lambda: calls.append(n)), [3, 5], repeats=4)
    assert fit.times.shape == (4, 2) and (fit.times >= 0).all()
    assert calls == [3, 5] + [3, 5] * 4  # one warm-up each, then the sizes in turn, repeat by repeat

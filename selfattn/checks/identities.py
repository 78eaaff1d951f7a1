"""Wrong results that are the right ones under a known identity: transposed, negated, times a
constant, plus a constant, rounded, or a count off by a little.

A check that finds no named mistake of its record tries :func:`identity` before it says "wrong
values": a result that is the reference transposed, times -1, times 0.5, shifted by a constant, right
to only three digits (rounded to float16) or, for an exact count, off by a few, is told so. The
wording of each is fixed (:data:`GENERIC`, declared with every record, so hidden checks report it as
it is); the text a public check shows may add the factor, shift or difference found.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["GENERIC", "identity"]

#: The fixed wording of each identity, by its id (every record declares them: ``<function>/<id>``).
GENERIC: dict[str, str] = {
    "transposed-result": "your result is the transpose of the right one: rows and columns are swapped",
    "negated": "your values have the wrong sign: they are minus the right ones",
    "constant-factor": ("your values are the right ones times a constant factor: a scaling is missing or extra "
                        "(a 2, a 1/n, a square root)"),
    "constant-shift": "your values are the right ones plus a constant: something is added or subtracted once too often",
    "half-precision": ("your values are right only to about 3 digits: they were rounded to float16 (half precision), "
                       "which also turns anything beyond 65504 into inf; keep float32 or float64"),
    "low-precision": ("your values are right only to a few digits: something rounded them (np.round, a value copied "
                      "from printed output)"),
    "integer-overflow": ("your count overflowed a fixed-size integer (np.int32 wraps around past 2147483647, "
                         "np.int16 past 32767): compute with Python ints or np.int64"),
    "dropped-axis": ("an axis of length 1 was dropped (np.squeeze, or indexing with a single number): keep every "
                     "axis of the result, even one of length 1"),
    "off-by-a-little": ("your count is off by a little: check each term you add (what it counts, and that a "
                        "multiply-add is 2 FLOPs)"),
}


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    return bool(got.shape == want.shape and np.allclose(got, want, rtol=max(rtol, 1e-6), atol=max(atol, 1e-12)))


def _wrapped(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether whole numbers ``got`` are ``want`` wrapped around by a 16- or 32-bit integer type."""
    if not (np.all(got == np.round(got)) and np.all(want == np.round(want))):
        return False
    for bits in (16, 32):
        if np.abs(want).max() >= 2 ** (bits - 1) and np.abs(got).max() < 2**bits \
                and all((int(g) - int(w)) % 2**bits == 0 for g, w in zip(got.flat, want.flat, strict=True)):
            return True
    return False


def _rounded(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether every entry of ``got`` is rounded where ``want`` is not: to at most 6 decimals or 6
    significant digits, or to float16 (a different computation that happens to come close is not)."""
    def sig(a: np.ndarray) -> bool:
        return all(float(f"{x:.6g}") == x for x in a.flat)

    return bool(any(np.array_equal(np.round(got, k), got) and not np.array_equal(np.round(want, k), want)
                    for k in range(7))
                or (sig(got) and not sig(want)) or (_is_half(got) and not _is_half(want)))


def _is_half(got: np.ndarray) -> bool:
    """Whether every entry of ``got`` is a float16 number (rounded to half precision)."""
    with np.errstate(over="ignore"):
        return bool((got.astype(np.float16).astype(float) == got).all())


def _nice(c: float) -> str | None:
    """``c`` as a small fraction (``1/2``, ``3``, ``2/3``) or the square root of one, else ``None``:
    a single number wrong by any factor is no identity, one wrong by a simple factor is."""
    for value, root in ((c, ""), (c * abs(c), "√")):
        f = Fraction(value).limit_denominator(8)
        if f != 0 and abs(f.numerator) <= 8 and abs(float(f) - value) <= 1e-9 * abs(value):
            return f"{'-' if f < 0 else ''}{root}{abs(f)}" if root else str(f)
    return None


def identity(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, *, exact: bool = False
             ) -> tuple[str, str] | None:
    """``(id, text)`` when ``got`` is ``want`` under one of the identities of :data:`GENERIC`, else ``None``.

    Parameters
    ----------
    got, want
        One result of the student's function and the reference's, as float arrays (``got`` already
        found wrong: not within ``rtol``, ``atol`` of ``want``).
    rtol, atol
        The check's tolerance (:func:`selfattn.checks.record.tolerance`).
    exact
        The result is a count or a mask: a count off by a few is named ("off-by-a-little"), and no
        rounding of a few digits is.
    """
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape and got.size == want.size and 1 in want.shape \
            and got.shape == tuple(n for n in want.shape if n != 1):
        return "dropped-axis", (f"an axis of length 1 was dropped (np.squeeze, or indexing with a single number): "
                                f"expected shape {want.shape}, got {got.shape}")
    if got.shape == want.shape and np.isfinite(want).all() and np.isinf(got).any() \
            and (np.abs(want[np.isinf(got)]) > 65504).all() and _is_half(got[np.isfinite(got)]):
        return "half-precision", GENERIC["half-precision"]
    if want.ndim == 2 and got.shape == want.T.shape and want.shape[0] != want.shape[1] \
            and np.isfinite(want).all() and _close(got, want.T, rtol, atol):
        return "transposed-result", GENERIC["transposed-result"]
    if got.shape != want.shape or not (np.isfinite(got).all() and np.isfinite(want).all()) or not want.any():
        return None
    if exact and _wrapped(got, want):
        return "integer-overflow", GENERIC["integer-overflow"]
    if want.ndim == 2 and want.shape[0] == want.shape[1] > 1 and _close(got, want.T, rtol, atol):
        return "transposed-result", GENERIC["transposed-result"]
    if _close(got, -want, rtol, atol):
        return "negated", GENERIC["negated"]
    several = np.unique(want).size > 1  # several different values: any factor says something
    c = float(np.vdot(got, want) / np.vdot(want, want))
    if c != 0 and not np.isclose(c, 1.0, rtol=1e-9) and _close(got, c * want, rtol, abs(c) * atol):
        nice = _nice(c)
        if several or nice is not None:
            return "constant-factor", (f"your values are the right ones times {nice or format(c, '.4g')}: a scaling "
                                       f"is missing or extra (a 2, a 1/n, a square root)")
    if several:
        s = float(np.mean(got - want))
        if _close(got, want + s, rtol, atol):
            return "constant-shift", (f"your values are the right ones plus {s:.4g}: something is added or "
                                      f"subtracted once too often")
    scale = float(np.abs(want).max())
    err = float(np.abs(got - want).max()) / scale
    if err <= 2e-3 and _is_half(got):
        return "half-precision", GENERIC["half-precision"]
    if exact and want.size == 1 and float(want.flat[0]).is_integer() and float(got.flat[0]).is_integer() \
            and err <= 0.1:
        diff = float(got.flat[0] - want.flat[0])
        return "off-by-a-little", (f"your count is off by {diff:+.0f} ({abs(diff) / scale:.2%} of it): check each "
                                   f"term you add (what it counts, and that a multiply-add is 2 FLOPs)")
    if err <= 1e-2 and not exact and _rounded(got, want):
        digits = int(np.floor(-np.log10(max(err, 1e-300))))
        return "low-precision", (f"your values are right only to about {digits} digits (largest error {err:.1g} "
                                 f"of the largest value): something rounded them (np.round, a value copied from "
                                 f"printed output)")
    return None

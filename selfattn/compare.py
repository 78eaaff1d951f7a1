"""The student's function beside the course's own, on the lecture's example.

``compare(attention)`` in a notebook calls the student's ``attention`` and the package's
:func:`selfattn.attention` on the same input ('the cat was hungry') and shows both results:
two heatmaps on one colour scale for a matrix, a small table for numbers, and a one-line
verdict. It never raises: an unwritten function ("not answered yet"), a crash (its error in one
line) or a wrong return value is shown, not thrown. The reference is always a public function of
this package, never a notebook's solution; the shape question's answer is a value, which the
package does not hold in any form, so there the student's rows stand alone, judged by how they fit
together, with a line saying the values are checked when graded. Problem 20's answer is three
matrices, which must not be shown: there the picture is what the student's matrices do (the attention weights they give
and the rows they read) beside the lookup the exercise asks for.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cost, experiments, lecture, numerics, text, training
from .checks import notebook, problem20
from .checks.calling import BAD_RETURN, NOT_ANSWERED, TIME_LIMIT, VALUE, Case, Outcome, call_cases, to_arrays
from .checks.exercises import EXERCISES
from .checks.findings import Kind
from .checks.notebook import judge, time_limit
from .checks.record import close, count_message

__all__ = ["EXAMPLES", "Comparison", "Example", "compare"]


@dataclass(frozen=True)
class Example:
    """What :func:`compare` runs for one graded function.

    ``cases`` are the calls (the lecture's input); ``reference`` is the package's function, or
    ``None`` for an answer that is a value (``shape_answers``): the package must not hold it, so
    the table shows the student's alone, with the verdict of its public check (how the parts fit
    together) and one line saying that the values are checked when graded.
    ``kind`` is ``"matrix"`` (one call, a 2-D result drawn as two heatmaps with row and column
    labels) or ``"table"`` (one row per call, numbers side by side).

    ``view`` is for an answer that must not be shown at all (Problem 20's matrices): it turns the
    student's result into what is drawn and compared, here the attention weights and outputs the
    matrices give (kind ``"lookup"``), and ``reference`` returns that view directly, so the
    package holds no matrices that answer the exercise.
    """

    title: str
    reference: Callable[..., Any] | None
    cases: Callable[[], list[Case]]
    kind: str = "matrix"
    rows: tuple[str, ...] = ()
    cols: tuple[str, ...] = ()
    row_name: str = ""
    col_name: str = ""
    view: Callable[[tuple[np.ndarray, ...]], tuple[np.ndarray, ...]] | None = None


def _hungry_tokens() -> tuple[str, ...]:
    return tuple(text.tokenize(text.SENTENCES["hungry"]))


def _hungry_embed() -> Case:
    vocab = text.Vocabulary.from_texts([text.SENTENCES["hungry"]])
    return Case((text.random_embeddings(len(vocab), 4, seed=4), vocab.encode(text.SENTENCES["hungry"])))


def _hungry_x() -> np.ndarray:
    """The embeddings of 'the cat was hungry', shape (T, d) = (4, 4): the example input of a
    function of one (T, d) matrix (what ``scripts/new_exercise.py``'s example skeleton passes)."""
    return text.embed(*_hungry_embed().args)


def _hungry_qkv() -> Case:
    """'the cat was hungry' (d = 4), projected, with the causal mask (the public checks' mask: a
    mask bug shows); V is the identity, so each output row is a row of weights."""
    X = _hungry_x()
    W_Q, W_K = np.random.default_rng(5).standard_normal((2, 4, 4))
    return Case((X @ W_Q, X @ W_K, np.eye(len(X))), {"mask": numerics.causal_mask(len(X))})


#: Problem 20's example: five one-hot token types, each reading another (a permutation with no
#: fixed point, so reading oneself shows), in a sequence holding them in another order.
_TYPES = ("a", "b", "c", "d", "e")
_TARGETS = [3, 0, 4, 1, 2]
_SEQUENCE = [2, 4, 0, 3, 1]
_LOOKUP_VALUES = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0], [5.0, 50.0]])
_BETA = 1000.0


def _lookup_view(result: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """What matrices (W_Q, W_K, W_V) do on the example's sequence: the attention weights
    (T, T), one row per query, and the outputs (T, d_v). Raises on the wrong number or shapes
    (the words of the exercise's own checks)."""
    if len(result) != 3:
        raise ValueError(count_message(EXERCISES["lookup_table_weights"], result, 3))
    if (bad := problem20.shape_problem(result, *_LOOKUP_VALUES.shape)) is not None:
        raise ValueError(str(bad))
    return problem20.view(result, _SEQUENCE)


def _lookup_wanted(targets, values, beta) -> tuple[np.ndarray, np.ndarray]:
    """The lookup the exercise asks for: each token puts all its weight on the position holding
    its target type and so outputs that type's value row (the view, not any matrices)."""
    seq, wanted = np.asarray(_SEQUENCE), np.asarray(targets)[_SEQUENCE]
    A = (seq[None, :] == wanted[:, None]).astype(float)
    return A, np.asarray(values, dtype=float)[wanted]


_TOK = _hungry_tokens()
_SHIFT = [4, 0, 1, 2, 3]
_FLOPS = [(10, 512), (1000, 512), (4096, 1024)]

#: The upstream gradient of the softmax_vjp example (one entry per token of 'the cat was hungry').
_VJP_G = (1.0, -2.0, 0.5, 0.0)

#: The lecture's example of each graded function that has one (each notebook has at least one).
EXAMPLES: dict[str, Example] = {
    "embed": Example("embeddings of 'the cat was hungry' (d = 4)", text.embed, lambda: [_hungry_embed()],
                     rows=_TOK, cols=tuple(f"dim {j}" for j in range(4)), row_name="token", col_name=""),
    "shape_answers": Example("shapes for T = 10, d = 512, d_k = d_v = 64", None,
                             lambda: [Case(())], kind="table", rows=("Q", "K", "V", "Q Kᵀ", "output")),
    "attention": Example("causal attention on 'the cat was hungry' with V = I (each row: one query's weights)",
                         numerics.attention, lambda: [_hungry_qkv()], rows=_TOK, cols=_TOK,
                         row_name="query", col_name="key"),
    "score_stds": Example("std of unscaled and scaled scores, 2000 random pairs, d_k = 64",
                          experiments.score_stds,
                          lambda: [Case(tuple(np.random.default_rng(0).standard_normal((2, 2000, 64))))],
                          kind="table", rows=("d_k = 64",), cols=("unscaled", "scaled")),
    "softmax_jacobian": Example("Jacobian at the weights of 'hungry' in the lecture's example",
                                numerics.softmax_jacobian, lambda: [Case((lecture.HUNGRY.weights(),))],
                                rows=_TOK, cols=_TOK, row_name="", col_name=""),
    "softmax_vjp": Example(f"Jᵀg at the weights of 'hungry' in the lecture's example, g = {_VJP_G}",
                           training.softmax_vjp, lambda: [Case((lecture.HUNGRY.weights(), np.array(_VJP_G)))],
                           kind="table", rows=("Jᵀg",), cols=_TOK),
    "permutation_matrix": Example(f"permutation_matrix({_SHIFT}): Problem 19's cyclic shift",
                                  lambda perm: lecture.shift_matrix(len(perm), 1), lambda: [Case((_SHIFT,))],
                                  rows=tuple(map(str, range(5))), cols=tuple(map(str, range(5))),
                                  row_name="row", col_name="column"),
    "causal_mask": Example("causal mask for 'the cat was hungry' (T = 4)", numerics.causal_mask,
                           lambda: [Case((4,))], rows=_TOK, cols=_TOK, row_name="query", col_name="key"),
    "lookup_table_weights": Example(
        "Problem 20 on the sequence " + " ".join(_TYPES[t] for t in _SEQUENCE) + " ("
        + ", ".join(f"{_TYPES[t]} reads {_TYPES[u]}" for t, u in enumerate(_TARGETS)) + f"; β = {_BETA:g})",
        _lookup_wanted,
        lambda: [Case((_TARGETS, _LOOKUP_VALUES, _BETA))], kind="lookup",
        rows=tuple(f"{_TYPES[t]}→{_TYPES[_TARGETS[t]]}" for t in _SEQUENCE),
        cols=tuple(_TYPES[t] for t in _SEQUENCE), row_name="query (type→target)", col_name="key",
        view=_lookup_view),
    "attention_flops": Example("FLOPs of attention", cost.attention_flops,
                               lambda: [Case(tc) for tc in _FLOPS], kind="table",
                               rows=tuple(f"T = {t}, d = {d}" for t, d in _FLOPS), cols=("FLOPs",)),
}


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` shows: the verdict line and the HTML (heatmaps or table)."""

    function: str
    verdict: str
    agrees: bool | None
    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.verdict


def _one_line(message: str, limit: int = 200) -> str:
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _verdict_line(agrees: bool | None, said: str, limit: int | None = 400) -> str:
    """The verdict as people read it, made from its parts: ✓ when ``fn`` agrees (its public checks
    pass as graded), ✗ when it does not, · when there is nothing to judge yet; then ``said``, on
    one line of at most ``limit`` characters (``None``: as it is)."""
    line = f"{'·' if agrees is None else '✓' if agrees else '✗'} {said}"
    return line if limit is None else _one_line(line, limit)


def _checked(function: str, fn: Callable[..., Any]) -> tuple[bool | None, str]:
    """What ``check()`` says of ``fn`` on the public checks of ``function``, run as grading runs
    them: (passed, the first failing check's message or the note on a function it calls to
    blame), ``(None, message)`` when a function it calls fails and the check gives no verdict
    (:data:`~selfattn.checks.findings.Kind.UNJUDGED`), or ``(None, "")`` when a check itself could not
    run (the picture stands alone)."""
    note = ""
    for check_ in EXERCISES[function].public_checks:
        try:
            message, blame = judge(check_, fn)
        except Exception:
            return None, ""
        if message is not None:
            return (None if message.kind is Kind.UNJUDGED else False), message.text.splitlines()[0]
        note = note or blame
    return True, note


def _call(fn: Callable[..., Any], cases: list[Case]) -> list[Outcome]:
    """The student's calls, each given up after ``notebook.NOTEBOOK_SECONDS`` (never a hung kernel)."""
    with time_limit(notebook.NOTEBOOK_SECONDS):
        return call_cases(fn, cases)


def _failure(outcome: Outcome) -> str:
    """What a failed call did, for a verdict: 'returned …', 'gave no result within …' or 'raised …'."""
    if outcome.kind in (BAD_RETURN, TIME_LIMIT):
        return outcome.error or ""
    return f"raised {outcome.error}"


def _fmt(v: float) -> str:
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "−∞" if v < 0 else "∞"
    return f"{v:.6g}".replace("-", "−")


def _heatmaps(example: Example, ref: np.ndarray, got: np.ndarray | None, function: str,
              reference: str = "reference (selfattn)") -> str:
    from .plots import figure_img, heatmap, new_figure

    mats = [ref] if got is None else [ref, got]
    finite = np.concatenate([m[np.isfinite(m)].ravel() for m in mats])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    fig, axes = new_figure(4.2 * len(mats), 3.4, ncols=len(mats))
    for ax, M, name in zip(axes, mats, (reference, f"yours ({function})"), strict=False):
        rows = example.rows if len(example.rows) == M.shape[0] else tuple(map(str, range(M.shape[0])))
        cols = example.cols if len(example.cols) == M.shape[1] else tuple(map(str, range(M.shape[1])))
        heatmap(ax, M, rows, cols, title=name, vmin=lo, vmax=hi, xlabel=example.col_name, ylabel=example.row_name)
    alt = f"{example.title}: the reference" + ("" if got is None else f" beside your {function}, same colour scale")
    return figure_img(fig, alt)


def _table(example: Example, refs: list[np.ndarray], gots: list[np.ndarray | None]) -> str:
    head = "<tr><th></th><th>reference (selfattn)</th><th>yours</th><th></th></tr>"
    body = []
    for i, (ref, got) in enumerate(zip(refs, gots, strict=True)):
        flat_ref = np.atleast_1d(ref).ravel()
        same = got is not None and close(got, ref, 1e-5, 1e-6)
        label = example.rows[i] if i < len(example.rows) else str(i)
        if len(refs) == 1:
            labels = example.rows if len(example.rows) > 1 else example.cols or (label,)
            lines = list(zip(labels, *_rows(example, flat_ref, got), strict=True))
        else:
            lines = [(label, ", ".join(map(_fmt, flat_ref)),
                      "—" if got is None else ", ".join(map(_fmt, got.ravel())))]
        for lab, r, g in lines:
            ok = g != "—" and (r == g or same)
            body.append(f"<tr><td>{html.escape(lab)}</td><td>{html.escape(r)}</td><td>{html.escape(g)}</td>"
                        f"<td>{'✓' if ok else '✗'}</td></tr>")
    return f'<table class="compare">{head}{"".join(body)}</table>'


def _rows(example: Example, ref: np.ndarray, got: np.ndarray | None) -> tuple[list[str], list[str]]:
    """One call's result split into table rows (a row per labelled row, or per column name)."""
    n = len(example.rows) if len(example.rows) > 1 else len(example.cols) or 1
    ref_rows = [", ".join(map(_fmt, part)) for part in np.array_split(ref, n)]
    if got is None:
        return ref_rows, ["—"] * n
    got = got.ravel()
    got_rows = ([", ".join(map(_fmt, part)) for part in np.array_split(got, n)] if got.size == ref.size
                else ["shape differs"] * n)
    return ref_rows, got_rows


def compare(fn: Any, name: str | None = None) -> Comparison:
    """Show ``fn`` beside the course's own function on the lecture's example; never raises.

    Parameters
    ----------
    fn : callable
        The student's function (its ``__name__`` picks the example, unless ``name`` is given).
    name : str, optional
        The graded function it answers, a key of :data:`EXAMPLES`.

    Returns
    -------
    Comparison
        Displays as heatmaps (a matrix result, shape (r, c)) or a table (numbers) with a verdict.
    """
    function = name or getattr(fn, "__name__", "") or "your function"
    if function not in EXAMPLES:
        known = ", ".join(EXAMPLES)
        verdict = _verdict_line(None, f"no lecture example for {function!r}; compare() knows {known}", None)
        return Comparison(function, verdict, None, f"<p>{html.escape(verdict)}</p>")
    example = EXAMPLES[function]
    if example.view is not None:
        return _compare_viewed(function, fn, example)
    if example.reference is None:
        return _compare_unheld(function, fn, example)
    cases = example.cases()
    refs = [to_arrays(example.reference(*c.args, **c.kwargs)) for c in cases]
    refs_arr = [np.concatenate([np.atleast_1d(v).ravel() for v in r]).reshape(-1) if len(r) > 1
                else r[0] for r in refs]  # type: ignore[union-attr]
    gots: list[np.ndarray | None] = []
    agrees: bool | None = None
    verdict = ""
    if not callable(fn):
        verdict = _verdict_line(None, f"{function} is not a function yet (run its cell)", None)
        gots = [None] * len(cases)
    else:
        outcomes = _call(fn, cases)
        errors = [o for o in outcomes if o.kind != VALUE]
        if errors and errors[0].kind == NOT_ANSWERED:
            verdict = _verdict_line(None, f"{function}: not answered yet (replace `raise NotImplementedError` with "
                                          "your code)", None)
        elif errors:
            agrees = False
            verdict = _verdict_line(agrees, f"{function}{cases[0].describe()} {_failure(errors[0])}", 200)
        for o in outcomes:
            if o.values is None:
                gots.append(None)
            else:
                gots.append(np.concatenate([v.ravel() for v in o.values]) if len(o.values) > 1 else o.values[0])
        if not errors:
            same = all(close(g, r, 1e-5, 1e-6) for g, r in zip(gots, refs_arr, strict=True))  # type: ignore[arg-type]
            agrees, said = _verdict(function, fn, example, same,
                                    "" if same else _difference(gots, refs_arr, example))  # type: ignore[arg-type]
            verdict = _verdict_line(agrees, said)
    if example.kind == "matrix":
        got = gots[0] if gots[0] is not None and gots[0].ndim == 2 else None
        picture = _heatmaps(example, refs_arr[0], got, function)
        if gots[0] is not None and got is None:
            picture += f"<p>yours has shape {gots[0].shape}, not a matrix like {refs_arr[0].shape}: nothing to draw</p>"
    else:
        picture = _table(example, refs_arr, gots)
    body = (f'<div class="compare"><p><strong>{html.escape(example.title)}</strong></p>{picture}'
            f"<p>{html.escape(verdict)}</p></div>")
    return Comparison(function, verdict, agrees, body)


def _verdict(function: str, fn: Any, example: Example, same: bool, difference: str,
             differs: str = "differs from the reference") -> tuple[bool, str]:
    """(agrees, what the verdict says) for a function that returned numbers: the example's comparison
    (``same``, else ``difference``) together with what ``check()`` says, which decides: ✓ only
    when the public checks pass as graded (so not for a mask bug the example cannot show, nor for
    an answer that calls the course package, which grading does not have)."""
    passed, said = _checked(function, fn)
    if passed is None and said:  # a function it calls fails: its check gives no verdict, the example does
        shown = f"agrees with the reference on {example.title}" if same else f"{differs}: {difference}"
        return same, f"{function} {shown} ({said})"
    if passed is None:
        passed = same
    if passed and same:
        verdict = f"{function} agrees with the reference on {example.title}" + (f" ({said})" if said else "")
    elif passed:
        verdict = (f"{function} passes its public checks, but on this example it {differs}: {difference}"
                   + (f" ({said})" if said else ""))
    elif same:
        verdict = f"{function} agrees on this example but fails its public check: {said}"
    else:
        verdict = f"{function} {differs}: {difference}" + (f". Likely mistake: {said}" if said else "")
    return bool(passed), verdict


def _gaps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """How far each entry of ``got`` is from ``ref`` (same shape): the absolute difference where both
    are finite, 0 where both are the same infinity or both NaN, and infinite wherever only one of them
    is a finite number or they are different non-numbers (NaN beside a number is a difference)."""
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(ref) & np.isfinite(got)
        same = (got == ref) | (np.isnan(got) & np.isnan(ref))
        return np.where(finite, np.abs(np.where(finite, got - ref, 0.0)), np.where(same, 0.0, np.inf))


def _difference(gots: list[np.ndarray], refs: list[np.ndarray], example: Example) -> str:
    """Where yours and the reference differ most."""
    for got, ref in zip(gots, refs, strict=True):
        if got.shape != ref.shape:
            return f"shape {got.shape}, expected {ref.shape}"
    for i, (got, ref) in enumerate(zip(gots, refs, strict=True)):
        got, ref = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
        gap = _gaps(got, ref)
        if gap.max() > 0:
            where = np.unravel_index(int(np.argmax(gap)), gap.shape)
            label = example.rows[i] if i < len(example.rows) else i
            at = f"[{', '.join(map(str, where))}]" if where else f"for {label}"
            return f"largest difference {at}: yours {_fmt(float(got[where]))}, reference {_fmt(float(ref[where]))}"
    return "values differ"


#: What compare() says of an answer that is a value, which the package does not hold.
UNHELD = "its values are checked only when graded: the course package does not hold the answer"


def _example_call(function: str, fn: Any, case: Any) -> tuple[Any, bool | None, str]:
    """The example's one call of ``fn``: (its outcome when it returned values, else ``None``; whether
    it agrees, ``False`` when it failed, ``None`` when not known yet; what to say when it gave no values)."""
    if not callable(fn):
        return None, None, f"{function} is not a function yet (run its cell)"
    (outcome,) = _call(fn, [case])
    if outcome.kind == NOT_ANSWERED:
        return None, None, f"{function}: not answered yet (replace `raise NotImplementedError` with your code)"
    if outcome.kind != VALUE:
        return None, False, f"{function}{case.describe()} {_failure(outcome)}"
    return outcome, None, ""


def _compare_unheld(function: str, fn: Any, example: Example) -> Comparison:
    """:func:`compare` for an answer that is a value (``example.reference`` is ``None``): the
    package has nothing to show beside it, so the table holds the student's rows alone, and the
    verdict is its public check's (shape and how the parts fit together) with :data:`UNHELD`."""
    (case,) = example.cases()
    got: np.ndarray | None = None
    outcome, agrees, said = _example_call(function, fn, case)
    if outcome is not None:
        assert outcome.values is not None
        got = outcome.values[0] if len(outcome.values) == 1 else None
        agrees, message = _checked(function, fn)
        said = (f"{function}: {message}" if agrees is False
                else f"{function} passes its public check; {UNHELD}" if agrees else f"{function}: {UNHELD}")
    verdict = _verdict_line(agrees, said)
    head = "<tr><th></th><th>yours</th></tr>"
    rows = got if got is not None and got.ndim == 2 and len(got) == len(example.rows) else None
    body = [f"<tr><td>{html.escape(label)}</td><td>"
            f"{html.escape('—' if rows is None else ', '.join(map(_fmt, rows[i])))}</td></tr>"
            for i, label in enumerate(example.rows)]
    picture = f'<table class="compare">{head}{"".join(body)}</table><p>{html.escape(UNHELD)}.</p>'
    page = (f'<div class="compare"><p><strong>{html.escape(example.title)}</strong></p>{picture}'
            f"<p>{html.escape(verdict)}</p></div>")
    return Comparison(function, verdict, agrees, page)


def _compare_viewed(function: str, fn: Any, example: Example) -> Comparison:
    """:func:`compare` for an answer shown only through its effect (``example.view``): the
    attention weights as two heatmaps and the outputs as a table, never the answer itself."""
    (case,) = example.cases()
    want = tuple(np.asarray(v, dtype=float) for v in example.reference(*case.args))
    got: tuple[np.ndarray, ...] | None = None
    outcome, agrees, said = _example_call(function, fn, case)
    if outcome is not None:
        try:
            assert outcome.values is not None and example.view is not None
            got = tuple(np.asarray(v, dtype=float) for v in example.view(outcome.values))
        except Exception as exc:
            agrees, said = False, f"{function}{case.describe()}: {exc}"
        else:
            same = all(close(g, w, 1e-5, 1e-6) for g, w in zip(got, want, strict=True))
            agrees, said = _verdict(function, fn, example, same,
                                    "" if same else _lookup_difference(got, want, example),
                                    "differs from the lookup asked for")
    verdict = _verdict_line(agrees, said)
    picture = _heatmaps(example, want[0], None if got is None else got[0], function, reference="the lookup asked for")
    picture += _lookup_table(example, want[1], None if got is None else got[1])
    body = (f'<div class="compare"><p><strong>{html.escape(example.title)}</strong></p>{picture}'
            f"<p>{html.escape(verdict)}</p></div>")
    return Comparison(function, verdict, agrees, body)


def _lookup_table(example: Example, want: np.ndarray, got: np.ndarray | None) -> str:
    """One row per token: the value row it must read, and the output row yours gives."""
    head = "<tr><th>token (type→target)</th><th>its target's value</th><th>your output</th><th></th></tr>"
    body = []
    for i, label in enumerate(example.rows):
        wanted = ", ".join(map(_fmt, want[i]))
        if got is None:
            yours, mark = "—", ""
        else:
            yours = ", ".join(map(_fmt, got[i]))
            mark = "✓" if close(got[i], want[i], 1e-5, 1e-6) else "✗"
        body.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(wanted)}</td><td>{html.escape(yours)}</td>"
                    f"<td>{mark}</td></tr>")
    return f'<table class="compare">{head}{"".join(body)}</table>'


def _lookup_difference(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...], example: Example) -> str:
    """The first query whose weights miss its target, else the first output row that differs
    (``example.view`` has checked the shapes)."""
    (A, out), (A_want, out_want) = got, want
    for i in range(len(A_want)):
        if not close(A[i], A_want[i], 1e-5, 1e-6):
            on = float(np.nansum(np.where(A_want[i] > 0, A[i], 0.0))) + 0.0  # + 0.0: no "-0.00"
            top = example.cols[int(np.nanargmax(A[i]))] if np.isfinite(A[i]).any() else "nowhere (NaN)"
            target = example.cols[int(np.argmax(A_want[i]))]
            return (f"query {example.rows[i]} (row {i}) puts {on:.2f} of its weight on the key {target}, "
                    f"most of it on {top}")
    for i in range(len(out_want)):
        if not close(out[i], out_want[i], 1e-5, 1e-6):
            return (f"the output of {example.rows[i]} (row {i}) is {', '.join(map(_fmt, out[i]))}, "
                    f"its target's value is {', '.join(map(_fmt, out_want[i]))}")
    return "values differ"

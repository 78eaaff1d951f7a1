r"""The records the checks are made of: one :class:`Exercise` per graded function, its :class:`Check`\ s,
and the comparisons every verifier uses.

An :class:`Exercise` holds every fact about one graded function that the notebook's ``check()``,
the grader and the tests read: the course's reference implementation, the mistakes it names (each
a wrong implementation with the same signature, so a test can run it), the functions it may call,
the names of its results, and its checks. The public checks are declared with the record
(:mod:`selfattn.checks.exercises`); the hidden ones attach to the same object from the autograder
(``SOFTMAX.hidden(...)``), so both decide with the same verifier.

A :class:`Check` is split in three so that grading never has to trust student code:

1. ``cases(rng)`` makes the inputs (trusted side);
2. the student's function is called on each case, and each result becomes plain float
   arrays, or the name and message of the exception it raised
   (:func:`selfattn.checks.calling.call_cases`);
3. ``verify(cases, outcomes)`` decides, looking only at those arrays (trusted side), and
   returns ``None`` or a :class:`~selfattn.checks.findings.Finding` naming the likely misconception.

A verifier compares the results of the student's function with the reference's and, when they
differ, with those of each mistake, so the message can name the mistake ("softmax taken over the
queries", "missing 1/sqrt(d_k)", ...).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .calling import Case, Outcome, to_arrays
from .findings import Finding, Kind
from .identities import GENERIC, identity

__all__ = ["REGISTRY", "SAFETY", "U32", "Check", "Exercise", "Mistake", "close", "count_message",
           "float32_neighbours", "largest_error", "rand", "register", "row_length", "shape_message", "tolerance"]


@dataclass(frozen=True)
class Check:
    """One named check of one graded function."""

    id: str
    function: str
    description: str
    cases: Callable[[np.random.Generator], list[Case]]
    verify: Callable[[list[Case], list[Outcome]], Finding | None]
    exercise: Exercise  # the record this check belongs to
    hidden: bool = False  # run only when grading


#: Every check by id (public ones registered by selfattn.checks.exercises, hidden ones by the grader).
REGISTRY: dict[str, Check] = {}


def register(check_: Check) -> Check:
    """Add ``check_`` to :data:`REGISTRY`; a second check with the same id is an error."""
    if check_.id in REGISTRY:
        raise ValueError(f"duplicate check id {check_.id!r}")
    REGISTRY[check_.id] = check_
    return check_


#: Makes the inputs of one check from a random generator: ``cases(rng) -> list[Case]``.
Cases = Callable[[np.random.Generator], list[Case]]
#: A diagnosis tried after the named mistakes: ``extra(case, results) -> message or None``. Its
#: message is fixed wording (it names a mistake and holds no value), since hidden checks report it.
Extra = Callable[[Case, tuple[np.ndarray, ...]], "str | None"]


def rand(rng: np.random.Generator, *shape: int, scale: float = 1.0, dtype=np.float64) -> np.ndarray:
    """Standard normal entries times ``scale``, of the given shape and dtype."""
    return (scale * rng.standard_normal(shape)).astype(dtype)


@dataclass(frozen=True)
class Mistake:
    """A classic wrong answer: ``wrong`` has the exercise's signature, ``message`` names the mistake,
    ``id`` is its stable id within the exercise (the report and the history count by
    ``<function>/<id>``, so the message may be reworded)."""

    wrong: Callable[..., Any]
    message: str
    id: str = ""

    def results(self, case: Case) -> tuple[np.ndarray, ...]:
        with np.errstate(all="ignore"):
            return to_arrays(self.wrong(*case.args, **case.kwargs))


@dataclass(eq=False)
class Exercise:
    """Everything about one graded function.

    Parameters
    ----------
    function
        The name the student's function must have (also its answer cell's grade id).
    reference
        The course's implementation, with the student's signature; ``None`` when the package must
        not hold the answer (then ``verifier`` decides alone).
    mistakes
        The mistakes the messages name, tried in order.
    depends
        The graded exercises whose functions this one may call (same notebook).
    returns
        Names of the results, for a function returning several (a tuple).
    exact
        The result is exact (integers, masks, shapes, rows looked up): no rounding of its own is allowed,
        only what the rounding of float inputs moves it by (see :func:`tolerance`).
    extra
        A diagnosis tried when no named mistake matches.
    diagnoses
        Every message ``extra`` or ``verifier`` may name, by its stable id: fixed wording, which
        hidden checks report as it is (a message not declared here counts as wrong values).
    verifier
        Replaces the comparison with the reference: ``verifier(exercise, cases, outcomes)``.
    contract
        What every right result has on any valid input, checked without the reference on the calls
        a function that depends on this one makes to the student's version (a softmax row is a
        distribution): ``contract(arguments, result)``, the arguments in the order of the
        function's parameters (defaults filled in) and the returned value as it came, gives what
        is wrong in a few words or ``None``.
    """

    function: str
    reference: Callable[..., Any] | None
    mistakes: Sequence[Mistake] = ()
    depends: Sequence[Exercise] = ()
    returns: tuple[str, ...] = ()
    exact: bool = False
    extra: Extra | None = None
    diagnoses: Mapping[str, str] = field(default_factory=dict)
    verifier: Callable[[Exercise, list[Case], list[Outcome]], Finding | None] | None = None
    contract: Callable[[Sequence[Any], Any], str | None] | None = None
    checks: list[Check] = field(default_factory=list)

    def __post_init__(self) -> None:
        ids = [m.id for m in self.mistakes] + list(self.diagnoses)
        self.diagnoses = {**self.diagnoses, **GENERIC}  # every record names the identities (identities.py)
        ids += [i for i in GENERIC if i in ids]  # a record's own id may not reuse one
        if not all(isinstance(i, str) and i for i in ids):
            raise ValueError(f"exercise {self.function}: every mistake needs an id (Mistake(wrong, message, id=...))")
        if len(set(ids)) != len(ids):
            raise ValueError(f"exercise {self.function}: a mistake id is declared twice: "
                             f"{sorted({i for i in ids if ids.count(i) > 1})}")

    def mistake_id(self, wording: str) -> str | None:
        """The stable id (``<function>/<id>``) of a named mistake or diagnosis of this exercise, by
        its fixed wording; ``None`` for a wording it does not declare."""
        for m in self.mistakes:
            if m.message == wording:
                return f"{self.function}/{m.id}"
        for id_, text in self.diagnoses.items():
            if text == wording:
                return f"{self.function}/{id_}"
        return None

    def wording(self, mistake_id: str) -> str | None:
        """The fixed wording of this exercise's named mistake or diagnosis ``<function>/<id>``, if declared."""
        fn, _, id_ = mistake_id.partition("/")
        if fn != self.function:
            return None
        return next((m.message for m in self.mistakes if m.id == id_), None) or self.diagnoses.get(id_)

    def identify(self, found: Finding | None) -> Finding | None:
        """``found`` with its mistake's stable id: a named mistake this exercise does not declare
        counts as wrong values (its wording is not fixed, so a hidden check must not report it)."""
        if found is None or found.kind is not Kind.MISTAKE or found.id is not None:
            return found
        id_ = self.mistake_id(found.name or "")
        if id_ is None:
            return Finding(found.text, Kind.WRONG_VALUES)
        return dataclasses.replace(found, id=id_)

    # ----------------------------------------------------------------- the checks of this exercise
    def check(self, suffix: str, description: str, cases: Cases,
              verify: Callable[[list[Case], list[Outcome]], Finding | None] | None = None) -> Check:
        """Declare a public check ``<function>/<suffix>`` (a student sees it in the notebook).

        ``verify`` decides it instead of the comparison with the reference: for an answer that
        is a value (:attr:`takes_no_input`), which the student package must not hold, the public
        check judges what it can without it (shape, type, how the parts fit together)."""
        return self._add(f"{self.function}/{suffix}", description, cases, hidden=False, verify=verify)

    def hidden(self, suffix: str, description: str, cases: Cases) -> Check:
        """Attach a hidden check ``<function>/hidden/<suffix>`` (run only when grading)."""
        return self._add(f"{self.function}/hidden/{suffix}", description, cases, hidden=True)

    def _add(self, check_id: str, description: str, cases: Cases, *, hidden: bool,
             verify: Callable[[list[Case], list[Outcome]], Finding | None] | None = None) -> Check:
        if check_id in REGISTRY and REGISTRY[check_id].exercise is self:
            return REGISTRY[check_id]  # the same module imported again: nothing new
        check_ = register(Check(check_id, self.function, description, cases, verify or self.verify, self, hidden))
        self.checks.append(check_)
        return check_

    @property
    def public_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.hidden]

    @property
    def takes_no_input(self) -> bool:
        """Whether the answer is a value (a function without inputs, ``shape_answers``): every
        call of its checks has no arguments. Such an answer is never recorded for the student
        package (no value, digest or encoding of it ships); its public checks judge it without
        the reference, its hidden checks (grading only) against it."""
        return all(not c.args and not c.kwargs for chk in self.checks for c in chk.cases(np.random.default_rng(0)))

    def uses_reference(self, check_: Check) -> bool:
        """Whether ``check_`` decides by comparing with the reference (not by its own verifier)."""
        return check_.verify == self.verify

    @property
    def dependency_names(self) -> tuple[str, ...]:
        return tuple(d.function for d in self.depends)

    # ----------------------------------------------------------------- deciding
    def expected(self, case: Case) -> tuple[np.ndarray, ...]:
        """The reference's results on ``case``."""
        assert self.reference is not None, f"{self.function} has no reference"
        return to_arrays(self.reference(*case.args, **case.kwargs))

    def verify(self, cases: list[Case], outcomes: list[Outcome]) -> Finding | None:
        """``None`` when every outcome is right, else one finding naming the likely mistake."""
        if self.verifier is not None:
            return self.verifier(self, cases, outcomes)
        for at, (case, out) in enumerate(zip(cases, outcomes, strict=True)):
            want = self.expected(case)
            rtol, atol = tolerance(self.expected, case, want, exact=self.exact)
            got = out.values
            assert got is not None, "verify sees only calls that returned numbers"
            if len(got) != len(want):
                return Finding(f"{count_message(self, got, len(want))} (on input {case.describe()})", Kind.WRONG_COUNT)
            if all(close(g, w, rtol, atol) for g, w in zip(got, want, strict=True)):
                continue
            return self._diagnose(case, got, want, rtol, atol, list(zip(cases, outcomes, strict=True))[at + 1:])
        return None

    def _explains(self, mistake: Mistake, later: Sequence[tuple[Case, Outcome]]) -> bool:
        """Whether ``mistake`` also gives what the answer returned on the ``later`` cases of the check
        (so a wrong statistic that happens to come close to a mistake's on one case is not named by it)."""
        for case, out in later:
            try:
                wrong = mistake.results(case)
            except Exception:  # a mistake may not apply to this input
                continue
            got = out.values
            if got is None or len(got) != len(wrong):
                continue
            want = self.expected(case)
            rtol, atol = tolerance(self.expected, case, want, exact=self.exact)
            if not all(g.shape == w.shape and close(g, w, max(rtol, 1e-6), max(atol, 1e-8), equal_nan=True)
                       for g, w in zip(got, wrong, strict=True)):
                return False
        return True

    def _diagnose(self, case: Case, got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...],
                  rtol: float, atol: float, later: Sequence[tuple[Case, Outcome]] = ()) -> Finding:
        matching: list[tuple[float, int, Mistake]] = []  # the mistakes that give the answer's results
        for order, mistake in enumerate(self.mistakes):
            try:
                wrong = mistake.results(case)
            except Exception:  # a mistake may not apply to this input
                continue
            if len(wrong) == len(want) and all(
                    w.shape == r.shape and close(w, r, rtol, atol) for w, r in zip(wrong, want, strict=True)):
                continue  # this mistake makes no difference on this input
            if len(wrong) == len(got) and all(
                    g.shape == w.shape and close(g, w, max(rtol, 1e-6), max(atol, 1e-8), equal_nan=True)
                    for g, w in zip(got, wrong, strict=True)) and self._explains(mistake, later):
                with np.errstate(invalid="ignore"):
                    off = max(largest_error(np.where(np.isnan(g), 0.0, g), np.where(np.isnan(w), 0.0, w))
                              for g, w in zip(got, wrong, strict=True))
                matching.append((off, order, mistake))
        if matching:  # two that both come close (a std of n-1 and one of other pairs): the closer one
            mistake = min(matching, key=lambda m: (m[0], m[1]))[2]
            return Finding.mistake(mistake.message, f"{mistake.message} (on input {case.describe()})",
                                   f"{self.function}/{mistake.id}")
        if self.extra is not None and (msg := self.extra(case, got)):
            name = msg.name if isinstance(msg, Finding) else msg  # a Finding may show more than its name
            return self.identify(Finding.mistake(name or "", str(msg)))
        for g, w in zip(got, want, strict=True):
            if g.shape != w.shape and (found := self.identified(case, g, w, rtol, atol)):  # transposed, squeezed
                return found
        for g, w in zip(got, want, strict=True):
            if g.shape != w.shape:
                return Finding(f"{shape_message(g, w)} (on input {case.describe()})", Kind.WRONG_SHAPE)
        for g, w in zip(got, want, strict=True):
            if np.isnan(g).any() and not np.isnan(w).any():
                return Finding(f"NaN in {int(np.isnan(g).sum())} of {g.size} entries (on input {case.describe()})",
                               Kind.NAN)
        for g, w in zip(got, want, strict=True):
            if (where := wrong_where_minus_infinity(g, w, rtol, atol)) is not None:
                return Finding(f"wrong where the reference is −∞ (a masked position; −∞ or a large negative such as "
                               f"-1e9 is expected there): yours is {float(g[where]):.3g} at {list(map(int, where))} "
                               f"(on input {case.describe()})", Kind.WRONG_VALUES)
        for g, w in zip(got, want, strict=True):
            if not close(g, w, rtol, atol) and (found := self.identified(case, g, w, rtol, atol)):
                return found
        err = max(largest_error(g, w) for g, w in zip(got, want, strict=True))
        return Finding(f"wrong values on input {case.describe()} (largest error {err:.3g})", Kind.WRONG_VALUES)


    def identified(self, case: Case, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> Finding | None:
        """The finding for ``got`` being ``want`` under a known identity (transposed, negated, times a
        constant, ...: :func:`selfattn.checks.identities.identity`), if it is."""
        if (found := identity(got, want, rtol, atol, exact=self.exact)) is None:
            return None
        id_, text = found
        return Finding.mistake(GENERIC[id_], f"{text} (on input {case.describe()})", f"{self.function}/{id_}")


def count_message(exercise: Exercise, got: Sequence[np.ndarray], n_want: int) -> str:
    """One line for a result with the wrong number of parts (a list or an array instead of a
    tuple, a tuple of tuples, several values instead of one)."""
    names = "(" + ", ".join(exercise.returns) + ")"
    if n_want == 1:
        return f"returned a tuple of {len(got)} values where one array is expected: return a single array"
    if len(got) == 1:
        g = got[0]
        what = "a single number" if g.ndim == 0 else f"one array of shape {g.shape}"
        return (f"returned {what} where {n_want} separate results are expected: return the tuple {names} "
                f"(`return a, b, ...`), not a list or an array")
    return f"returned {len(got)} values where {n_want} are expected: return the flat tuple {names}"


def shape_message(got: np.ndarray, want: np.ndarray) -> str:
    if got.ndim == 0:
        return f"returned a single number where an array of shape {want.shape} is expected"
    if want.ndim == 0:
        return f"returned an array of shape {got.shape} where a single number is expected"
    return f"expected shape {want.shape}, got {got.shape}"


def wrong_where_minus_infinity(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> tuple[int, ...] | None:
    """The first index where ``want`` is −∞ and ``got`` is not −∞ nor a large negative (:func:`close`'s
    rule), when that is all that is wrong (``got`` is right everywhere else); else ``None``."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return None
    inf = np.isneginf(want)
    bad = inf & ~(got <= -1e9)
    if not bad.any() or not close(np.where(inf, 0.0, got), np.where(inf, 0.0, want), rtol, atol):
        return None
    return tuple(int(i) for i in np.argwhere(bad)[0])


def largest_error(got: np.ndarray, want: np.ndarray) -> float:
    """Largest absolute difference where the reference is finite (inf where the result is not)."""
    keep = np.isfinite(want)
    if not keep.any():
        return float("inf") if not np.array_equal(got, want) else 0.0
    diff = np.abs(got[keep] - want[keep])
    return float("inf") if not np.isfinite(diff).all() else float(diff.max())


# ---------------------------------------------------------------------------------------------
# comparisons for verifiers


#: The unit roundoff of float32 (half its machine epsilon): each float32 operation, and each cast
#: of a float64 number to float32, is exact to within a relative U32 (about 6e-8).
U32 = float(np.finfo(np.float32).eps) / 2
#: The margin over the first-order bound: the sign patterns of :func:`float32_neighbours` estimate
#: ``|J| |x|`` from below (cancellation), and a row's error may reach both ends of its bound.
SAFETY = 4.0


def row_length(case: Case) -> int:
    """The longest axis of the case's float inputs (at least 1): the length of the sums a correct
    implementation forms, which its rounding error grows with."""
    return max([1] + [max(a.shape, default=1) for a in (*case.args, *case.kwargs.values())
                      if isinstance(a, np.ndarray) and a.dtype.kind == "f"])


def _signs(size: int, pattern: int) -> np.ndarray:
    """±1 for each of ``size`` entries (flat index ``k``): pattern 0 is all +1, pattern ``p >= 1`` is
    ``-1`` where bit ``p - 1`` of ``k`` is set. Any two entries of an array differ in some bit, so
    some pattern moves them apart (what a softmax, blind to a shift of its row, feels)."""
    return 1.0 - 2.0 * ((np.arange(size) >> max(pattern - 1, 0)) & 1) * (pattern > 0)


def float32_neighbours(case: Case) -> list[Case]:
    """``case`` with every float input array moved by the backward error of a float32 computation.

    A correct implementation that rounds to float32 (casting its inputs, or computing in float32)
    returns, to first order, the exact result of inputs moved by up to ``n · U32`` relative (``n``:
    :func:`row_length`, the length of its sums). Each neighbour moves every entry ``x`` to
    ``x (1 + s n U32)`` for one fixed pattern of signs ``s`` (:func:`_signs`: all up, then one
    pattern per bit of the largest input's flat index). Integer inputs (ids, lengths, sizes),
    ``-inf`` and ``0`` (masks) do not move; a case without float inputs has no neighbours.
    """
    arrays = [a for a in (*case.args, *case.kwargs.values()) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not arrays:
        return []
    rho = row_length(case) * U32
    patterns = 1 + max(1, int(max(a.size for a in arrays) - 1).bit_length())

    def moved(a: Any, pattern: int) -> Any:
        if not (isinstance(a, np.ndarray) and a.dtype.kind == "f"):
            return a
        with np.errstate(invalid="ignore"):
            return np.asarray(a, dtype=np.float64) * (1.0 + rho * _signs(a.size, pattern).reshape(a.shape))

    return [Case(tuple(moved(a, p) for a in case.args), {k: moved(a, p) for k, a in case.kwargs.items()}, case.meta)
            for p in range(patterns)]


def tolerance(truth: Callable[[Case], tuple[np.ndarray, ...]], case: Case, want: Sequence[np.ndarray], *,
              exact: bool = False) -> tuple[float, float]:
    """(rtol, atol): how far from ``want`` (= ``truth(case)``) a correct float32 answer may be on ``case``.

    The one rule every check applies (the records' comparisons, Problem 20's lookup). The error of
    a correct implementation working in float32 is, to first order, that of the truth at inputs
    moved by float32 rounding (:func:`float32_neighbours`, whose distance ``n · U32`` grows with
    the length of the rows) plus the rounding of the result itself (relative ``n · U32``): so it
    grows with the condition of the case (scores in the hundreds move their softmax by hundreds of
    times more than scores near 1). Both terms are taken :data:`SAFETY` times.

    Parameters
    ----------
    truth
        The right results of a case (a record's reference, through :meth:`Exercise.expected`).
    case, want
        The case and ``truth(case)``.
    exact
        A result of its own exact (integers, masks, rows looked up): only the inputs' rounding
        counts, no rounding of the result (a case without float inputs is then compared exactly).
    """
    rtol = 0.0 if exact else SAFETY * row_length(case) * U32
    moved = 0.0
    for near in float32_neighbours(case):
        with np.errstate(all="ignore"):
            there = truth(near)
        moved = max([moved] + [largest_error(np.asarray(t, dtype=float), np.asarray(w, dtype=float))
                               for t, w in zip(there, want, strict=True)])
    return rtol, SAFETY * moved


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, *, equal_nan: bool = False) -> bool:
    """Same shape and equal within tolerance; ``-inf`` must meet ``-inf`` (or a large negative).

    With ``equal_nan`` (comparing with a named mistake, which may itself give NaN), NaN must meet
    NaN in the same places, and some entry besides must be a number to compare.
    """
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return False
    inf = np.isneginf(want)
    nan = np.isnan(want) if equal_nan else np.zeros(want.shape, dtype=bool)
    if (np.isnan(got) != nan).any() if equal_nan else (np.isnan(got) & ~np.isnan(want)).any():
        return False
    if equal_nan and nan.size and nan.all():
        return False
    if inf.any() and not (got[inf] <= -1e9).all():
        return False
    keep = ~inf & ~nan
    return bool(np.allclose(got[keep], want[keep], rtol=rtol, atol=atol))

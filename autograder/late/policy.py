"""The late-penalty policy: one formula for every score the course shows.

Set in a user-level ``nbgrader_config.py`` (nbgrader's own option, extended)::

    c.LateSubmissionPlugin.penalty_method = "percent"   # "none", "zero" or "percent"
    c.LateSubmissionPlugin.percent = 10                  # per started day (or hour) late
    c.LateSubmissionPlugin.per = "day"                   # or "hour"
    c.LateSubmissionPlugin.cap = 50                      # never more than this percent
    c.LateSubmissionPlugin.grace_minutes = 15            # this late counts as on time

:class:`LatePenalty` is nbgrader's ``LateSubmissionPlugin`` with these traits (the course's
``nbgrader_config.py`` makes it ``AssignLatePenalties.plugin_class``); configuration addressed to
``LateSubmissionPlugin`` reaches it. :class:`Policy` is the resolved value, plain data; its
:meth:`Policy.penalty` is applied to the *final* score of each notebook, hand grades included
(:mod:`autograder.late.penalties`), and :func:`final_score` is the one subtraction every export uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float, TraitError
from traitlets.config import Config

from autograder.errors import RefusedInput
from autograder.late.clock import lateness

__all__ = ["LatePenalty", "Policy", "final_score", "lateness", "policy_of"]

#: seconds in one unit of lateness
UNITS = {"day": 86400.0, "hour": 3600.0}


@dataclass(frozen=True)
class Policy:
    """A resolved late policy.

    Attributes
    ----------
    method : str
        ``"none"`` (no penalty), ``"zero"`` (a late notebook scores 0) or ``"percent"``.
    percent : float
        With ``"percent"``: the percent of the score taken per started ``per`` late.
    per : str
        ``"day"`` or ``"hour"``.
    cap : float
        The most percent ever taken (with ``"percent"``).
    grace_seconds : float
        Lateness up to this counts as on time (every method); beyond it, lateness counts from the due date.
    """

    method: str = "none"
    percent: float = 0.0
    per: str = "day"
    cap: float = 100.0
    grace_seconds: float = 0.0

    def fraction(self, seconds_late: float) -> float:
        """The fraction (0 to 1) of a score taken for ``seconds_late`` seconds past the due date."""
        if self.method == "none" or seconds_late <= self.grace_seconds or seconds_late <= 0:
            return 0.0
        if self.method == "zero":
            return 1.0
        units = math.ceil(seconds_late / UNITS[self.per])
        return min(self.cap, self.percent * units, 100.0) / 100.0

    def penalty(self, score: float, seconds_late: float) -> float:
        """Points taken from ``score`` (a notebook's final score, >= 0) for this lateness."""
        return max(score, 0.0) * self.fraction(seconds_late)

    def notebook_penalty(self, score: float | None, seconds_late: float) -> float | None:
        """The late penalty of one notebook whose current score (hand grades included) is ``score``:
        ``None`` (no penalty recorded) when the policy is ``"none"`` or the hand-in was not late,
        else the points taken, never more than the score. The one formula behind every penalty the
        gradebook holds (:mod:`autograder.late.penalties`), so behind every final score shown."""
        if self.method == "none" or not seconds_late > 0:
            return None
        return min(self.penalty(score or 0.0, seconds_late), max(score or 0.0, 0.0))

    def describe(self) -> str:
        """The policy in a few words, for students and the summary."""
        grace = f", {lateness(self.grace_seconds)} of grace" if self.grace_seconds else ""
        if self.method == "none":
            return "no penalty for late work"
        if self.method == "zero":
            return f"late work scores 0{grace}"
        return f"{self.percent:g}% of the score per started {self.per} late, at most {self.cap:g}%{grace}"


def final_score(raw: float, penalty: float | None) -> float:
    """The score after the late penalty: every export, the feedback and the report use this."""
    return max(0.0, (raw or 0.0) - (penalty or 0.0))


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with the course's policies (none, zero, percent)."""

    penalty_method = Enum(("none", "zero", "percent"), default_value="none", help=(
        "'none': no penalty; 'zero': a late notebook scores 0; 'percent': `percent` of its score per "
        "started `per` late, at most `cap`. Applied to the final score, hand grades included")).tag(config=True)
    percent = Float(10.0, min=0.0, max=100.0, help=(
        "With penalty_method 'percent': the percent of the score taken per started day (or hour) late")
    ).tag(config=True)
    per = Enum(("day", "hour"), default_value="day", help=(
        "With penalty_method 'percent': the unit of lateness, 'day' or 'hour'")).tag(config=True)
    cap = Float(100.0, min=0.0, max=100.0, help=(
        "With penalty_method 'percent': the most percent of a score ever taken")).tag(config=True)
    grace_minutes = Float(0.0, min=0.0, help=(
        "Minutes past the due date (extension included) that count as on time, under every method")
    ).tag(config=True)

    def policy(self) -> Policy:
        return Policy(self.penalty_method, self.percent, self.per, self.cap, self.grace_minutes * 60)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        """nbgrader's hook (at autograde); :mod:`autograder.late.penalties` applies it again to the
        final score after hand-grading."""
        return self.policy().notebook_penalty(score, total_seconds_late)


def policy_of(config: Config) -> Policy:
    """The policy of nbgrader's configuration ``config``.

    Raises
    ------
    RefusedInput
        One line naming the option and the problem, for a value the policy cannot take.
    """
    try:
        return LatePenalty(config=config).policy()
    except TraitError as exc:
        text = " ".join(str(exc).split())
        raise RefusedInput(f"late-penalty setting refused (c.LateSubmissionPlugin.*): {text}") from None

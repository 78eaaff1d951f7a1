"""The grading settings that can change a verdict, read from nbgrader's configuration chain.

``make grade``, formgrader's Autograde button (nbgrader's pre-convert hook) and the Dask workers
all grade with the limits of :class:`GradingSettings`, set like any nbgrader option: in
``autograder/nbgrader_config.py`` or a user-level ``nbgrader_config.py``::

    c.GradingSettings.cpu_seconds = 120

``make grade``'s flags (``--cpu-seconds``, ``--memory-mb``) override them for one run. Every
verdict records the settings it was decided with (:func:`autograder.verdicts.settings`), so a
changed setting makes the verdicts it affects stale, and the next run grades them again.
"""

from __future__ import annotations

import json
import os

from traitlets import Integer
from traitlets.config import Config, Configurable

from .sandbox import Limits


class GradingSettings(Configurable):
    """Limits of each exercise's run in the grading sandbox."""

    cpu_seconds = Integer(Limits.cpu_seconds, min=1, help=(
        "CPU seconds one exercise's run may use before it is stopped as a time-out "
        "(the wall-clock limit is twice this plus 10 s)")).tag(config=True)
    memory_mb = Integer(Limits.memory_bytes >> 20, min=64, help=(
        "Address space (MiB) of one exercise's run; above it, allocations fail")).tag(config=True)

    def limits(self, cpu_seconds: int | None = None, memory_mb: int | None = None) -> Limits:
        """The sandbox limits, with the command line's values (where given) winning."""
        cpu = self.cpu_seconds if cpu_seconds is None else cpu_seconds
        memory = self.memory_mb if memory_mb is None else memory_mb
        return Limits(cpu_seconds=cpu, memory_bytes=memory << 20)


#: How ``make grade`` hands its command-line overrides to the nbgrader steps it starts (their
#: pre-convert hook decides any verdict still missing with the same limits as the run).
OVERRIDES = "SELFATTN_GRADING_OVERRIDES"


def configured_limits(config: Config | None = None, cpu_seconds: int | None = None,
                      memory_mb: int | None = None) -> Limits:
    """The limits of nbgrader's configuration chain (loaded from ``autograder/`` unless ``config``
    is given), then the overrides of the ``make grade`` run this process belongs to, if any, then
    the values given here (the command line's), later ones winning."""
    if config is None:
        from .nbgrader_steps import load_config

        config = load_config()
    inherited = json.loads(os.environ.get(OVERRIDES) or "{}")
    cpu_seconds = cpu_seconds if cpu_seconds is not None else inherited.get("cpu_seconds")
    memory_mb = memory_mb if memory_mb is not None else inherited.get("memory_mb")
    return GradingSettings(config=config).limits(cpu_seconds, memory_mb)


def hand_down(limits: Limits) -> None:
    """Make ``limits`` the settings of every process this one starts from now on (see
    :data:`OVERRIDES`)."""
    os.environ[OVERRIDES] = json.dumps({"cpu_seconds": limits.cpu_seconds, "memory_mb": limits.memory_bytes >> 20})


def describe(limits: Limits) -> str:
    """One line for the grading summary."""
    return (f"CPU {limits.cpu_seconds} s and address space {limits.memory_bytes >> 20} MiB per exercise run "
            f"(c.GradingSettings in nbgrader_config.py, or make grade's flags)")

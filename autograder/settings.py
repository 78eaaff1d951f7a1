"""The grading settings, read from nbgrader's configuration chain: one object, passed down.

``make grade``, formgrader's Autograde button (nbgrader's pre-convert hook) and the Dask workers
all grade with the :class:`Settings` resolved from :class:`GradingSettings`, set like any
nbgrader option: in ``autograder/nbgrader_config.py`` or a user-level ``nbgrader_config.py``::

    c.GradingSettings.cpu_seconds = 120
    c.GradingSettings.workers = 4

or on an nbgrader command line (``./nbgrader autograde attention --GradingSettings.cpu_seconds=120``).
``python -m autograder.grade config`` prints every option with its help, in the format of
``nbgrader generate_config``, which lists them too (the course's configuration file adds the class
to its list, :func:`autograder.nbgrader_ext.plugins.list_settings_in_generate_config`).

Later ones win: the configuration chain, then the environment variables
``$SELFATTN_SANDBOX=fallback``, ``$SELFATTN_WARM_SANDBOX=0`` and ``$SELFATTN_CGROUPS=0`` (read in
:mod:`autograder.environment` and nowhere else), then ``make grade``'s flags (``--cpu-seconds``,
``--memory-mb``, ``--workers``, ``--allow-fallback-sandbox``), which hold for that run only. The
run hands its settings to the nbgrader steps it starts as traitlets configuration
(:meth:`Settings.config`, merged into their ``NbGraderAPI``'s), to its pool workers with each job,
and to Dask workers inside each task.

Where the run is (``--scheduler``, ``--slurm``, ``--array-task``, the TLS files) is a choice of one
run, not a setting: those stay flags. Every verdict records the settings that can change it
(:func:`autograder.verdicts.decide.settings`), so a changed setting makes the verdicts it affects stale,
and the next run grades them again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from traitlets import Bool, Enum, Integer
from traitlets.config import Config, Configurable

from autograder import environment
from autograder.sandbox import DEFAULT, Limits, cgroups, choose_fallback, warm


class GradingSettings(Configurable):
    """How each notebook is graded: the sandbox's limits and mode, and the run's parallelism."""

    cpu_seconds = Integer(Limits.cpu_seconds, min=1, help=(
        "CPU seconds one exercise's run may use before it is stopped as a time-out "
        "(the wall-clock limit is twice this plus 10 s)")).tag(config=True)
    memory_mb = Integer(Limits.memory_bytes >> 20, min=64, help=(
        "Address space (MiB) of one exercise's run; above it, allocations fail")).tag(config=True)
    workers = Integer(0, min=0, help=(
        "Parallel grading jobs of make grade (and of its nbgrader steps); 0: one per core")).tag(config=True)
    warm_sandbox = Bool(True, help=(
        "Fork each run from a pre-warmed sandbox (about 10 ms a run) instead of starting a new one "
        "(about 100 ms); $SELFATTN_WARM_SANDBOX=0 turns it off")).tag(config=True)
    sandbox = Enum(["auto", "fallback"], "auto", help=(
        "'auto': bubblewrap where it works, else the weaker fallback sandbox; 'fallback': never "
        "bubblewrap (to compare; $SELFATTN_SANDBOX=fallback does the same)")).tag(config=True)
    cgroups = Bool(True, help=(
        "Give each run a cgroup where one can be made, so its memory cap holds for all its processes "
        "together; $SELFATTN_CGROUPS=0 turns it off (to compare)")).tag(config=True)
    allow_fallback_sandbox = Bool(False, help=(
        "With a Dask cluster, Slurm jobs or an array task: let workers without bubblewrap grade "
        "(weaker isolation); make grade's --allow-fallback-sandbox")).tag(config=True)

    def resolve(self, environ: Mapping[str, str] | None = None, *, cpu_seconds: int | None = None,
                memory_mb: int | None = None, workers: int | None = None,
                allow_fallback_sandbox: bool | None = None) -> Settings:
        """The settings of one run: these traits, then the environment's overrides, then the given
        values (the command line's; ``None`` and ``False`` flags leave the setting alone)."""
        values = {name: getattr(self, name) for name in self.class_trait_names(config=True)}
        values.update(environment.setting_overrides(environ))
        flags = {"cpu_seconds": cpu_seconds, "memory_mb": memory_mb, "workers": workers,
                 "allow_fallback_sandbox": allow_fallback_sandbox or None}
        values.update({k: v for k, v in flags.items() if v is not None})
        for name, value in values.items():  # the traits' own checks (min=...) for the flags' values too
            self.class_traits()[name]._validate(self, value)
        return Settings(limits=Limits(cpu_seconds=values["cpu_seconds"], memory_bytes=values["memory_mb"] << 20),
                        workers=values["workers"], warm_sandbox=values["warm_sandbox"],
                        sandbox=values["sandbox"], allow_fallback_sandbox=values["allow_fallback_sandbox"],
                        cgroups=values["cgroups"])


@dataclasses.dataclass(frozen=True)
class Settings:
    """The resolved settings of one run: plain data, passed to every process that grades for it.

    Attributes
    ----------
    limits : Limits
        Of each exercise's run in the sandbox.
    workers : int
        Parallel jobs; 0 means one per core (:meth:`worker_count`).
    warm_sandbox, sandbox, allow_fallback_sandbox
        As :class:`GradingSettings`.
    """

    limits: Limits = DEFAULT
    workers: int = 0
    warm_sandbox: bool = True
    sandbox: str = "auto"
    allow_fallback_sandbox: bool = False
    cgroups: bool = True

    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1

    def config(self) -> Config:
        """These settings as traitlets configuration (``c.GradingSettings.*``): how a run hands
        them to the nbgrader steps it starts."""
        return Config({"GradingSettings": {
            "cpu_seconds": self.limits.cpu_seconds, "memory_mb": self.limits.memory_bytes >> 20,
            "workers": self.workers, "warm_sandbox": self.warm_sandbox, "sandbox": self.sandbox,
            "allow_fallback_sandbox": self.allow_fallback_sandbox, "cgroups": self.cgroups}})

    def command_line(self) -> list[str]:
        """These settings as nbgrader command-line options (``--GradingSettings.cpu_seconds=N`` ...)."""
        return [f"--GradingSettings.{k}={v}" for k, v in self.config()["GradingSettings"].items()]

    def apply(self) -> None:
        """Make this process's sandbox follow these settings: the fallback sandbox if chosen, warm
        sessions or not, cgroups or not. (Never takes back a fallback or cgroups turned off that
        this process was started with.)"""
        if self.sandbox == "fallback":
            choose_fallback()
        if not self.cgroups:
            cgroups.turn_off()
        warm.enable(self.warm_sandbox)


def configured(config: Config | None = None, environ: Mapping[str, str] | None = None, **flags) -> Settings:
    """The settings of nbgrader's configuration chain (loaded from ``autograder/`` unless ``config``
    is given), then the environment's, then ``flags`` (the command line's: ``cpu_seconds``,
    ``memory_mb``, ``workers``, ``allow_fallback_sandbox``), later ones winning."""
    if config is None:
        from autograder.nbgrader_ext.steps import load_config

        config = load_config()
    return GradingSettings(config=config).resolve(environ, **flags)


def help_config() -> str:
    """Every setting with its help and default, as ``nbgrader generate_config`` writes a class."""
    return GradingSettings.class_config_section()


def describe(limits: Limits) -> str:
    """One line for the grading summary."""
    return (f"CPU {limits.cpu_seconds} s and address space {limits.memory_bytes >> 20} MiB per exercise run "
            f"(c.GradingSettings in nbgrader_config.py, or make grade's flags)")

"""What the grading subcommands share: the options of a run's settings and workspace, and reading
them (nbgrader's configuration chain, the environment, then the flags)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder import settings
from autograder.errors import RefusedInput
from autograder.workspace import Workspace, from_environment


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options every subcommand that grades takes: the limits, the workers and the workspace."""
    p.add_argument("--workers", type=int, default=None,
                   help="parallel grading jobs (default: c.GradingSettings.workers, else all cores)")
    p.add_argument("--cpu-seconds", type=int, default=None,
                   help="CPU limit per exercise (default: c.GradingSettings.cpu_seconds, else 60)")
    p.add_argument("--memory-mb", type=int, default=None,
                   help="memory cap per exercise run, each process and all together where a cgroup can be made "
                        "(default: c.GradingSettings.memory_mb, else 2048)")
    p.add_argument("--allow-fallback-sandbox", action="store_true",
                   help="with --scheduler, --slurm or array-task: let workers without bubblewrap grade (weaker "
                        "isolation; default: c.GradingSettings.allow_fallback_sandbox)")
    p.add_argument("--work-folder", type=Path, metavar="DIR", default=None,
                   help="the work folder (default: $AUTOGRADER_WORKDIR, else autograder/); a Slurm array task is "
                        "given it by scripts/slurm-grade-array.sh")
    p.add_argument("--course-root", type=Path, metavar="DIR", default=None,
                   help="the course root holding solutions/ and notebooks/ (default: $AUTOGRADER_COURSE, else "
                        "the repository)")


def line_buffered() -> None:
    """Print each line as it is written, also into a pipe (``make grade | tee``, a CI log), where
    Python would otherwise hold the progress lines back until the run ends."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)


def settings_of(a: argparse.Namespace) -> settings.Settings:
    """The run's settings: nbgrader's configuration chain, the environment, then the flags."""
    from traitlets import TraitError

    try:
        return settings.configured(cpu_seconds=a.cpu_seconds, memory_mb=a.memory_mb, workers=a.workers,
                                   allow_fallback_sandbox=a.allow_fallback_sandbox)
    except TraitError as exc:
        raise RefusedInput(f"refused: {str(exc).splitlines()[0]}") from None


def run_settings(a: argparse.Namespace) -> settings.Settings:
    """:func:`settings_of`, applied to this process and the workers it forks (they grade in the
    chosen sandbox)."""
    grading = settings_of(a)
    grading.apply()
    return grading


def workspace(a: argparse.Namespace) -> Workspace:
    """The one workspace of this run (the environment's, or the folders the flags name), passed down."""
    ws = from_environment()
    if a.work_folder is not None or a.course_root is not None:
        ws = Workspace(work=a.work_folder or ws.work, course=a.course_root or ws.course)
    return ws

"""``python -m autograder.grade config``: print every grading setting and exit."""

from __future__ import annotations

import argparse

from autograder import settings

NAME = "config"
HELP = ("print every grading setting (c.GradingSettings.* in nbgrader_config.py) with its help and default, as "
        "nbgrader generate_config writes them, and exit")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """No options."""


def run(a: argparse.Namespace) -> int:
    print(settings.help_config())
    return 0

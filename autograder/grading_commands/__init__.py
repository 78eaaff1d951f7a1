"""The subcommands of ``python -m autograder.grade`` (:mod:`autograder.grade`), one module each, as
nbgrader's apps and Otter's commands are:

- :mod:`autograder.grading_commands.grade_class`: ``class``, the default (what ``make grade`` runs);
- :mod:`autograder.grading_commands.one`: decide one notebook;
- :mod:`autograder.grading_commands.array_task`: a Slurm array task;
- :mod:`autograder.grading_commands.finish`: ``make grades-final``;
- :mod:`autograder.grading_commands.config`: every grading setting.

Each module has ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; what they
share (the options, the settings, the workspace) is in :mod:`autograder.grading_commands.common`.
"""

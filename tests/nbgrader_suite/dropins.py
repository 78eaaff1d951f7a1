"""The course's drop-in replacements for nbgrader, made active in a process running nbgrader's own tests.

A drop-in is a course class or function that takes the place of nbgrader's and claims nbgrader's
behaviour (the same rows, checks and results, faster or with more shown), as
``autograder/nbgrader_config.py`` sets them:

- ``OverwriteCells``, ``SaveAutoGrades`` -> :mod:`autograder.nbgrader_ext.preloaded`'s (rows read once);
- ``CheckCellMetadata`` -> :class:`~autograder.nbgrader_ext.cell_metadata.CheckCellMetadataCompiled`;
- ``GetGrades`` -> :class:`~autograder.nbgrader_ext.feedback_html.GetGradesWithQueue`;
- ``GenerateFeedback.exporter_class`` -> :class:`~autograder.nbgrader_ext.feedback_html.OfflineFeedbackExporter`;
- ``ExportApp.plugin_class`` -> :class:`~autograder.outputs.csv_export.QuotedCsvExportPlugin`;
- nbgrader's ``create_engine``, ``Base.metadata.create_all`` and ``get_alembic_version``
  (:mod:`~autograder.nbgrader_ext.gradebook_engine`, :mod:`~autograder.nbgrader_ext.gradebook_schema`).

:func:`activate` swaps the preprocessor names in ``nbgrader.preprocessors`` (nbgrader's tests
import them from there) and in the default lists of nbgrader's converters, installs the gradebook
replacements, and gives every nbgrader app the exporter and the export plugin through nbgrader's own
``NbGrader.build_extra_config``. The course's full configuration (staging, verdicts, collect into
the course's layout) is not a drop-in: it refuses most of nbgrader's test layouts by design and is
not activated here.

``sitecustomize.py`` beside this file calls :func:`activate` at interpreter start when
``SELFATTN_NBGRADER_DROPINS=1``, so nbgrader's tests that run nbgrader in a subprocess get them too.
"""

from __future__ import annotations

#: nbgrader.preprocessors name -> (course module, course class)
PREPROCESSORS = {
    "OverwriteCells": ("autograder.nbgrader_ext.preloaded", "OverwriteCellsPreloaded"),
    "SaveAutoGrades": ("autograder.nbgrader_ext.preloaded", "SaveAutoGradesPreloaded"),
    "CheckCellMetadata": ("autograder.nbgrader_ext.cell_metadata", "CheckCellMetadataCompiled"),
    "GetGrades": ("autograder.nbgrader_ext.feedback_html", "GetGradesWithQueue"),
}


def activate() -> None:
    """Make the course's drop-ins nbgrader's in this process (idempotent).

    """
    import importlib

    import nbgrader.preprocessors as pre
    from traitlets import List

    if getattr(pre, "selfattn_dropins", False):
        return
    swapped = {getattr(pre, name): getattr(importlib.import_module(mod), cls)
               for name, (mod, cls) in PREPROCESSORS.items()}
    for original, cls in swapped.items():
        assert issubclass(cls, original), f"{cls.__name__} is not a drop-in for {original.__name__}"
        setattr(pre, original.__name__, cls)
    # nbgrader's converters were imported with nbgrader (its package imports its server extensions):
    # their default lists of preprocessors get the drop-ins in place
    for converter in _converters():
        for trait in converter.class_traits().values():
            listed = (trait.default_args or [None])[0] if isinstance(trait, List) else None
            if isinstance(listed, list) and any(p in swapped for p in listed):  # List's default: default_args
                trait.default_args = ([swapped.get(p, p) for p in listed], *trait.default_args[1:])
    pre.selfattn_dropins = True

    from autograder.nbgrader_ext import gradebook_engine, gradebook_schema

    gradebook_engine.install()
    gradebook_schema.install()

    from nbgrader.apps.baseapp import NbGrader

    nbgrader_extra = NbGrader.build_extra_config

    def build_extra_config(self):
        from autograder.nbgrader_ext.feedback_html import OfflineFeedbackExporter
        from autograder.outputs.csv_export import QuotedCsvExportPlugin

        config = nbgrader_extra(self)
        config.GenerateFeedback.exporter_class = OfflineFeedbackExporter
        config.ExportApp.plugin_class = QuotedCsvExportPlugin
        return config

    NbGrader.build_extra_config = build_extra_config


def _converters() -> list[type]:
    """nbgrader's converter classes (each one's own class, subclasses included)."""
    import nbgrader.converters as conv
    from nbgrader.converters.base import BaseConverter

    return [c for c in vars(conv).values() if isinstance(c, type) and issubclass(c, BaseConverter)]

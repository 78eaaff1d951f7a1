"""Kept for user-level configurations that name ``autograder.csv_export.QuotedCsvExportPlugin``
(the code is in :mod:`autograder.outputs.csv_export`)."""

from autograder.outputs.csv_export import QuotedCsvExportPlugin

__all__ = ["QuotedCsvExportPlugin"]

"""nbgrader's ``CheckCellMetadata`` with its JSON schema compiled once per process.

nbgrader checks the metadata of every cell of every notebook it autogrades, twice (once while
sanitising, once among the autograde preprocessors), through ``jsonschema.validate``, which
checks the schema itself against its meta-schema and builds a new validator on each call: a
third of ``nbgrader autograde``'s time per notebook. :class:`CheckCellMetadataCompiled` runs
exactly nbgrader's checks (schema version, the schema, grade ids, points, cell types, unique ids)
with one validator built once; it is set for both places in ``nbgrader_config.py``.
"""

from __future__ import annotations

import functools

import jsonschema
from nbformat.notebooknode import NotebookNode
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.nbgraderformat.common import BaseMetadataValidator, SchemaTooNewError, SchemaTooOldError
from nbgrader.preprocessors import CheckCellMetadata


@functools.cache
def _schema_validator(schema_version: int) -> jsonschema.protocols.Validator:
    schema = MetadataValidator().schema
    assert MetadataValidator.schema_version == schema_version
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)  # what jsonschema.validate does on every call: here once
    return cls(schema)


class _CompiledSchemaCheck(BaseMetadataValidator):
    """The base check of nbgrader's validator (schema version, then the JSON schema), with the
    schema's validator built once."""

    def validate_cell(self, cell: NotebookNode) -> None:
        if "nbgrader" not in cell.metadata:
            return
        schema = cell.metadata["nbgrader"].get("schema_version", 0)
        if schema < self.schema_version:
            raise SchemaTooOldError(f"Outdated schema version: {schema} (expected {self.schema_version})",
                                    schema, self.schema_version)
        if schema > self.schema_version:
            raise SchemaTooNewError(f"Schema version is too new: {schema} (expected {self.schema_version})",
                                    schema, self.schema_version)
        error = jsonschema.exceptions.best_match(
            _schema_validator(self.schema_version).iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


class CompiledMetadataValidator(MetadataValidator, _CompiledSchemaCheck):
    """nbgrader's current metadata validator; its ``super().validate_cell`` reaches
    :class:`_CompiledSchemaCheck` (method resolution order) instead of nbgrader's base class."""


class CheckCellMetadataCompiled(CheckCellMetadata):
    """nbgrader's ``CheckCellMetadata`` (same checks, same errors) with the schema compiled once."""

    def preprocess(self, nb, resources):
        import traceback

        from nbgrader.nbgraderformat import ValidationError

        try:
            CompiledMetadataValidator().validate_nb(nb)
        except ValidationError as err:
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from err
        return nb, resources

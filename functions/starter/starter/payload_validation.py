"""What the domain's payload must be: the template's choice, read once per cold start.

- PAYLOAD_MODEL=`module:Class`: a pydantic model (as Powertools' parser uses), imported from the
  function's code (`domain.<module>:<Class>`, a module of functions/starter/domain/). A rejection's
  rule is pydantic's error type (`missing`, `greater_than`, `string_pattern_mismatch`, ...).
- PAYLOAD_SCHEMA=`domain/<name>.schema.json`: a JSON Schema, relative to the function's code
  directory, compiled once with fastjsonschema (the validator of Powertools' validation utility,
  which would compile it again for every record). A rejection's rule is the schema keyword that
  failed (`required`, `minimum`, `pattern`, `type`, ...).
- neither: no validation of the payload; the event_id, size and number rules still apply.

Every rejection names the field (a dotted path in the payload) and the rule.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

CODE_DIR = Path(__file__).resolve().parents[1]


class PayloadRejection(ValueError):
    def __init__(self, field: str, rule: str, detail: str):
        self.field, self.rule, self.detail = field, rule, detail
        super().__init__(detail)


class PayloadValidationSetupError(RuntimeError):
    """PAYLOAD_MODEL or PAYLOAD_SCHEMA names something that cannot be used."""


Validator = Callable[[Any], None]


def _dotted(parts: list[Any]) -> str:
    return ".".join(str(part) for part in parts)


def validate_with_model(model: Any, document: Any) -> None:
    """Raises PayloadRejection with the first error's location and type."""
    from pydantic import ValidationError  # imported by the first record that needs a model

    try:
        # A copy: some Powertools models rewrite their input (the SNS model renames *URL keys).
        model.model_validate(dict(document) if isinstance(document, dict) else document)
    except ValidationError as error:
        first = error.errors()[0]
        raise PayloadRejection(_dotted(list(first["loc"])), first["type"], first["msg"]) from None


def model_validator(reference: str) -> Validator:
    module_name, _, class_name = reference.partition(":")
    if not module_name or not class_name:
        raise PayloadValidationSetupError(
            f"PAYLOAD_MODEL={reference!r} must be module:Class, e.g. domain.model:Payload"
        )
    try:
        model = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise PayloadValidationSetupError(f"PAYLOAD_MODEL={reference!r} cannot be imported: {error}") from None

    def validate(payload: Any) -> None:
        validate_with_model(model, payload)

    return validate


def _schema_field(error: Any, payload: Any) -> str:
    """The failing value's path in the payload; for `required`, the first missing property."""
    parts = list(error.path[1:])  # fastjsonschema's path starts with "data"
    if error.rule == "required":
        holder: Any = payload
        for part in parts:
            holder = holder[part] if isinstance(holder, dict | list) else None
        present = holder if isinstance(holder, dict) else {}
        missing = [name for name in error.rule_definition or [] if name not in present]
        parts += missing[:1]
    return _dotted(parts)


def schema_validator(relative_path: str) -> Validator:
    import fastjsonschema

    path = CODE_DIR / relative_path
    try:
        schema = json.loads(path.read_text())
        check = fastjsonschema.compile(schema)
    except (OSError, ValueError, fastjsonschema.JsonSchemaDefinitionException) as error:
        raise PayloadValidationSetupError(f"PAYLOAD_SCHEMA={relative_path!r} cannot be used: {error}") from None

    def validate(payload: Any) -> None:
        try:
            check(payload)
        except fastjsonschema.JsonSchemaValueException as error:
            raise PayloadRejection(_schema_field(error, payload), error.rule or "schema", error.message) from None

    return validate


@cache
def payload_validator(model: str | None, schema: str | None) -> Validator | None:
    """The validator the template names; None for neither."""
    if model and schema:
        raise PayloadValidationSetupError("set PAYLOAD_MODEL or PAYLOAD_SCHEMA, not both")
    if model:
        return model_validator(model)
    if schema:
        return schema_validator(schema)
    return None

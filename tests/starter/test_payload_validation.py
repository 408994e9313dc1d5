"""What the domain's payload must be is the template's choice (starter/payload_validation.py): a
pydantic model (PAYLOAD_MODEL), a JSON Schema (PAYLOAD_SCHEMA, checked with fastjsonschema, the
validator of Powertools' validation utility), or neither. Either way a rejection names the message,
the field and the rule, and the message goes to the dead-letter queue with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starter.messages import InvalidMessage, parse_record
from starter.payload_validation import PayloadValidationSetupError, payload_validator
from starter.settings import ConfigurationError, Settings
from tests.starter.helpers import REQUIRED_ENVIRONMENT, settings

PAYMENT_SCHEMA = {
    "type": "object",
    "required": ["payment_id", "amount", "currency"],
    "properties": {
        "payment_id": {"type": "string", "minLength": 1},
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "card": {"type": "object", "required": ["last4"], "properties": {"last4": {"type": "string"}}},
    },
}


@pytest.fixture
def schema_file(tmp_path: Path) -> str:
    path = tmp_path / "payment.schema.json"
    path.write_text(json.dumps(PAYMENT_SCHEMA))
    return str(path)  # absolute: read as it is; a relative path is under the function's code directory


def parse_with(validator, body: dict | str, event_format: str = "json", path: str = "payment_id"):
    chosen = settings(event_format, path, payload_validator=validator)
    text = body if isinstance(body, str) else json.dumps(body)
    return parse_record({"messageId": "m-1", "body": text, "attributes": {}}, chosen)


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        pytest.param({"payment_id": "p-1", "currency": "EUR"}, "amount", "required", id="missing"),
        pytest.param({"payment_id": "p-1", "amount": 0, "currency": "EUR"}, "amount", "exclusiveMinimum", id="bound"),
        pytest.param({"payment_id": "p-1", "amount": 3, "currency": "euro"}, "currency", "pattern", id="pattern"),
        pytest.param({"payment_id": "p-1", "amount": "3", "currency": "EUR"}, "amount", "type", id="type"),
        pytest.param(
            {"payment_id": "p-1", "amount": 3, "currency": "EUR", "card": {}}, "card.last4", "required", id="nested"
        ),
    ],
)
def test_a_json_schema_rejection_names_the_field_and_the_keyword(schema_file, body, field, rule) -> None:
    with pytest.raises(InvalidMessage) as rejected:
        parse_with(payload_validator(None, schema_file), body)
    assert (rejected.value.field, rejected.value.rule, rejected.value.event_id) == (field, rule, "p-1")
    assert str(rejected.value).startswith(f"message m-1: field '{field}' breaks rule '{rule}'")


def test_a_schema_checks_the_payload_inside_an_envelope(schema_file) -> None:
    from tests.starter.helpers import eventbridge_body

    body = eventbridge_body({"payment_id": "p-2", "amount": -1, "currency": "EUR"})
    with pytest.raises(InvalidMessage) as rejected:
        parse_with(payload_validator(None, schema_file), body, "eventbridge", "detail.payment_id")
    assert (rejected.value.field, rejected.value.rule) == ("detail.amount", "exclusiveMinimum")


def test_a_valid_payload_passes_the_schema_unchanged(schema_file) -> None:
    body = {"payment_id": "p-3", "amount": 2.5, "currency": "EUR", "extra": [1]}
    event = parse_with(payload_validator(None, schema_file), body)
    assert json.loads(event.execution_input)["payload"] == body


def test_without_validation_only_the_event_id_size_and_number_rules_apply() -> None:
    event = parse_with(None, {"payment_id": "p-4", "amount": "anything", "currency": 7})
    assert event.event_id == "p-4"
    for body, rule in [({"amount": 1}, "event_id"), ('{"payment_id": "p-5", "n": 1e400}', "finite_number")]:
        with pytest.raises(InvalidMessage) as rejected:
            parse_with(None, body)
        assert rejected.value.rule == rule


def test_the_worked_examples_pydantic_model_keeps_its_rules() -> None:
    order = {"order_id": "o-1", "customer_id": "c-1", "amount": 0, "currency": "EUR"}
    with pytest.raises(InvalidMessage) as rejected:
        parse_with(payload_validator("domain.order:Order", None), order, path="order_id")
    assert (rejected.value.field, rejected.value.rule) == ("amount", "greater_than")


@pytest.mark.parametrize(
    ("model", "schema", "says"),
    [
        pytest.param("domain.order", None, "must be module:Class", id="no-class"),
        pytest.param("domain.nothing:Model", None, "cannot be imported", id="no-module"),
        pytest.param(None, "domain/nothing.schema.json", "cannot be used", id="no-schema-file"),
        pytest.param("domain.order:Order", "x.json", "not both", id="both"),
    ],
)
def test_a_validation_the_function_cannot_use_is_a_configuration_error(model, schema, says) -> None:
    with pytest.raises(PayloadValidationSetupError, match=says):
        payload_validator(model, schema)
    environment = {**REQUIRED_ENVIRONMENT, "PAYLOAD_EVENT_ID_PATH": "order_id"}
    for name, value in (("PAYLOAD_MODEL", model), ("PAYLOAD_SCHEMA", schema)):
        if value is not None:
            environment[name] = value
    with pytest.raises(ConfigurationError, match=says):
        Settings.from_environment(environment)


def test_a_format_without_the_domains_event_id_place_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="needs PAYLOAD_EVENT_ID_PATH"):
        Settings.from_environment(dict(REQUIRED_ENVIRONMENT))
    # S3's event_id is the object's key and version: no domain path needed
    assert Settings.from_environment({**REQUIRED_ENVIRONMENT, "EVENT_FORMAT": "s3"}).event_id_path.startswith(
        "Records[0].s3.object"
    )

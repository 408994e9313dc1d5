"""A safety-net dead letter (a whole execution status change event) redriven by SQS itself."""

from __future__ import annotations

import json

import pytest

from starter.formats import FORMATS
from starter.messages import InvalidMessage, parse_record
from starter.settings import Settings
from tests.support import execution_input, order, sqs_record

SETTINGS = Settings("arn:unused", "https://unused", FORMATS["json"], "order_id", 35)


def _status_change(execution_input_text: str | None) -> dict:
    detail = {"executionArn": "arn:aws:states:us-east-1:123456789012:execution:m:e", "status": "ABORTED"}
    if execution_input_text is not None:
        detail["input"] = execution_input_text
    return {"source": "aws.states", "detail-type": "Step Functions Execution Status Change", "detail": detail}


def test_the_original_body_is_handled_as_an_ordinary_delivery():
    body = order("order-9")
    original = json.loads(execution_input(body, message_id="first-delivery"))
    redriven = parse_record(sqs_record(_status_change(json.dumps(original)), message_id="redriven"), SETTINGS)
    direct = json.loads(execution_input(body, message_id="redriven"))
    assert redriven.event_id == "order-9"
    assert json.loads(redriven.execution_input)["payload_hash"] == original["payload_hash"]
    assert json.loads(redriven.execution_input)["message"] == direct["message"]  # the original body travels on


def test_an_event_without_its_input_is_rejected_naming_the_field():
    with pytest.raises(InvalidMessage) as rejected:
        parse_record(sqs_record(_status_change(None), message_id="m-1"), SETTINGS)
    assert rejected.value.field == "detail.input"
    assert rejected.value.rule == "status_change_input"
    assert "m-1" in str(rejected.value)

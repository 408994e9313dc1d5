"""Reading a notification from its SQS record: raw delivery (the template's subscription) and SNS's
JSON envelope (a subscription without raw delivery), and the attribute names `Publish notification`
writes. The envelope's shape follows AWS's example:
https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html (Notification: Type,
MessageId, TopicArn, Message, MessageAttributes {name: {Type, Value}})."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from onceflow_subscriber import EVENT_ID_ATTRIBUTE, PAYLOAD_HASH_ATTRIBUTE, InvalidNotification, parse_notification

ASL = Path(__file__).resolve().parents[2] / "statemachine" / "pipeline.asl.json"


def _raw(body: str, **attributes: str) -> dict:
    return {
        "messageId": "m-1",
        "body": body,
        "messageAttributes": {k: {"stringValue": v, "dataType": "String"} for k, v in attributes.items()},
    }


def test_the_attribute_names_are_those_publish_notification_writes():
    publish = json.loads(ASL.read_text())["States"]["Publish notification"]["Parameters"]["MessageAttributes"]
    assert {EVENT_ID_ATTRIBUTE, PAYLOAD_HASH_ATTRIBUTE} == set(publish)


def test_raw_delivery_gives_the_payload_with_exact_numbers():
    notification = parse_notification(_raw('{"order_id": "o-1", "amount": 9.10}', event_id="o-1", payload_hash="h"))
    assert (notification.event_id, notification.payload_hash, notification.message_id) == ("o-1", "h", "m-1")
    assert notification.payload["amount"] == Decimal("9.10")


def test_an_sns_envelope_is_unwrapped():
    envelope = {
        "Type": "Notification",
        "MessageId": "sns-1",
        "TopicArn": "arn:aws:sns:us-east-1:123456789012:topic",
        "Message": '{"order_id": "o-2"}',
        "MessageAttributes": {
            "event_id": {"Type": "String", "Value": "o-2"},
            "payload_hash": {"Type": "String", "Value": "h2"},
        },
    }
    notification = parse_notification({"messageId": "m-2", "body": json.dumps(envelope)})
    assert (notification.event_id, notification.payload_hash, notification.payload) == (
        "o-2",
        "h2",
        {"order_id": "o-2"},
    )
    assert notification.body == json.dumps(envelope)  # what a dead letter carries: the record as received


@pytest.mark.parametrize(
    ("record", "field", "rule"),
    [
        (_raw('{"a": 1}'), "messageAttributes.event_id", "required"),
        (_raw('{"a": 1}', event_id="o-1"), "messageAttributes.payload_hash", "required"),
        (_raw("[1, 2]", event_id="o-1", payload_hash="h"), "body", "JSON object"),
        (_raw("{", event_id="o-1", payload_hash="h"), "body", "JSON object"),
        (_raw("{}", event_id="é" * 1025, payload_hash="h"), "messageAttributes.event_id", "at most 2048 bytes"),
    ],
)
def test_what_is_not_a_pipeline_notification_names_the_field_and_the_rule(record, field, rule):
    with pytest.raises(InvalidNotification) as raised:
        parse_notification(record)
    assert (raised.value.field, raised.value.rule, raised.value.message_id) == (field, rule, "m-1")
    assert "m-1" in str(raised.value) and field in str(raised.value)

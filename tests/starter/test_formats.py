"""Event format presets (json, eventbridge, sns, s3), EVENT_ID_PATH and the configuration
checks, as pure functions: no AWS."""

from __future__ import annotations

import json

import pytest

from starter.messages import InvalidMessage, parse_record, payload_hash
from starter.settings import ConfigurationError, Settings
from tests.starter.helpers import (
    REQUIRED_ENVIRONMENT,
    eventbridge_body,
    s3_notification_body,
    settings,
    sns_envelope_body,
)
from tests.support import order, sqs_record

ORDER = order("order-7")
# What S3 sends when a notification is configured (sam local generate-event has none; from the S3 docs).
S3_TEST_EVENT = {
    "Service": "Amazon S3",
    "Event": "s3:TestEvent",
    "Time": "2026-09-21T12:00:00.000Z",
    "Bucket": "example-orders",
    "RequestId": "5582815E1AEA5ADF",
    "HostId": "8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE",
}


def parse(body, event_format: str, event_id_path: str | None = None):
    event = parse_record(sqs_record(body, message_id="m-1"), settings(event_format, event_id_path))
    return event.event_id, json.loads(event.execution_input)["payload"]


@pytest.mark.parametrize(
    ("event_format", "body", "event_id", "payload"),
    [
        pytest.param("json", ORDER, "order-7", ORDER, id="json"),
        pytest.param("eventbridge", eventbridge_body(ORDER), "order-7", ORDER, id="eventbridge"),
        pytest.param("sns", sns_envelope_body(ORDER), "order-7", ORDER, id="sns"),
        pytest.param(
            "s3",
            s3_notification_body("uploads/2026/order+7%281%29.csv"),
            "uploads/2026/order 7(1).csv#0A1B2C3D4E5F678901",  # decoded as S3 encodes keys; the sequencer
            s3_notification_body("uploads/2026/order+7%281%29.csv")["Records"][0]["s3"]["object"],
            id="s3",
        ),
        pytest.param(
            "s3",
            s3_notification_body("a/b.csv", version_id="3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"),
            "a/b.csv#3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY",  # a versioned bucket: the version id
            s3_notification_body("a/b.csv", version_id="3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY")["Records"][0]["s3"][
                "object"
            ],
            id="s3-versioned",
        ),
    ],
)
def test_preset_extracts_event_id_and_payload(event_format, body, event_id, payload):
    assert parse(body, event_format) == (event_id, payload)


def test_same_order_hashes_alike_in_every_envelope():
    hashes = {
        parse_record(sqs_record(body), settings(name)).payload_hash
        for name, body in [("json", ORDER), ("eventbridge", eventbridge_body(ORDER)), ("sns", sns_envelope_body(ORDER))]
    }
    assert hashes == {payload_hash(ORDER)}


@pytest.mark.parametrize(
    ("event_format", "path", "body", "event_id"),
    [
        pytest.param("json", "customer_id", ORDER, "customer-7", id="json"),
        pytest.param(
            "eventbridge", "id", eventbridge_body(ORDER), "6a7e8feb-b491-4cf7-a9f1-bf3703467718", id="eventbridge"
        ),
        pytest.param("sns", "MessageId", sns_envelope_body(ORDER), "95df01b4-ee98-5cb9-9903-4c221d41eb5e", id="sns"),
        pytest.param(
            "s3", "Records[0].s3.object.eTag", s3_notification_body("k"), "d41d8cd98f00b204e9800998ecf8427e", id="s3"
        ),
        # The envelope is validated on a copy: Powertools' SNS model renames *URL keys in its input.
        pytest.param(
            "sns", "UnsubscribeURL", sns_envelope_body(ORDER), sns_envelope_body(ORDER)["UnsubscribeURL"], id="sns-url"
        ),
    ],
)
def test_event_id_path_overrides_the_preset(event_format, path, body, event_id):
    settings = Settings.from_environment({**REQUIRED_ENVIRONMENT, "EVENT_FORMAT": event_format, "EVENT_ID_PATH": path})
    event = parse_record(sqs_record(body), settings)
    assert event.event_id == event_id


@pytest.mark.parametrize(
    ("event_format", "body", "field", "rule"),
    [
        pytest.param(
            "eventbridge",
            {**eventbridge_body(ORDER), "detail": order("o", amount=0)},
            "detail.amount",
            "greater_than",
            id="eventbridge-bad-detail",
        ),
        pytest.param(
            "eventbridge",
            {k: v for k, v in eventbridge_body(ORDER).items() if k != "source"},
            "source",
            "missing",
            id="eventbridge-no-source",
        ),
        pytest.param("eventbridge", ORDER, "version", "missing", id="eventbridge-plain-order"),
        pytest.param("sns", sns_envelope_body("plain text, not JSON"), "Message", "json", id="sns-message-not-json"),
        pytest.param(
            "sns",
            {**sns_envelope_body(ORDER), "Type": "SubscriptionConfirmation"},
            "Type",
            "literal_error",
            id="sns-not-notification",
        ),
        pytest.param(
            "sns",
            sns_envelope_body(order("o", currency="eur")),
            "Message.currency",
            "string_pattern_mismatch",
            id="sns-bad-order",
        ),
        pytest.param(
            "sns",
            sns_envelope_body(json.dumps(ORDER).replace("42.5", "1e400")),
            "Message.amount",
            "finite_number",
            id="sns-message-with-1e400",
        ),
        pytest.param(
            "sns",
            sns_envelope_body(json.dumps(order("o", units=1)).replace('"units": 1', '"units": ' + "9" * 40)),
            "Message.units",
            "dynamodb_number",
            id="sns-message-with-a-40-digit-integer",
        ),
        pytest.param("s3", s3_notification_body("a", "b"), "Records", "too_long", id="s3-two-records"),
        pytest.param("s3", S3_TEST_EVENT, "Event", "s3_test_event", id="s3-test-event"),
        pytest.param(
            "s3",
            s3_notification_body("a", event_name="ObjectRemoved:Delete"),
            "Records[0].eventName",
            "s3_event_type",
            id="s3-delete",
        ),
        pytest.param("s3", {"Service": "Amazon S3"}, "Records", "missing", id="s3-not-a-notification"),
        pytest.param(
            "s3",
            s3_notification_body(""),
            "Records[0].s3.object.{key,versionId|sequencer}",
            "event_id",
            id="s3-empty-key",
        ),
        pytest.param(
            "s3",
            s3_notification_body("k", sequencer=""),
            "Records[0].s3.object.{key,versionId|sequencer}",
            "event_id",
            id="s3-no-version-no-sequencer",
        ),
    ],
)
def test_format_specific_poison(event_format, body, field, rule):
    with pytest.raises(InvalidMessage) as raised:
        parse(body, event_format)
    assert (raised.value.field, raised.value.rule) == (field, rule)


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        pytest.param({"STATE_MACHINE_ARN": ""}, "STATE_MACHINE_ARN", id="no-state-machine"),
        pytest.param({"DEAD_LETTER_QUEUE_URL": ""}, "DEAD_LETTER_QUEUE_URL", id="no-dlq"),
        pytest.param({"EVENT_FORMAT": "xml"}, "EVENT_FORMAT='xml'", id="unknown-format"),
        pytest.param({"EVENT_ID_PATH": "detail.[order_id"}, "EVENT_ID_PATH", id="bad-jmespath"),
        pytest.param({"RECORD_RETENTION_DAYS": "a month"}, "RECORD_RETENTION_DAYS", id="bad-retention"),
        pytest.param({"RECORD_RETENTION_DAYS": "0"}, "RECORD_RETENTION_DAYS", id="zero-retention"),
    ],
)
def test_configuration_mistakes_are_named(changes, complaint):
    with pytest.raises(ConfigurationError, match=complaint):
        Settings.from_environment({**REQUIRED_ENVIRONMENT, "PAYLOAD_EVENT_ID_PATH": "order_id", **changes})


def test_s3_every_new_version_of_a_key_is_a_new_event_and_a_repeat_is_the_same():
    first = parse(s3_notification_body("orders/o.csv", sequencer="0055AED6DCD90281E5"), "s3")
    overwrite = parse(s3_notification_body("orders/o.csv", sequencer="0055AED6DCD90281E6"), "s3")
    repeat = parse(s3_notification_body("orders/o.csv", sequencer="0055AED6DCD90281E5"), "s3")
    assert first[0] != overwrite[0]
    assert first == repeat


def test_s3_event_id_path_overrides_and_is_used_as_found():
    body = s3_notification_body("a+b.csv")
    assert parse(body, "s3", "Records[0].s3.object.key")[0] == "a+b.csv"

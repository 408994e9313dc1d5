"""events/: every file is valid, and each SQS event fed to the real handler gives the outcome
its name promises (on the embedded AWS, executions run to the end)."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from onceflow.local.function_runtime import StarterRuntime
from onceflow.ops.executions import list_executions, wait_for_all
from onceflow.ops.observe import scan
from tests.starter.helpers import dead_letters

EVENTS = Path(__file__).resolve().parents[2] / "events"
LAMBDA_SQS_RECORD_KEYS = {
    "messageId",
    "receiptHandle",
    "body",
    "attributes",
    "messageAttributes",
    "md5OfBody",
    "eventSource",
    "eventSourceARN",
    "awsRegion",
}


@dataclass(frozen=True)
class Outcome:
    event_format: str
    executions: int
    business_rows: set[str]
    dead_lettered: dict[str, str] = field(default_factory=dict)  # message id -> rule broken


EXPECTED = {
    "sqs-order.json": Outcome("json", 1, {"order-1001"}),
    # The resend (new message id) starts a second execution for order-1001, which writes nothing;
    # the redelivery (same message id) starts none.
    "sqs-batch-duplicate-and-redelivery.json": Outcome("json", 3, {"order-1001", "order-1002"}),
    "sqs-malformed.json": Outcome(
        "json",
        0,
        set(),
        {"7a3e9c25-1d4b-4f68-a0c7-8e2b6d5f4a04": "json", "5d6c2b18-9e0f-4a37-b8d1-4f7e3c2a6b05": "greater_than"},
    ),
    "sqs-eventbridge.json": Outcome("eventbridge", 1, {"order-2001"}),
    # Powertools' own EventBridge test event (tests/events/eventBridgeEvent.json, with replay-name), an order as detail.
    "sqs-eventbridge-powertools.json": Outcome("eventbridge", 1, {"order-2002"}),
    "sqs-sns-envelope.json": Outcome("sns", 1, {"order-3001"}),
    # Powertools' SNS-to-SQS test event (tests/events/snsSqsEvent.json: SNS's own spacing), an order as Message.
    "sqs-sns-envelope-powertools.json": Outcome("sns", 1, {"order-3002"}),
    # The event_id of an S3 object: its decoded key, then its versionId, else its sequencer.
    "sqs-s3-notification.json": Outcome("s3", 1, {"incoming/orders/2026-09-21/order-4001.csv#0A1B2C3D4E5F678901"}),
    # `sam local generate-event s3 put` and `... s3 delete`, two versions of one key in a versioned
    # bucket (URL-encoded key), and the s3:TestEvent S3 sends when a notification is configured.
    "sqs-s3-versions-and-other-events.json": Outcome(
        "s3",
        3,
        {
            "test/key#0A1B2C3D4E5F678901",
            "incoming/orders/order 4002 (copy).csv#3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY",
            "incoming/orders/order 4002 (copy).csv#8iJ1hg2TSGlUbMEAvxDMZt4IuBdu4nuA",
        },
        {
            "6f1d2a3b-0c4e-4f5a-8b6c-7d8e9f0a1b04": "s3_event_type",
            "6f1d2a3b-0c4e-4f5a-8b6c-7d8e9f0a1b05": "s3_test_event",
        },
    ),
}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def sqs_event_files() -> list[Path]:
    return sorted(EVENTS.glob("sqs-*.json"))


def test_every_json_file_in_events_is_valid():
    files = sorted(EVENTS.rglob("*.json"))
    assert len(files) >= 20
    for path in files:
        load(path)  # raises on invalid JSON


def test_every_sqs_event_has_the_lambda_shape_and_an_expected_outcome():
    assert {p.name for p in sqs_event_files()} == set(EXPECTED)
    for path in sqs_event_files():
        records = load(path)["Records"]
        assert records, path.name
        for record in records:
            assert set(record) == LAMBDA_SQS_RECORD_KEYS, path.name
            assert record["eventSource"] == "aws:sqs"
            assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest(), path.name
            assert record["attributes"]["SentTimestamp"].isdigit()


def test_sqs_event_bodies_are_the_plain_bodies():
    """`aws sqs send-message --message-body file://events/bodies/X.json` sends what the events carry."""
    bodies = [load(path) for path in (EVENTS / "bodies").glob("*.json")]
    assert bodies and all(isinstance(body, dict) for body in bodies)
    for path in sqs_event_files():
        for record in load(path)["Records"]:
            try:
                body = json.loads(record["body"])
            except json.JSONDecodeError:
                continue  # the malformed one
            assert body in bodies, f"{path.name}: body of {record['messageId']} is not in events/bodies/"


def test_each_non_json_format_has_its_environment_file():
    for outcome in EXPECTED.values():
        if outcome.event_format != "json":
            environment = load(EVENTS / "env" / f"{outcome.event_format}.json")
            assert environment == {"StarterFunction": {"EVENT_FORMAT": outcome.event_format}}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_feeding_the_sqs_event_to_the_handler(stack, monkeypatch, name):
    outcome = EXPECTED[name]
    monkeypatch.setenv("EVENT_FORMAT", outcome.event_format)  # restored afterwards
    monkeypatch.delenv("EVENT_ID_PATH", raising=False)
    starter = StarterRuntime(stack, extra_environment={"EVENT_FORMAT": outcome.event_format}, log_stream=io.StringIO())
    sfn = stack.client("stepfunctions")
    before = {e["executionArn"] for e in list_executions(sfn, stack.state_machine_arn)}

    response = starter.invoke(load(EVENTS / name))

    assert response == {"batchItemFailures": []}
    assert {m: message.attributes["rule"] for m, message in dead_letters(stack).items()} == outcome.dead_lettered
    new = [r for r in wait_for_all(sfn, stack.state_machine_arn) if r.arn not in before]
    assert len(new) == outcome.executions
    assert {r.status for r in new} <= {"SUCCEEDED"}
    rows = [row["order_id"] for row in scan(stack.client("dynamodb"), stack.business_table)]
    assert all(rows.count(event_id) == 1 for event_id in outcome.business_rows)  # written, and once
    for result in new:  # every execution of this file belongs to one of its events
        assert result.input["event_id"] in outcome.business_rows

"""Helpers of the starter tests: settings without AWS, message bodies of every format, logs."""

from __future__ import annotations

import io
import json
from typing import Any

from onceflow.domain.app import starter_environment
from onceflow.domain.template_yaml import read_template
from onceflow.local.stack import LocalStack
from onceflow.local.template import TEMPLATE_PATH
from onceflow.ops.observe import QueuedMessage, drain
from starter.formats import FORMATS
from starter.payload_validation import payload_validator
from starter.settings import Settings

# The worked example's domain as template.yaml gives it to the starter.
WORKED_EXAMPLE_DOMAIN = {
    name: str(value)
    for name, value in starter_environment(read_template(TEMPLATE_PATH)).items()
    if name in ("PAYLOAD_EVENT_ID_PATH", "PAYLOAD_MODEL", "PAYLOAD_SCHEMA")
}


# The variables Settings.from_environment requires, for tests that read settings from a dict of
# their own: the process's environment may hold another stack's function variables (a function
# runtime sets them there, as Lambda does; onceflow/local/function_runtime.py).
REQUIRED_ENVIRONMENT = {
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:p",
    "DEAD_LETTER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
}


def settings(event_format: str = "json", event_id_path: str | None = None, **changes: Any) -> Settings:
    chosen = FORMATS[event_format]
    changes.setdefault(
        "payload_validator",
        payload_validator(WORKED_EXAMPLE_DOMAIN.get("PAYLOAD_MODEL"), WORKED_EXAMPLE_DOMAIN.get("PAYLOAD_SCHEMA")),
    )
    return Settings(
        "arn:aws:states:::stateMachine:unused",
        "https://unused",
        chosen,
        event_id_path or chosen.event_id_path(WORKED_EXAMPLE_DOMAIN["PAYLOAD_EVENT_ID_PATH"]),
        35,
        **changes,
    )


def eventbridge_body(detail: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": "OrderPlaced",
        "source": "com.example.shop",
        "account": "123456789012",
        "time": "2026-09-21T12:00:00Z",
        "region": "us-east-1",
        "resources": [],
        "detail": detail,
    }


def sns_envelope_body(message: dict[str, Any] | str) -> dict[str, Any]:
    """An SNS-to-SQS envelope (raw message delivery off), as SQS receives it from SNS."""
    return {
        "Type": "Notification",
        "MessageId": "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
        "TopicArn": "arn:aws:sns:us-east-1:123456789012:orders",
        "Subject": None,
        "Message": message if isinstance(message, str) else json.dumps(message),
        "Timestamp": "2026-09-21T12:00:00.000Z",
        "SignatureVersion": "1",
        "Signature": "EXAMPLE",
        "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-example.pem",
        "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=example",
    }


def s3_notification_body(
    key: str,
    *more_keys: str,
    event_name: str = "ObjectCreated:Put",
    sequencer: str = "0A1B2C3D4E5F678901",
    version_id: str | None = None,
) -> dict[str, Any]:
    """An S3 event notification as S3 sends it to SQS: `key` as S3 writes it (URL-encoded)."""

    def record(object_key: str) -> dict[str, Any]:
        s3_object: dict[str, Any] = {"key": object_key, "size": 1024, "eTag": "d41d8cd98f00b204e9800998ecf8427e"}
        if version_id is not None:
            s3_object["versionId"] = version_id
        s3_object["sequencer"] = sequencer
        return {
            "eventVersion": "2.1",
            "eventSource": "aws:s3",
            "awsRegion": "us-east-1",
            "eventTime": "2026-09-21T12:00:00.000Z",
            "eventName": event_name,
            "userIdentity": {"principalId": "AWS:AIDAEXAMPLE"},
            "requestParameters": {"sourceIPAddress": "203.0.113.10"},
            "responseElements": {"x-amz-request-id": "C3D13FE58DE4C810", "x-amz-id-2": "EXAMPLE"},
            "s3": {
                "s3SchemaVersion": "1.0",
                "configurationId": "orders-upload",
                "bucket": {
                    "name": "example-orders",
                    "ownerIdentity": {"principalId": "A3NL1KOZZKExample"},
                    "arn": "arn:aws:s3:::example-orders",
                },
                "object": s3_object,
            },
        }

    return {"Records": [record(k) for k in (key, *more_keys)]}


def failed_ids(response: dict[str, Any]) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def dead_letters(stack: LocalStack) -> dict[str, QueuedMessage]:
    """The dead-letter queue's messages (received and deleted), keyed by the source message id."""
    messages = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    return {m.attributes.get("source_message_id", m.message_id): m for m in messages}


def log_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    """The starter's Powertools JSON log lines."""
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def metric_totals(stream: io.StringIO) -> dict[str, float]:
    """The starter's EMF metrics (printed to its log stream), summed per name over invocations."""
    totals: dict[str, float] = {}
    for line in log_lines(stream):
        for definition in line.get("_aws", {}).get("CloudWatchMetrics", []):
            for metric in definition["Metrics"]:
                name = metric["Name"]
                values = line[name] if isinstance(line[name], list) else [line[name]]
                totals[name] = totals.get(name, 0) + sum(values)
    return totals

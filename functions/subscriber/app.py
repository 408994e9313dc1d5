"""The example subscriber: counts each notified event once in a tally per key.

The key is the payload's value at TALLY_KEY_PATH (set in template.yaml: the field to tally by).
Its effect is deliberately one that a duplicate would break: `ADD event_count 1` on the key's item
counts an event twice if it is applied twice. `ExactlyOnce` writes it in one transaction with a
marker keyed by the notification's event_id, so it counts once however often the notification
arrives. To build your own subscriber, copy this folder and change `effect` (THE one place where
the effect is built) and the tables; the rest is the building block in `onceflow_subscriber/`
(docs/SUBSCRIBERS.md).
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from botocore.config import Config

from onceflow_subscriber import (
    ALREADY_APPLIED,
    APPLIED,
    DEAD_LETTERED,
    Applied,
    ExactlyOnce,
    Notification,
    NotificationBatch,
)

logger = Logger()
metrics = Metrics()
_CLIENT_CONFIG = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 3})
# outcome -> metric
METRICS = {
    APPLIED: "EffectsApplied",
    ALREADY_APPLIED: "DuplicateNotificationsSkipped",
    DEAD_LETTERED: "NotificationsDeadLettered",
}


@cache
def _client(service: str) -> Any:
    # Created on first use, not at import: the local runtime sets AWS_ENDPOINT_URL before the first call.
    return boto3.client(service, config=_CLIENT_CONFIG)


def reset_clients() -> None:
    """Forget cached clients (the local runtime calls this when the endpoint changes)."""
    _client.cache_clear()


def tally_key(notification: Notification, path: str) -> str:
    """The payload's value at `path` (names joined by dots), as text."""
    value: Any = notification.payload
    for name in path.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    if value is None or isinstance(value, dict | list) or value == "":
        raise notification.invalid(f"body.{path}", "tally_key", f"{path} is {value!r}: a string or number is needed")
    return str(value)


def effect(notification: Notification, tally_table: str, key_path: str) -> list[dict[str, Any]]:
    """EFFECT: the subscriber's DynamoDB writes for one event, as TransactWriteItems actions."""
    return [
        {
            "Update": {
                "TableName": tally_table,
                "Key": {"tally_key": {"S": tally_key(notification, key_path)}},
                "UpdateExpression": "ADD event_count :one SET last_event_id = :event",
                "ExpressionAttributeValues": {":one": {"N": "1"}, ":event": {"S": notification.event_id}},
            }
        }
    ]


def _batch(function_name: str) -> NotificationBatch:
    tally_table, key_path = os.environ["TALLY_TABLE"], os.environ["TALLY_KEY_PATH"]
    once = ExactlyOnce(_client("dynamodb"), os.environ["SUBSCRIBER_MARKERS_TABLE"], function_name)

    def apply(notification: Notification) -> Applied:
        return once.apply(notification, effect(notification, tally_table, key_path))

    return NotificationBatch(
        apply,
        _client("sqs"),
        os.environ["SUBSCRIBER_DEAD_LETTER_QUEUE_URL"],
        logger,
        fifo=os.environ.get("SUBSCRIBER_QUEUE_TYPE") == "fifo",
    )


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response, outcome = _batch(context.function_name).handle(event, context)
    for name, metric in METRICS.items():
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=outcome.count(name))
    metrics.add_metric(name="NotificationRecordsFailed", unit=MetricUnit.Count, value=len(outcome.failed))
    return response

"""The example subscriber: credits a customer's loyalty account once per order notification.

Its effect is deliberately one that a duplicate would break: `ADD order_count 1, points N` on the
customer's item counts an order twice if it is applied twice. `ExactlyOnce` writes it in one
transaction with a marker keyed by the notification's event_id, so it counts once however often
the notification arrives. To build your own subscriber, copy this folder and change `effect`
(THE one place where the effect is built) and the tables; the rest is the building block in
`onceflow_subscriber/` (docs/SUBSCRIBERS.md).
"""

from __future__ import annotations

import os
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
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


def effect(notification: Notification, accounts_table: str) -> list[dict[str, Any]]:
    """EFFECT: the subscriber's DynamoDB writes for one order, as TransactWriteItems actions."""
    payload = notification.payload
    customer_id = payload.get("customer_id")
    if not isinstance(customer_id, str) or not customer_id:
        raise notification.invalid("body.customer_id", "non-empty string", f"customer_id is {customer_id!r}")
    try:
        points = Decimal(str(payload.get("amount"))).to_integral_value(rounding=ROUND_FLOOR)
    except InvalidOperation:
        raise notification.invalid("body.amount", "number", f"amount is {payload.get('amount')!r}") from None
    return [
        {
            "Update": {
                "TableName": accounts_table,
                "Key": {"customer_id": {"S": customer_id}},
                "UpdateExpression": "ADD order_count :one, points :points SET last_order_id = :order",
                "ExpressionAttributeValues": {
                    ":one": {"N": "1"},
                    ":points": {"N": str(points)},
                    ":order": {"S": notification.event_id},
                },
            }
        }
    ]


def _batch(function_name: str) -> NotificationBatch:
    accounts_table = os.environ["LOYALTY_ACCOUNTS_TABLE"]
    once = ExactlyOnce(_client("dynamodb"), os.environ["SUBSCRIBER_MARKERS_TABLE"], function_name)

    def apply(notification: Notification) -> Applied:
        return once.apply(notification, effect(notification, accounts_table))

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

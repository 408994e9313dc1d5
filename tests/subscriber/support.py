"""Publish notifications as the state machine's `Publish notification` does, and read what the
example subscriber did."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from onceflow.local.stack import LocalStack
from onceflow.ops.observe import drain, scan


def order_payload(order_id: str, customer_id: str = "customer-001", amount: float = 42.5) -> dict[str, Any]:
    return {"order_id": order_id, "customer_id": customer_id, "amount": amount, "currency": "EUR"}


def publish(
    stack: LocalStack,
    payload: dict[str, Any] | str,
    event_id: str | None = None,
    payload_hash: str | None = None,
) -> str:
    """SNS Publish with the ASL's message attributes: the payload's JSON, event_id, payload_hash."""
    message = payload if isinstance(payload, str) else json.dumps(payload)
    attributes = {}
    if event_id is not None:
        attributes["event_id"] = {"DataType": "String", "StringValue": event_id}
        attributes["payload_hash"] = {
            "DataType": "String",
            "StringValue": payload_hash or hashlib.sha256(message.encode()).hexdigest(),
        }
    response = stack.client("sns").publish(
        TopicArn=stack.notification_topic_arn, Message=message, MessageAttributes=attributes
    )
    return str(response["MessageId"])


def tallies(stack: LocalStack) -> dict[str, dict[str, Any]]:
    """The example subscriber's effect: event_count per tally key (the worked example's customer)."""
    table = stack.functions["SubscriberFunction"].environment["TALLY_TABLE"]
    return {item["tally_key"]: item for item in scan(stack.client("dynamodb"), table)}


def markers(stack: LocalStack) -> dict[str, dict[str, Any]]:
    table = stack.functions["SubscriberFunction"].environment["SUBSCRIBER_MARKERS_TABLE"]
    return {item["event_id"]: item for item in scan(stack.client("dynamodb"), table)}


def dead_letters(stack: LocalStack) -> list[Any]:
    return drain(
        stack.client("sqs"), stack.functions["SubscriberFunction"].environment["SUBSCRIBER_DEAD_LETTER_QUEUE_URL"]
    )


def log_outcomes(logs: str) -> list[dict[str, Any]]:
    """The subscriber's JSON log lines that carry a record's outcome."""
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    return [line for line in lines if "outcome" in line]

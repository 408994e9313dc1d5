"""The example subscriber's outcome per event (DeploySubscriber=true), read with boto3 only: its
marker (applied, when, by which delivery), or its dead letter (the reason), or nothing yet.

Used by `onceflow status` and the trace page. A stack without the subscriber has none of its
outputs, and every function here then answers None or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from onceflow.ops.observe import drain, plain

MARKERS_OUTPUT = "SubscriberMarkersTableName"
QUEUE_OUTPUT = "SubscriberQueueUrl"
DEAD_LETTER_OUTPUT = "SubscriberDeadLetterQueueUrl"


@dataclass(frozen=True)
class SubscriberOutcome:
    event_id: str
    outcome: str  # "applied", "dead-lettered", "not applied"
    detail: str = ""  # when and by which message; or the dead letter's error

    def line(self) -> str:
        return f"{self.outcome} ({self.detail})" if self.detail else self.outcome


def has_subscriber(outputs: dict[str, str]) -> bool:
    return MARKERS_OUTPUT in outputs


def _markers(dynamodb: Any, table: str, event_ids: list[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(event_ids), 100):
        keys = [{"event_id": {"S": event_id}} for event_id in event_ids[start : start + 100]]
        request = {table: {"Keys": keys, "ConsistentRead": True}}
        while request:
            response = dynamodb.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(table, []):
                marker = plain(item)
                found[str(marker["event_id"])] = marker
            request = response.get("UnprocessedKeys") or {}
    return found


def dead_lettered(sqs: Any, outputs: dict[str, str]) -> dict[str, str]:
    """event_id -> the error of its dead letter in the subscriber's DLQ (messages left in place)."""
    letters = drain(sqs, outputs[DEAD_LETTER_OUTPUT], delete=False)
    return {
        m.attributes["event_id"]: m.attributes.get("error", "moved after too many deliveries")
        for m in letters
        if "event_id" in m.attributes
    }


def outcomes(
    outputs: dict[str, str], dynamodb: Any, sqs: Any, event_ids: Iterable[str]
) -> dict[str, SubscriberOutcome]:
    """The subscriber's outcome for each event id; empty when the stack has no subscriber."""
    if not has_subscriber(outputs):
        return {}
    wanted = sorted({e for e in event_ids if e})
    markers = _markers(dynamodb, outputs[MARKERS_OUTPUT], wanted)
    letters = dead_lettered(sqs, outputs) if len(markers) < len(wanted) else {}
    result = {}
    for event_id in wanted:
        if event_id in markers:
            marker = markers[event_id]
            detail = f"{str(marker.get('applied_at', ''))[11:23]} by message {str(marker.get('message_id', ''))[:8]}"
            result[event_id] = SubscriberOutcome(event_id, "applied", detail)
        elif event_id in letters:
            result[event_id] = SubscriberOutcome(event_id, "dead-lettered", letters[event_id])
        else:
            result[event_id] = SubscriberOutcome(event_id, "not applied")
    return result


def queue_line(sqs: Any, outputs: dict[str, str]) -> str | None:
    """The subscriber queue's and its dead-letter queue's counts, or None without a subscriber."""
    if not has_subscriber(outputs):
        return None

    def counts(url: str) -> tuple[int, int]:
        attributes = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])

    waiting, handled = counts(outputs[QUEUE_OUTPUT])
    dead, _ = counts(outputs[DEAD_LETTER_OUTPUT])
    return f"{waiting} notifications waiting, {handled} being handled; {dead} in its dead-letter queue"

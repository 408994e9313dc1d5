"""Apply a DynamoDB effect exactly once per `event_id`: the pipeline's own transaction pattern.

One TransactWriteItems holds a marker item keyed by the notification's `event_id`, written only
if none exists (`attribute_not_exists`), and the subscriber's effect items: both or neither are
written. However often the notification arrives, and wherever the subscriber crashes (before the
transaction, after it but before SQS was told, after the acknowledgement), a second transaction
finds the marker and writes nothing. A transaction DynamoDB cancels for a failed marker condition
means "already applied"; the marker's `payload_hash` tells a true duplicate (acknowledge) from
another payload under the same id (dead-letter, never apply).

Markers never expire: the pipeline publishes again as long as an event's record is `pending`,
which a redrive can resume at any time, so no window after which a duplicate cannot arrive exists.
A marker is about 150 bytes: a million events keep 0.15 GB (0.04 USD a month at 0.25 USD per GB).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from onceflow_subscriber.errors import EffectRefused, PayloadConflict
from onceflow_subscriber.notification import Notification

APPLIED = "applied"
ALREADY_APPLIED = "already_applied"
# TransactWriteItems takes at most 100 actions; one is the marker.
MAX_EFFECT_ITEMS = 99
# A TransactionConflict means another transaction on one of these items was in flight (often a
# concurrent copy of the same notification); by the time it is reported, that one has ended.
CONFLICT_ATTEMPTS = 3


class TransactionNotCommitted(Exception):
    """Cancelled for a reason that may pass (throttling, conflicts): report the record failed, SQS redelivers."""


@dataclass(frozen=True)
class Applied:
    outcome: str  # APPLIED, or ALREADY_APPLIED (a duplicate: nothing written)
    event_id: str
    applied_at: str  # when the effect was written (for a duplicate: by the earlier delivery)
    applied_by_message: str  # the SQS message whose delivery wrote it


def _reasons(error: Exception) -> list[str]:
    response = getattr(error, "response", {}) or {}
    return [str(reason.get("Code", "None")) for reason in response.get("CancellationReasons", [])]


def _code(error: Exception) -> str:
    response = getattr(error, "response", {}) or {}
    return str(response.get("Error", {}).get("Code", ""))


class ExactlyOnce:
    """Writes a subscriber's effect items once per event_id, with a marker in `markers_table`.

    `effect` is a list of TransactWriteItems actions (`Put`, `Update`, `Delete`, `ConditionCheck`,
    in DynamoDB JSON), exactly what you would pass to the API yourself: an Update with `ADD` that
    would count twice on its own counts once here. Use one markers table per subscriber (its key
    is the event_id alone); the markers may live in the same table as the effect if its key
    attribute is `event_id` and no effect item shares a marker's key.
    """

    def __init__(self, dynamodb: Any, markers_table: str, subscriber: str = "", clock: Any = time.time):
        self.dynamodb = dynamodb
        self.markers_table = markers_table
        self.subscriber = subscriber
        self.clock = clock

    def marker(self, notification: Notification, applied_at: str) -> dict[str, Any]:
        item = {
            "event_id": {"S": notification.event_id},
            "payload_hash": {"S": notification.payload_hash},
            "applied_at": {"S": applied_at},
            "message_id": {"S": notification.message_id},
        }
        if self.subscriber:
            item["subscriber"] = {"S": self.subscriber}
        return item

    def apply(self, notification: Notification, effect: Sequence[dict[str, Any]]) -> Applied:
        if not 1 <= len(effect) <= MAX_EFFECT_ITEMS:
            raise ValueError(f"an effect is 1 to {MAX_EFFECT_ITEMS} TransactWriteItems actions, not {len(effect)}")
        applied_at = datetime.fromtimestamp(self.clock(), UTC).isoformat(timespec="milliseconds")
        items = [
            {
                "Put": {
                    "TableName": self.markers_table,
                    "Item": self.marker(notification, applied_at),
                    "ConditionExpression": "attribute_not_exists(event_id)",
                }
            },
            *effect,
        ]
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                self.dynamodb.transact_write_items(TransactItems=items)
                return Applied(APPLIED, notification.event_id, applied_at, notification.message_id)
            except Exception as error:
                code = _code(error)
                if code == "ValidationException":
                    raise EffectRefused(
                        notification.message_id, "effect", "valid TransactWriteItems", str(error), notification.event_id
                    ) from None
                if code != "TransactionCanceledException":
                    raise
                reasons = _reasons(error)
                if reasons[:1] == ["ConditionalCheckFailed"]:
                    return self._earlier(notification)
                if "ConditionalCheckFailed" in reasons:
                    index = reasons.index("ConditionalCheckFailed") - 1
                    raise EffectRefused(
                        notification.message_id,
                        f"effect[{index}]",
                        "its ConditionExpression",
                        f"the condition of effect item {index} failed; nothing was written",
                        notification.event_id,
                    ) from None
                if "TransactionConflict" not in reasons or attempt == CONFLICT_ATTEMPTS:
                    raise TransactionNotCommitted(
                        f"event_id {notification.event_id}: transaction cancelled {reasons or [str(error)]}"
                    ) from error
        raise AssertionError("unreachable")

    def _earlier(self, notification: Notification) -> Applied:
        """The marker exists: a duplicate if its payload_hash is this one's, else a conflict."""
        found = self.dynamodb.get_item(
            TableName=self.markers_table, Key={"event_id": {"S": notification.event_id}}, ConsistentRead=True
        ).get("Item")
        if found is None:  # deleted in between by someone else: let SQS deliver it again
            raise TransactionNotCommitted(
                f"event_id {notification.event_id}: marker vanished after its condition failed"
            )
        stored_hash = found.get("payload_hash", {}).get("S", "")
        if stored_hash != notification.payload_hash:
            raise PayloadConflict(
                notification.message_id,
                "messageAttributes.payload_hash",
                "one payload per event_id",
                f"event_id {notification.event_id} was applied with payload_hash {stored_hash}, this notification "
                f"has {notification.payload_hash}; nothing was applied",
                notification.event_id,
            )
        return Applied(
            ALREADY_APPLIED,
            notification.event_id,
            found.get("applied_at", {}).get("S", ""),
            found.get("message_id", {}).get("S", ""),
        )

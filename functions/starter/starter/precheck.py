"""Before starting anything: is this event already sent, with this payload?

A redelivery or a resend of an event the workflow has already finished would only take the
workflow's "Already sent" path, which writes and publishes nothing. One strongly consistent
BatchGetItem per batch finds those and they are acknowledged without an execution. Anything else
(not recorded, pending, another payload, a record that TTL has deleted, a failed lookup) starts
the execution as before, and the workflow decides: the lookup can only skip work the workflow
would have skipped too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from onceflow_common.batch_reads import batch_get
from starter.messages import PipelineEvent

LOOKUP_ROUNDS = 3  # UnprocessedKeys are asked for again, this many times at most


def already_sent(dynamodb: Any, table: str, events: Iterable[PipelineEvent]) -> set[tuple[str, str]]:
    """(event_id, payload_hash) of the given events whose record is `sent` with that payload_hash.

    Pairs, not ids: one batch may carry an event_id twice with different payloads, and only the
    one that matches the record is already done (the other is a conflict for the workflow).
    """
    wanted = {(event.event_id, event.payload_hash) for event in events}
    ids = sorted({event_id for event_id, _ in wanted})  # BatchGetItem refuses duplicate keys
    items, _ = batch_get(
        dynamodb,
        table,
        [{"event_id": {"S": event_id}} for event_id in ids],
        LOOKUP_ROUNDS,
        ConsistentRead=True,
        ProjectionExpression="event_id, #status, payload_hash",
        ExpressionAttributeNames={"#status": "status"},
    )
    found = {item["event_id"]["S"]: item for item in items}
    sent = {
        (event_id, item.get("payload_hash", {}).get("S"))
        for event_id, item in found.items()
        if item.get("status", {}).get("S") == "sent"
    }
    return wanted & sent

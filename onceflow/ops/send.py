"""Put bodies on the source queue as a producer would: ten per request, in order; on a FIFO queue
each message with its group and a deduplication id.

The deduplication id of the i-th message of a run is SHA-256 of `<run id>:<i>`: sending a run
again with its `--run-id` within SQS's five-minute window is dropped by SQS for what already
arrived, and delivered for the rest; a new run is new messages (a resend after the window, which the
pipeline deduplicates itself by event_id). It is given whether or not the queue has content-based
deduplication (an explicit id takes precedence), so either kind of FIFO queue takes the messages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BATCH = 10


@dataclass
class SendProgress:
    """How far a send got: messages SQS accepted, and how many were in the request in flight."""

    total: int
    sent: int = 0
    in_flight: int = 0


class SendRefused(RuntimeError):
    """SQS refused messages of a batch; the message names the first and why."""


def is_fifo(queue_url: str) -> bool:
    """SQS requires a FIFO queue's name to end in .fifo."""
    return queue_url.endswith(".fifo")


def deduplication_id(run_id: str, index: int) -> str:
    return hashlib.sha256(f"{run_id}:{index}".encode()).hexdigest()


def send_bodies(
    sqs: Any,
    queue_url: str,
    bodies: list[str],
    progress: SendProgress,
    run_id: str = "",
    group_of: Callable[[int, str], str] | None = None,
) -> None:
    """Send every body; `progress` tells how far it got if a call fails or the user interrupts.
    `group_of(index, body)` names a FIFO message's group (required on a FIFO queue)."""
    fifo = is_fifo(queue_url)
    if fifo and group_of is None:
        raise ValueError("a FIFO queue needs a message group for each message")
    for start in range(0, len(bodies), BATCH):
        chunk = bodies[start : start + BATCH]
        entries: list[dict[str, Any]] = []
        for offset, body in enumerate(chunk):
            entry: dict[str, Any] = {"Id": str(offset), "MessageBody": body}
            if fifo and group_of is not None:
                entry["MessageGroupId"] = group_of(start + offset, body)
                entry["MessageDeduplicationId"] = deduplication_id(run_id, start + offset)
            entries.append(entry)
        progress.in_flight = len(chunk)
        response = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        progress.in_flight = 0
        failed = response.get("Failed") or []
        progress.sent += len(chunk) - len(failed)
        if failed:
            first = failed[0]
            raise SendRefused(
                f"the source queue refused {len(failed)} of a batch of {len(chunk)}: "
                f"{first.get('Code')}: {first.get('Message')}"
            )

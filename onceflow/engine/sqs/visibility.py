"""A consumer's ChangeMessageVisibility on an in-flight message, noted for the emulated event source.

Lambda's SQS event source leaves a failed record's visibility as it is: the record reappears once
its visibility timeout runs out ("After your queue's visibility timeout runs out, the message will
again reappear in the queue", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html),
and a function may change that timeout with the record's receipt handle while the record is in
flight (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html:
the new timeout counts from the call). The emulated event source fast-forwards visibility timeouts
(its time scale, or its clock), so it must know what the function set: this notes, on the
message, the latest timeout asked through ChangeMessageVisibility or ChangeMessageVisibilityBatch
(moto runs the batch through the single call), with the receipt handle used and when.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from moto.sqs.models import Message, Queue, SQSBackend, sqs_backends

from onceflow.engine.registry import Patch, current
from onceflow.engine.sqs import receipts

NOTE_ATTRIBUTE = "_onceflow_visibility_changed"


class VisibilityChange(NamedTuple):
    receipt_handle: str
    seconds: int
    at: float  # time.monotonic() of the call


def _current_receive(queue: Any, receipt_handle: str) -> Any | None:
    """The message whose latest receive gave `receipt_handle` (found through receipts.py's index)."""
    message = receipts.find(queue, receipt_handle)
    return message if message is not None and message.receipt_handle == receipt_handle else None


def _noting_changes(before: list[Patch]) -> list[Patch]:
    original = current(before, SQSBackend, "change_message_visibility")

    def change_message_visibility(
        self: SQSBackend, queue_name: str, receipt_handle: str, visibility_timeout: int
    ) -> None:
        original(self, queue_name, receipt_handle, visibility_timeout)
        message = _current_receive(self.get_queue(queue_name), receipt_handle)
        if message is not None:
            message.__dict__[NOTE_ATTRIBUTE] = VisibilityChange(
                receipt_handle, int(visibility_timeout), time.monotonic()
            )

    return [(SQSBackend, "change_message_visibility", change_message_visibility)]


def changed_since(queue_url: str, region: str, receipt_handle: str, since: float) -> VisibilityChange | None:
    """The latest visibility change made with `receipt_handle` (the message's current receive)
    after `since` (time.monotonic()), or None."""
    account_id, name = queue_url.rstrip("/").rsplit("/", 2)[-2:]
    queue: Queue | None = sqs_backends[account_id][region].queues.get(name)
    message = _current_receive(queue, receipt_handle) if queue is not None else None
    change: VisibilityChange | None = message.__dict__.get(NOTE_ATTRIBUTE) if message is not None else None
    if change is not None and change.receipt_handle == receipt_handle and change.at >= since:
        return change
    return None


def moto_needs() -> list[Any]:
    """What this module calls or replaces in the pinned moto (checked by engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(SQSBackend, "change_message_visibility", "queue_name", "receipt_handle", "visibility_timeout"),
        need(SQSBackend, "get_queue", "queue_name"),  # and SQSBackend.queues, by name
        need(Message, "__init__", "message_id", "body"),  # Message.receipt_handle; Queue._messages
    ]


def patches(before: list[Patch]) -> list[Patch]:
    return _noting_changes(before)

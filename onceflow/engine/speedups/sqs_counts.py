"""GetQueueAttributes' message counts without walking the queue (part of the `sqs_fast_paths`
speed-up, sqs_fast_paths.py).

moto counts ApproximateNumberOfMessages, -NotVisible and -Delayed by testing every queued message
against the clock, and computes all three whatever was asked: each GetQueueAttributes walked a
backlog of 20,000 messages three times. The local event source, the safety net and `onceflow status`
ask for the counts all the time (issue 21).

A message is hidden (not visible, or delayed) only once something made it so: a receive (moto keeps
the received messages in the queue's pending set, until they are deleted or seen visible again),
ChangeMessageVisibility, or a send with a delay. Here the queue keeps the messages that the last
two made hidden (outside the pending set), and the counts test only those and the pending ones
against the clock: the visible ones are all the others. The answer is moto's answer (the same
clock tests), in time proportional to the messages in flight or delayed, not to the backlog.

Patched in moto: `SQSBackend.send_message` (SendMessageBatch sends through it) and
`SQSBackend.change_message_visibility` (after engine/sqs/visibility.py's wrapper; the batch goes
through it), which note the message they hid; `Queue.approximate_number_of_messages`,
`-_not_visible`, `-_delayed`, which count.
"""

from __future__ import annotations

from typing import Any

from moto.sqs import models as sqs_models

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch, current
from onceflow.engine.speedups import SQS_FAST_PATHS
from onceflow.engine.sqs import receipts as sqs_receipts

SPEEDUPS = (SQS_FAST_PATHS,)

_HIDDEN = "_onceflow_hidden"  # on a Queue: messages hidden by a delay or a visibility change


def moto_needs() -> list[Need]:
    return [
        need(sqs_models.SQSBackend, "send_message", "queue_name"),  # returns the message it queued
        need(sqs_models.SQSBackend, "change_message_visibility", "queue_name", "receipt_handle", "visibility_timeout"),
        need(sqs_models.SQSBackend, "get_queue", "queue_name"),
        need(sqs_models.Queue, "approximate_number_of_messages"),
        need(sqs_models.Queue, "approximate_number_of_messages_not_visible"),
        need(sqs_models.Queue, "approximate_number_of_messages_delayed"),
        need(sqs_models.Queue, "pending_messages"),  # the received ones; Queue._messages, all of them
        need(sqs_models.Message, "had_receipt_handle", "receipt_handle"),  # Message.visible_at, delayed_until
        need(sqs_models, "unix_time_millis"),
    ]


def _hidden(queue: Any) -> set[Any]:
    hidden = queue.__dict__.get(_HIDDEN)
    if hidden is None:
        hidden = queue.__dict__[_HIDDEN] = set()
    return hidden


def _is_hidden(message: Any, now: float) -> bool:
    return not now > message.visible_at or now < message.delayed_until


def candidates(queue: Any, now: float) -> set[Any]:
    """Every message of `queue` that may be hidden at `now`: the pending ones and those noted here
    (a noted one that is visible again, or gone from the queue, is forgotten)."""
    noted = _hidden(queue)
    if noted:
        # Few (a delayed requeue, a visibility change outside a receive): a test against the list
        # by identity, in C, is cheap for them.
        gone = {m for m in noted if not _is_hidden(m, now) or m not in queue._messages}
        noted -= gone
    return set(queue._pending_messages) | noted if noted else queue._pending_messages


def _not_visible(self: Any) -> int:
    now = sqs_models.unix_time_millis()
    return sum(1 for m in candidates(self, now) if not now > m.visible_at)


def _delayed(self: Any) -> int:
    now = sqs_models.unix_time_millis()
    return sum(1 for m in candidates(self, now) if now < m.delayed_until)


def _visible(self: Any) -> int:
    now = sqs_models.unix_time_millis()
    return len(self._messages) - sum(1 for m in candidates(self, now) if _is_hidden(m, now))


def patches(before: list[Patch]) -> list[Patch]:
    send_message = current(before, sqs_models.SQSBackend, "send_message")
    change_message_visibility = current(before, sqs_models.SQSBackend, "change_message_visibility")

    def sending(self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
        message = send_message(self, queue_name, *args, **kwargs)
        if message.delayed_until:
            _hidden(self.get_queue(queue_name)).add(message)
        return message

    def changing(self: Any, queue_name: str, receipt_handle: str, visibility_timeout: int) -> None:
        change_message_visibility(self, queue_name, receipt_handle, visibility_timeout)
        queue = self.get_queue(queue_name)
        message = sqs_receipts.find(queue, receipt_handle)
        if message is not None and message not in queue._pending_messages:  # pending: counted among those
            _hidden(queue).add(message)

    return [
        (sqs_models.SQSBackend, "send_message", sending),
        (sqs_models.SQSBackend, "change_message_visibility", changing),
        (sqs_models.Queue, "approximate_number_of_messages", property(_visible)),
        (sqs_models.Queue, "approximate_number_of_messages_not_visible", property(_not_visible)),
        (sqs_models.Queue, "approximate_number_of_messages_delayed", property(_delayed)),
    ]

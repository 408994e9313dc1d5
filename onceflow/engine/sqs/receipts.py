"""SQS receipt handles as AWS treats them, with nothing kept of deleted messages.

moto keeps every receipt handle of every deleted message in `Queue.deleted_messages`, a set that
only grows (about 0.5 to 0.7 MB per 1,000 messages in a long `onceflow start` run: the source
queue's and the notification inbox's, issue 21), so that DeleteMessage with the handle of a
message already deleted succeeds. AWS needs no such list: "If you don't provide the most recently
received receipt handle for the message when you use the DeleteMessage action, the request
succeeds, but the message might not be deleted"
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html);
a handle SQS never issued is ReceiptHandleIsInvalid. Here every receipt handle carries a keyed
digest of its random part (a key per process), so DeleteMessage tells a handle this engine issued
from one it never did without remembering any: `deleted_messages` keeps nothing, whatever the
length of the run (0 bytes per deleted message; no budget to set).

And a message is found by its handle through an index (handle -> message) instead of moto's walk
of every queued message (`had_receipt_handle` builds a list per message): a handle is made when a
message is received, which puts it in the queue's pending set, so a handle not yet indexed is
looked for among the pending messages first, then, for a stale or deleted message's handle only,
in the whole queue as moto looks. DeleteMessage, ChangeMessageVisibility (and the batches, which
go through them) and the engine's own lookups by handle (visibility.py, speedups/sqs_counts.py) use it.

Patched in moto: `sqs.models.generate_receipt_handle`, `Queue.deleted_messages` (an attribute
moto's `Queue.__init__` sets: a property here, that keeps nothing), `Queue.delete_message`,
`SQSBackend.change_message_visibility`.

Differs from AWS: a handle of one queue given to another queue of this engine is accepted by
DeleteMessage as a deleted message's (AWS's handles name their queue); handles do not survive a
restart of the engine (nothing does).
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import string
from typing import Any

from moto.sqs import models as sqs_models

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch

_INDEX = "_onceflow_handle_index"  # on a Queue: receipt handle -> message
_RANDOM_LENGTH = 153
_TAG_LENGTH = 32  # 185 characters in all, as moto's handles
_KEY = secrets.token_bytes(16)


def moto_needs() -> list[Need]:
    return [
        need(sqs_models, "generate_receipt_handle"),  # called by Message.mark_received
        need(sqs_models.Message, "mark_received", "visibility_timeout"),
        need(sqs_models.Message, "had_receipt_handle", "receipt_handle"),
        need(sqs_models.Message, "all_receipt_handles"),
        need(sqs_models.Message, "change_visibility", "visibility_timeout"),
        need(sqs_models.Message, "visible"),
        need(sqs_models.Queue, "delete_message", "receipt_handle"),  # reads deleted_messages, set in __init__
        need(sqs_models.Queue, "pending_messages"),  # Queue._pending_messages, _messages
        need(sqs_models.SQSBackend, "change_message_visibility", "queue_name", "receipt_handle", "visibility_timeout"),
        need(sqs_models.SQSBackend, "get_queue", "queue_name"),
        need(sqs_models, "ReceiptHandleIsInvalid"),
        need(sqs_models, "InvalidParameterValue", "message"),
        need(sqs_models, "unix_time_millis"),
    ]


def _tag(random_part: str) -> str:
    digest = hmac.new(_KEY, random_part.encode(), hashlib.blake2s).digest()
    return "".join(string.ascii_lowercase[byte % 26] for byte in digest[:_TAG_LENGTH])


def generate_receipt_handle() -> str:
    """185 lowercase letters, as moto's; the last 32 a digest of the others under this process's key."""
    random_part = "".join(random.choices(string.ascii_lowercase, k=_RANDOM_LENGTH))
    return random_part + _tag(random_part)


def issued(receipt_handle: str) -> bool:
    """Whether this engine issued `receipt_handle` (to some message, deleted or not)."""
    if len(receipt_handle) != _RANDOM_LENGTH + _TAG_LENGTH:
        return False
    return hmac.compare_digest(receipt_handle[_RANDOM_LENGTH:], _tag(receipt_handle[:_RANDOM_LENGTH]))


class _NothingKept:
    """`Queue.deleted_messages`: the handles of deleted messages, none kept (see `issued`)."""

    def __contains__(self, item: object) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Any:
        return iter(())

    def add(self, item: Any) -> None:
        pass

    def update(self, *items: Any) -> None:
        pass


_NOTHING_KEPT = _NothingKept()


def _deleted_messages() -> property:
    def keep_none(queue: Any, value: Any) -> None:
        # moto's Queue.__init__ sets an empty set: kept on the instance (empty) for moto without the patch.
        queue.__dict__["deleted_messages"] = set()

    return property(lambda queue: _NOTHING_KEPT, keep_none)


def _handles(queue: Any) -> dict[str, Any]:
    index = queue.__dict__.get(_INDEX)
    if index is None:
        index = queue.__dict__[_INDEX] = {}
    return index


def _live(queue: Any, message: Any, receipt_handle: str) -> bool:
    # Messages have no __eq__: `in` compares identity, in C (moto moves messages to a dead-letter
    # queue or purges a queue without telling the index).
    return message.had_receipt_handle(receipt_handle) and message in queue._messages


def find(queue: Any, receipt_handle: str) -> Any | None:
    """The message of `queue` that had `receipt_handle` (any of its receives, as moto finds it), or None."""
    index = _handles(queue)
    message = index.get(receipt_handle)
    if message is not None and _live(queue, message, receipt_handle):
        return message
    index.pop(receipt_handle, None)
    # A handle not indexed yet is almost always of a message just received, in the pending set;
    # else (a deleted or stale message's handle) the whole queue, as moto walks it.
    message = next((m for m in queue._pending_messages if _live(queue, m, receipt_handle)), None)
    if message is None:
        message = next((m for m in queue._messages if m.had_receipt_handle(receipt_handle)), None)
    if message is not None:
        for handle in message.all_receipt_handles:
            if handle:
                index[handle] = message
    return message


def _forget(queue: Any, message: Any) -> None:
    index = _handles(queue)
    for handle in message.all_receipt_handles:
        index.pop(handle, None)


def delete_message(self: Any, receipt_handle: str) -> None:
    """moto's Queue.delete_message: the message found by its handle; a handle this engine issued
    whose message is gone succeeds (AWS), one it never issued is ReceiptHandleIsInvalid."""
    message = find(self, receipt_handle)
    if message is None:
        if issued(receipt_handle):
            return
        raise sqs_models.ReceiptHandleIsInvalid()
    self.pending_messages.discard(message)
    self._messages.remove(message)
    _forget(self, message)


def change_message_visibility(self: Any, queue_name: str, receipt_handle: str, visibility_timeout: int) -> None:
    """moto's SQSBackend.change_message_visibility (its checks and errors), the message found by its handle."""
    queue = self.get_queue(queue_name)
    message = find(queue, receipt_handle)
    if message is None:
        raise sqs_models.ReceiptHandleIsInvalid()
    given_visibility_timeout = sqs_models.unix_time_millis() + int(visibility_timeout) * 1000
    if given_visibility_timeout - message.sent_timestamp > 43200 * 1000:
        raise sqs_models.InvalidParameterValue(
            f"Value {visibility_timeout} for parameter VisibilityTimeout is invalid. Reason: Total "
            "VisibilityTimeout for the message is beyond the limit [43200 seconds]"
        )
    message.change_visibility(visibility_timeout)
    if message.visible and message in queue.pending_messages:
        queue.pending_messages.remove(message)  # visible again: no longer pending


def patches() -> list[Patch]:
    return [
        (sqs_models, "generate_receipt_handle", generate_receipt_handle),
        (sqs_models.Queue, "deleted_messages", _deleted_messages()),
        (sqs_models.Queue, "delete_message", delete_message),
        (sqs_models.SQSBackend, "change_message_visibility", change_message_visibility),
    ]

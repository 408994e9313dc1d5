"""The `sqs_fast_paths` speed-up: SQS's receive, send and attribute reads without computing every queue
attribute.

moto's ReceiveMessage computes every queue attribute (counting the queued messages three times,
reading the clock twice per message) once per received message only to read the retention period,
SendMessage once per sent message, GetQueueAttributes up to twice per name. Here the retention period
is read from the queue, GetQueueAttributes computes the attributes once, and ReceiveMessage reads the
queue only as far as its batch. The counts themselves are sqs_counts.py's, applied later (after
sqs/visibility.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from moto.sqs import models as sqs_models

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import SQS_FAST_PATHS

Patch = tuple[Any, str, Any]
SPEEDUPS = (SQS_FAST_PATHS,)


def moto_needs() -> list[Need]:
    return [
        need(sqs_models.SQSBackend, "is_message_valid_based_on_retention_period", "queue_name", "message"),
        need(sqs_models.SQSBackend, "get_queue", "queue_name"),
        need(sqs_models.SQSBackend, "get_queue_attributes", "queue_name", "attribute_names"),
        need(sqs_models.Queue, "attributes"),
        need(sqs_models.Queue, "messages"),
        need(sqs_models.Queue, "FIFO_ATTRIBUTES"),
        need(sqs_models.Queue, "KMS_ATTRIBUTES"),
        need(sqs_models.Message, "visible"),  # visible_at, delayed_until: what it and `delayed` compare
        need(sqs_models.Message, "delayed"),
        need(sqs_models, "unix_time_millis"),
        need(sqs_models.Queue, "BASE_ATTRIBUTES"),  # MessageRetentionPeriod: an int attribute of the queue
        need(sqs_models, "unix_time"),
    ]


def _retention_check(self: Any, queue_name: str, message: Any) -> bool:
    """moto's check, reading MessageRetentionPeriod (an int, see Queue._set_attributes) directly."""
    retention_period = self.get_queue(queue_name).message_retention_period
    return bool(retention_period + message.sent_timestamp / 1000 > sqs_models.unix_time())


class _VisibleMessages:
    """moto's Queue.messages (visible and not delayed), read lazily with one clock reading for the
    whole queue instead of two per message (moto's clock is a datetime subtraction). ReceiveMessage
    iterates it and stops at its batch: with a backlog it no longer lists every queued message to
    take ten (a backlog of 20,000 made each receive a walk of 20,000). Truth and length are moto's."""

    def __init__(self, messages: list[Any], now: int):
        self._messages, self._now = messages, now

    def __iter__(self) -> Iterator[Any]:
        now = self._now
        return (m for m in self._messages if now > m.visible_at and not now < m.delayed_until)

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _visible_messages(self: Any) -> _VisibleMessages:
    return _VisibleMessages(self._messages, sqs_models.unix_time_millis())


def _get_queue_attributes(original: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def get_queue_attributes(self: Any, queue_name: str, attribute_names: list[str]) -> dict[str, Any]:
        """moto's answer, computing the queue's attributes once instead of up to twice per name
        (an empty list, "All" and invalid names are left to moto itself)."""
        queue = self.get_queue(queue_name)
        valid = ("All", *queue.BASE_ATTRIBUTES, *queue.FIFO_ATTRIBUTES, *queue.KMS_ATTRIBUTES)
        if not attribute_names or "All" in attribute_names or any(name not in valid for name in attribute_names):
            return original(self, queue_name, attribute_names)
        attributes = queue.attributes
        return {name: attributes[name] for name in attribute_names if attributes.get(name) is not None}

    return get_queue_attributes


def patches() -> list[Patch]:
    return [
        (sqs_models.SQSBackend, "is_message_valid_based_on_retention_period", _retention_check),
        (
            sqs_models.SQSBackend,
            "get_queue_attributes",
            _get_queue_attributes(sqs_models.SQSBackend.get_queue_attributes),
        ),
        (sqs_models.Queue, "messages", property(_visible_messages)),
    ]

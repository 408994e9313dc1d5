"""SNS FIFO topics as AWS runs them, where moto 5.2 is more lenient:

- deduplication: a message published with a MessageDeduplicationId (or, with content-based
  deduplication, the SHA-256 of its body) already published in the last 5 minutes is accepted and
  not delivered to any subscription. moto delivers it again and leaves the deduplication to a FIFO
  SQS subscriber's own (a standard queue subscribed to the topic would get every duplicate).
  https://docs.aws.amazon.com/sns/latest/dg/fifo-message-dedup.html ("accepted successfully but
  aren't delivered"; "5-minute deduplication interval"); scope: the whole topic
  (FifoThroughputScope Topic, the default).
- subscribers: a FIFO topic delivers to SQS queues only; moto subscribes e-mail, Lambda or HTTP
  endpoints to it. https://docs.aws.amazon.com/sns/latest/dg/fifo-message-delivery.html
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from moto.sns.exceptions import InvalidParameterValue
from moto.sns.models import SNSBackend, Topic

Patch = tuple[Any, str, Any]
DEDUPLICATION_SECONDS = 300
_lock = threading.Lock()


def _seen(topic: Topic) -> dict[str, float]:
    """Deduplication ids published on this topic -> when (monotonic seconds)."""
    if not hasattr(topic, "_onceflow_deduplication"):
        topic._onceflow_deduplication = {}  # type: ignore[attr-defined]
    return topic._onceflow_deduplication  # type: ignore[attr-defined,no-any-return]


def is_duplicate(topic: Topic, message: str, deduplication_id: str | None, now: float) -> bool:
    """Record this publish; True when the same deduplication id was published within the interval."""
    key = deduplication_id or hashlib.sha256(message.encode()).hexdigest()
    with _lock:
        seen = _seen(topic)
        for old in [k for k, at in seen.items() if now - at >= DEDUPLICATION_SECONDS]:
            del seen[old]
        if key in seen:
            return True
        seen[key] = now
        return False


def _deduplicating(original: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(original)
    def publish(self: Topic, message: str, *args: Any, deduplication_id: str | None = None, **kwargs: Any) -> str:
        if self.fifo_topic and is_duplicate(self, message, deduplication_id, time.monotonic()):
            return str(uuid.uuid4())  # accepted, delivered to no subscription
        return original(self, message, *args, deduplication_id=deduplication_id, **kwargs)

    return publish


def _sqs_only(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def subscribe(self: SNSBackend, topic_arn: str, endpoint: str, protocol: str) -> Any:
        topic = self.topics.get(topic_arn)
        if topic is not None and topic.fifo_topic and protocol != "sqs":
            raise InvalidParameterValue(
                f"Invalid parameter: Protocol Reason: FIFO topics deliver to SQS queues only, not {protocol}"
            )
        return original(self, topic_arn, endpoint, protocol)

    return subscribe


def moto_needs() -> list[Any]:
    """What this module relies on in the pinned moto (see onceflow/local/engine/shape.py)."""
    from onceflow.local.engine.shape import need

    return [
        need(Topic, "publish", "message", "deduplication_id"),
        need(SNSBackend, "subscribe", "topic_arn", "endpoint", "protocol"),
    ]


def patches() -> list[Patch]:
    return [
        (Topic, "publish", _deduplicating(Topic.publish)),
        (SNSBackend, "subscribe", _sqs_only(SNSBackend.subscribe)),
    ]

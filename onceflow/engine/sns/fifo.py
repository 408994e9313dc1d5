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
- publish_answers: Publish to a FIFO topic answers a `SequenceNumber` (moto: none), a FIFO publish
  without MessageGroupId is InvalidParameter "Invalid parameter: The MessageGroupId parameter is
  required for FIFO topics" (moto: MissingParameter), and a topic ARN that names no topic is NotFound
  "Topic does not exist" (moto looked for a platform endpoint: "Endpoint does not exist").
  https://docs.aws.amazon.com/sns/latest/api/API_Publish.html; AWS's recordings: LocalStack's
  stepfunctions services/test_sns_task_service.snapshot.json (test_fifo_message_attribute,
  test_publish_base_error_topic_arn).
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from moto.core.responses import ActionResult
from moto.sns.exceptions import InvalidParameterValue, SNSNotFoundError
from moto.sns.models import SNSBackend, Topic
from moto.sns.responses import SNSResponse

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


def _publish_checked(original: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(original)
    def publish(self: SNSBackend, message: str, arn: str | None, *args: Any, **kwargs: Any) -> str:
        if arn and ":endpoint/" not in arn and kwargs.get("phone_number") is None:
            topic = self.topics.get(arn)
            if topic is None:
                raise SNSNotFoundError("Topic does not exist")
            if topic.fifo_topic and not kwargs.get("group_id"):
                raise InvalidParameterValue(
                    "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"
                )
        return original(self, message, arn, *args, **kwargs)

    return publish


def _with_sequence_number(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def publish(self: SNSResponse) -> Any:
        result = original(self)
        topic = self.backend.topics.get(self._get_param("TopicArn") or self._get_param("TargetArn") or "")
        if topic is not None and topic.fifo_topic and isinstance(result, ActionResult):
            with _lock:
                number = getattr(topic, "_onceflow_sequence", 10_000_000_000_000_000_000) + 1
                topic._onceflow_sequence = number  # type: ignore[attr-defined]
            result.result["SequenceNumber"] = str(number)  # type: ignore[index]
        return result

    return publish


def moto_needs() -> list[Any]:
    """What this module relies on in the pinned moto (see onceflow/engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(Topic, "publish", "message", "deduplication_id"),
        need(SNSBackend, "subscribe", "topic_arn", "endpoint", "protocol"),
        need(SNSBackend, "publish"),  # called by moto with arn=, phone_number=, group_id= (keywords)
        need(SNSResponse, "publish"),
        need(SNSResponse, "_get_param"),
    ]


def patches() -> list[Patch]:
    return [
        (Topic, "publish", _deduplicating(Topic.publish)),
        (SNSBackend, "subscribe", _sqs_only(SNSBackend.subscribe)),
        (SNSBackend, "publish", _publish_checked(SNSBackend.publish)),
        (SNSResponse, "publish", _with_sequence_number(SNSResponse.publish)),
    ]

"""SQS FIFO queues as AWS runs them, where moto differs.

- cloudformation_fifo_name: an AWS::SQS::Queue with FifoQueue true and no QueueName gets a
  generated name ending in ".fifo", as CloudFormation gives it (SQS requires the suffix, and the
  generated part is shortened to leave room for it within 80 characters); moto generates the
  name without the suffix and then refuses its own FIFO queue.
  https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-sqs-queue.html
  (QueueName: "If you don't specify a name, CloudFormation generates a unique physical ID";
  FifoQueue queues need the .fifo suffix:
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fifo-queues.html)
- deduplication_window: a message sent to a FIFO queue with a deduplication id (explicit, or the
  body's SHA-256 under content-based deduplication) already sent in the last five minutes is
  accepted and not delivered, whether or not the first was received and deleted meanwhile; moto
  compares only with the messages still in the queue, so a resend after the first was deleted got
  through (a redrive that kept the original deduplication id would have seemed to work). With
  DeduplicationScope messageGroup the id counts within its group. A message the redrive policy
  moves to the dead-letter queue is not a send and is never dropped.
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
  ("any messages sent with the same message deduplication ID are accepted successfully but aren't
  delivered during the 5-minute deduplication interval")
"""

from __future__ import annotations

from typing import Any

from moto.sqs.models import DEDUPLICATION_TIME_IN_SECONDS, Message, Queue

from onceflow.engine.registry import Patch

FIFO_SUFFIX = ".fifo"
MAX_QUEUE_NAME = 80
# Per queue: (group or None, deduplication id) -> first send (epoch ms); the baseline drops it with the messages.
SEEN_ATTRIBUTE = "_onceflow_deduplication"
_PRUNE_ABOVE = 10_000


def _is_true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _cloudformation_fifo_name() -> list[Patch]:
    original = Queue.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create_from_cloudformation_json(
        cls: type[Queue], resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any
    ) -> Queue:
        properties = cloudformation_json.get("Properties", {})
        name = str(resource_name)
        if _is_true(properties.get("FifoQueue")) and "QueueName" not in properties and not name.endswith(FIFO_SUFFIX):
            name = name[: MAX_QUEUE_NAME - len(FIFO_SUFFIX)].rstrip("-") + FIFO_SUFFIX
        return original(cls, name, cloudformation_json, account_id, region_name, **kwargs)

    return [(Queue, "create_from_cloudformation_json", classmethod(create_from_cloudformation_json))]


def _deduplication_window() -> list[Patch]:
    original = Queue.add_message

    def add_message(self: Queue, message: Message) -> None:
        if not self.fifo_queue or not message.deduplication_id or message.approximate_receive_count:
            return original(self, message)  # a standard queue, or a message the redrive policy moves
        by_group = self.attributes.get("DeduplicationScope") == "messageGroup"
        key = (message.group_id if by_group else None, message.deduplication_id)
        seen: dict[tuple[str | None, str], int] = self.__dict__.setdefault(SEEN_ATTRIBUTE, {})
        now = int(message.sent_timestamp)
        window_ms = DEDUPLICATION_TIME_IN_SECONDS * 1000
        if len(seen) > _PRUNE_ABOVE:
            for old in [k for k, sent in seen.items() if now - sent >= window_ms]:
                del seen[old]
        first = seen.get(key)
        if first is not None and now - first < window_ms:
            return None  # accepted, not delivered
        seen[key] = now
        return original(self, message)

    return [(Queue, "add_message", add_message)]


def moto_needs() -> list[Any]:
    """What this module calls or replaces in the pinned moto (checked by engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(Queue, "create_from_cloudformation_json", "resource_name", "cloudformation_json"),
        need(Queue, "add_message", "message"),  # Queue.fifo_queue; Message.deduplication_id, group_id, sent_timestamp
        need(Message, "__init__", "message_id", "body"),
    ]


def patches() -> list[Patch]:
    return _cloudformation_fifo_name() + _deduplication_window()

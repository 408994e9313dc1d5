"""SQS FIFO queues as AWS runs them, where moto differs.

- cloudformation_fifo_name: an AWS::SQS::Queue with FifoQueue true and no QueueName gets a
  generated name ending in ".fifo", as CloudFormation gives it (SQS requires the suffix, and the
  generated part is shortened to leave room for it within 80 characters); moto generates the
  name without the suffix and then refuses its own FIFO queue.
  https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-sqs-queue.html
  (QueueName: "If you don't specify a name, CloudFormation generates a unique physical ID";
  FifoQueue queues need the .fifo suffix:
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fifo-queues.html)
"""

from __future__ import annotations

from typing import Any

from moto.sqs.models import Queue

from onceflow.local.engine import Patch

FIFO_SUFFIX = ".fifo"
MAX_QUEUE_NAME = 80


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


def moto_needs() -> list[Any]:
    """What this module calls or replaces in the pinned moto (checked by engine/shape.py)."""
    from onceflow.local.engine.shape import need

    return [need(Queue, "create_from_cloudformation_json", "resource_name", "cloudformation_json")]


def moto_patches() -> list[Patch]:
    return _cloudformation_fifo_name()

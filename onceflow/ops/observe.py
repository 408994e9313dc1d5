"""Read the pipeline's outcome from the stack: tables, notifications and dead letters."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from boto3.dynamodb.types import TypeDeserializer


@cache
def _deserializer() -> TypeDeserializer:
    # Imported when an item is first read: importing boto3 costs every command's start about 30 ms
    # (its resource layer and s3transfer), and `status` reads no item without the subscriber.
    from boto3.dynamodb.types import TypeDeserializer

    return TypeDeserializer()


def plain(item: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB item (attribute values typed, as the client answers) as plain Python values."""
    deserialize = _deserializer().deserialize
    return {key: deserialize(value) for key, value in item.items()}


def scan(dynamodb: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items.extend(plain(item) for item in page["Items"])
    return items


@dataclass(frozen=True)
class QueuedMessage:
    message_id: str
    body: str
    attributes: dict[str, str]
    receive_count: int

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def _queued(message: dict[str, Any]) -> QueuedMessage:
    return QueuedMessage(
        message_id=message["MessageId"],
        body=message["Body"],
        attributes={k: v.get("StringValue", "") for k, v in message.get("MessageAttributes", {}).items()},
        receive_count=int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1")),
    )


def drain(sqs: Any, queue_url: str, delete: bool = True) -> list[QueuedMessage]:
    """Receive every visible message. With delete=False they are made visible again afterwards.

    One DeleteMessageBatch per batch received (one DeleteMessage per message made a reader of a
    long run's notifications half of an idle server's work)."""
    messages: list[QueuedMessage] = []
    handles: list[str] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
            VisibilityTimeout=60,
        ).get("Messages", [])
        if not batch:
            break
        messages.extend(_queued(message) for message in batch)
        if delete:
            _batch(sqs.delete_message_batch, queue_url, [{"ReceiptHandle": m["ReceiptHandle"]} for m in batch])
        else:
            handles.extend(message["ReceiptHandle"] for message in batch)
    for start in range(0, len(handles), 10):
        entries = [{"ReceiptHandle": handle, "VisibilityTimeout": 0} for handle in handles[start : start + 10]]
        _batch(sqs.change_message_visibility_batch, queue_url, entries)
    return messages


def _batch(call: Any, queue_url: str, entries: list[dict[str, Any]]) -> None:
    """One SQS batch call (at most 10 entries); an entry SQS refuses is an error, not a message
    received twice."""
    numbered = [{"Id": str(number), **entry} for number, entry in enumerate(entries)]
    failed = call(QueueUrl=queue_url, Entries=numbered).get("Failed", [])
    if failed:
        raise RuntimeError(f"{queue_url}: {failed[0].get('Code')}: {failed[0].get('Message')}")


def topic_may_send(topic_arn: str, queue_arn: str) -> str:
    """A queue policy that lets this topic (and no other) send to the queue."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "sns.amazonaws.com"},
                    "Action": "sqs:SendMessage",
                    "Resource": queue_arn,
                    "Condition": {"ArnEquals": {"aws:SourceArn": topic_arn}},
                }
            ],
        }
    )


class NotificationInbox:
    """An SQS queue subscribed to the notification topic (raw delivery): what a reader receives."""

    def __init__(self, sns: Any, sqs: Any, topic_arn: str, name: str = "onceflow-notification-inbox"):
        self._sqs = sqs
        self.queue_url = sqs.create_queue(QueueName=name)["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        # SNS delivers only to a queue whose policy admits the topic, on AWS and on the embedded AWS
        # (https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html).
        sqs.set_queue_attributes(QueueUrl=self.queue_url, Attributes={"Policy": topic_may_send(topic_arn, queue_arn)})
        sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
        self.received: list[QueuedMessage] = []

    def collect(self) -> list[QueuedMessage]:
        """Everything delivered so far (accumulates across calls)."""
        self.received.extend(drain(self._sqs, self.queue_url))
        return self.received

    def discard(self) -> int:
        """Take what was delivered off the queue without keeping it (a reader that keeps up, in a
        long run nobody reads); returns how many."""
        return len(drain(self._sqs, self.queue_url))

    def by_event_id(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for message in self.collect():
            event_id = message.attributes.get("event_id", "")
            counts[event_id] = counts.get(event_id, 0) + 1
        return counts

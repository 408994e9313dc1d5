"""Send a notification that cannot be applied to the subscriber's dead-letter queue: the body as
received, the reason in the attributes every Onceflow dead letter carries (onceflow_common), and
the notification's own `payload_hash`, so that moving it back to the subscriber queue (after a
fix) delivers a notification this code reads again."""

from __future__ import annotations

from typing import Any

from onceflow_common import dead_letters
from onceflow_subscriber.errors import CannotApply
from onceflow_subscriber.notification import PAYLOAD_HASH_ATTRIBUTE


def dead_letter_attributes(record: dict[str, Any], reason: CannotApply) -> dict[str, dict[str, str]]:
    attributes = dead_letters.reason_attributes(
        error=reason.error,
        cause=str(reason),
        source=dead_letters.FROM_SUBSCRIBER,
        field=reason.field,
        rule=reason.rule,
        source_message_id=reason.message_id,
        event_id=reason.event_id,
    )
    payload_hash = (record.get("messageAttributes") or {}).get(PAYLOAD_HASH_ATTRIBUTE, {}).get("stringValue")
    if isinstance(payload_hash, str) and payload_hash:
        attributes[PAYLOAD_HASH_ATTRIBUTE] = dead_letters.string_attribute(payload_hash)
    return attributes


def send_to_dead_letter_queue(sqs: Any, queue_url: str, record: dict[str, Any], reason: CannotApply) -> str:
    """Raises if SQS refuses: the caller then reports the record failed, so SQS keeps it."""
    # A FIFO dead-letter queue (behind an SNS FIFO topic's subscriber): the record's own group, and a
    # digest of its message id, so a retried send is dropped.
    group = (record.get("attributes") or {}).get("MessageGroupId")
    fifo = dead_letters.fifo_fields(queue_url, group, str(record.get("messageId", "")))
    response = sqs.send_message(
        QueueUrl=queue_url,
        MessageBody=record.get("body", ""),
        MessageAttributes=dead_letter_attributes(record, reason),
        **fifo,
    )
    return str(response["MessageId"])

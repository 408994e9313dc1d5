"""A batch's records, parsed up front: each is an event to hand over or a message to dead-letter."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from starter.messages import InvalidMessage, PipelineEvent, parse_record
from starter.settings import Settings


@dataclass(frozen=True)
class Delivery:
    message_id: str
    body: str
    event: PipelineEvent | None = None
    invalid: InvalidMessage | None = None
    failure: Exception | None = None  # parsing failed unexpectedly: the record is reported failed
    already_sent: bool = False
    group_id: str | None = None  # a FIFO source's MessageGroupId
    # As Lambda gave it: a throttled record is re-queued from it (standard source), or kept in flight
    # with its receipt handle, with its group's held-back records (FIFO).
    record: dict[str, Any] | None = None

    @property
    def event_id(self) -> str | None:
        if self.event is not None:
            return self.event.event_id
        return self.invalid.event_id if self.invalid is not None else None

    def with_already_sent(self, already_sent: bool) -> Delivery:
        return dataclasses.replace(self, already_sent=already_sent)


@dataclass(frozen=True)
class Handled:
    message_id: str
    outcome: str | None  # None: failed, SQS redelivers it
    throttled: bool = False  # failed because Step Functions throttled it for the whole invocation


def parse_batch(records: list[dict[str, Any]], settings: Settings) -> list[Delivery]:
    deliveries = []
    for record in records:
        message_id, body = record["messageId"], record.get("body") or ""
        group_id = (record.get("attributes") or {}).get("MessageGroupId") if settings.fifo else None
        try:
            event = parse_record(record, settings)
            deliveries.append(Delivery(message_id, body, event=event, group_id=group_id, record=record))
        except InvalidMessage as invalid:
            invalid.message_attributes = record.get("messageAttributes") or {}  # a redrive's count goes on
            deliveries.append(Delivery(message_id, body, invalid=invalid, group_id=group_id, record=record))
        except Exception as failure:  # one record's surprise must not fail its whole batch
            deliveries.append(Delivery(message_id, body, failure=failure, group_id=group_id, record=record))
    return deliveries


def by_message_group(deliveries: list[Delivery]) -> list[list[Delivery]]:
    """A FIFO batch's records per MessageGroupId, each group in the batch's order (Lambda hands a
    FIFO batch over in order within each group), groups in the order they first appear."""
    groups: dict[str | None, list[Delivery]] = {}
    for delivery in deliveries:
        groups.setdefault(delivery.group_id, []).append(delivery)
    return list(groups.values())

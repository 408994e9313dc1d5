"""A batch of notifications from the subscriber's SQS queue, with partial batch responses.

Powertools' batch utility reports each record that raised in `batchItemFailures` (the event
source needs `FunctionResponseTypes: [ReportBatchItemFailures]`), so one record never fails its
batch. Each record ends one of four ways:
- applied: the effect and its marker were written in one transaction;
- already applied: a duplicate (the marker exists with the same payload_hash), nothing written;
- dead-lettered: it can never be applied (CannotApply: the reason names message, field and rule),
  sent to the dead-letter queue and acknowledged; if that send fails, the record fails instead;
- failed: anything else (throttling, a crash of the effect code); SQS delivers it again after the
  visibility timeout, and after maxReceiveCount its redrive policy moves it to the dead-letter queue.
On a FIFO queue (an SNS FIFO topic's subscriber) a failed record's later records of the same
message group are reported failed unprocessed, as Lambda requires to keep the order within a group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, SqsFifoPartialProcessor
from aws_lambda_powertools.utilities.batch import process_partial_response as _process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from onceflow_subscriber.dead_letter import send_to_dead_letter_queue
from onceflow_subscriber.errors import CannotApply
from onceflow_subscriber.exactly_once import Applied
from onceflow_subscriber.notification import Notification, parse_notification

DEAD_LETTERED = "dead_lettered"


@dataclass
class BatchOutcome:
    """What happened to each record of one batch, by SQS message id (for logs, metrics and tests)."""

    outcomes: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for value in self.outcomes.values() if value == outcome)


class NotificationBatch:
    """Hands each notification of a batch to `apply` and answers with a partial batch response.

    `apply(notification)` writes the effect (typically `ExactlyOnce.apply(notification, items)`)
    and returns its `Applied`; it raises `CannotApply` (or `notification.invalid(...)`) for a
    notification it refuses for good, and anything else for a failure worth another delivery.
    """

    def __init__(
        self,
        apply: Callable[[Notification], Applied],
        sqs: Any,
        dead_letter_queue_url: str,
        logger: Logger,
        fifo: bool = False,
    ):
        self.apply = apply
        self.sqs = sqs
        self.dead_letter_queue_url = dead_letter_queue_url
        self.logger = logger
        self.fifo = fifo

    def _record(self, record: SQSRecord, outcome: BatchOutcome) -> None:
        self.logger.append_keys(message_id=record.message_id, event_id=None)
        try:
            self._apply(record, outcome)
        finally:
            # A record's keys leave with it: neither the batch's own lines nor, where functions
            # share a process (the local stack), another function's lines carry them.
            self.logger.remove_keys(["message_id", "event_id"])

    def _apply(self, record: SQSRecord, outcome: BatchOutcome) -> None:
        raw = record.raw_event
        try:
            notification = parse_notification(raw)
            self.logger.append_keys(event_id=notification.event_id)
            applied = self.apply(notification)
        except CannotApply as reason:
            self.logger.append_keys(event_id=reason.event_id)
            self.logger.warning(
                "Notification cannot be applied: dead-lettering it",
                error=reason.error,
                field=reason.field,
                rule=reason.rule,
                reason=reason.detail,
            )
            send_to_dead_letter_queue(self.sqs, self.dead_letter_queue_url, raw, reason)
            outcome.outcomes[record.message_id] = DEAD_LETTERED
            return
        except Exception:
            self.logger.exception("Notification failed; SQS will deliver it again")
            outcome.failed.append(record.message_id)
            raise
        outcome.outcomes[record.message_id] = applied.outcome
        self.logger.info(
            "Effect applied" if applied.outcome == "applied" else "Duplicate notification: already applied",
            outcome=applied.outcome,
            applied_at=applied.applied_at,
            applied_by_message=applied.applied_by_message,
        )

    def handle(self, event: dict[str, Any], context: Any) -> tuple[dict[str, Any], BatchOutcome]:
        """The partial batch response for Lambda, and what happened to each record."""
        outcome = BatchOutcome()
        # A batch whose every record failed is reported record by record too (not raised as an
        # error): SQS keeps them all either way, and the function's Errors metric stays for crashes.
        processor: BatchProcessor = (
            # Per message group: a failed record holds back only the later records of its group.
            SqsFifoPartialProcessor(skip_group_on_error=True) if self.fifo else BatchProcessor(EventType.SQS)
        )
        processor.raise_on_entire_batch_failure = False
        response = _process_partial_response(event, lambda record: self._record(record, outcome), processor, context)
        return dict(response), outcome

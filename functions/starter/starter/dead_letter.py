"""Send a message that can never succeed to the dead-letter queue: the original body, unchanged
(an operator can fix it and redrive it), and the reason in the uniform attributes of every dead
letter (onceflow_common.dead_letters)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from onceflow_common import dead_letters
from starter.executions import ExecutionEndedBadly, ExecutionRejected
from starter.messages import InvalidMessage

INVALID_MESSAGE_ERROR = "Onceflow.InvalidMessage"
THROTTLED_ERROR = "StepFunctions.ThrottlingException"  # as Step Functions names a throttled call


@dataclass(frozen=True)
class Reason:
    error: str
    cause: str
    field: str
    rule: str
    message_id: str
    event_id: str | None
    # A redriven message's count and first reason (dead_letters.carried_provenance), carried over.
    carried: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)

    @classmethod
    def invalid(cls, invalid: InvalidMessage) -> Reason:
        return cls(
            INVALID_MESSAGE_ERROR,
            str(invalid),
            invalid.field,
            invalid.rule,
            invalid.message_id,
            invalid.event_id,
            dead_letters.carried_provenance(invalid.message_attributes),
        )

    @classmethod
    def rejected(cls, rejected: ExecutionRejected, message_id: str, event_id: str) -> Reason:
        # Named as Step Functions names a service's errors: StepFunctions.InvalidExecutionInput.
        return cls(f"StepFunctions.{rejected.code}", str(rejected), rejected.field, rejected.code, message_id, event_id)

    @classmethod
    def ended_badly(cls, ended: ExecutionEndedBadly, message_id: str, event_id: str) -> Reason:
        """A waited-for execution (FIFO STANDARD) ended outside the workflow's paths."""
        return cls(
            ended.error or f"Execution.{ended.status}", str(ended), "execution", ended.status, message_id, event_id
        )

    @classmethod
    def throttled(cls, message_id: str, event_id: str | None, receives: int, behind: str | None = None) -> Reason:
        """A FIFO record Step Functions throttled on its last receive (throttling.py, `last_receives`),
        or one held back behind such a record of its group: dead-lettered with this reason before the
        queue's redrive policy would move it with none."""
        why = (
            f"held back behind message {behind} of its group, which Step Functions throttled on each receive"
            if behind
            else "Step Functions throttled its start on each receive"
        )
        return cls(
            THROTTLED_ERROR,
            f"{why}; on receive {receives}, the queue's maxReceiveCount, the starter dead-lettered it "
            "rather than let SQS's redrive policy move it without a reason: redrive it once the throttle ended",
            "execution",
            "throttled",
            message_id,
            event_id,
        )


def reason_attributes(reason: Reason) -> dict[str, dict[str, str]]:
    attributes = dead_letters.reason_attributes(
        error=reason.error,
        cause=reason.cause,
        source=dead_letters.FROM_STARTER,
        field=reason.field,
        rule=reason.rule,
        source_message_id=reason.message_id,
        event_id=reason.event_id or None,
    )
    return {**attributes, **reason.carried}


def send_to_dead_letter_queue(
    sqs: Any, queue_url: str, body: str, reason: Reason, group_id: str | None = None, deduplication_key: str = ""
) -> str:
    """A FIFO dead-letter queue gets the record's group and a deduplication id per letter: the
    source message id (a redelivery of the same record dead-letters it once), or the key given."""
    fifo = dead_letters.fifo_fields(queue_url, group_id, deduplication_key or f"starter {reason.message_id}")
    response = sqs.send_message(
        QueueUrl=queue_url, MessageBody=body, MessageAttributes=reason_attributes(reason), **fifo
    )
    return str(response["MessageId"])

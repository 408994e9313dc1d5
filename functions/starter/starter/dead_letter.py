"""Send a message that can never succeed to the dead-letter queue: the original body, unchanged
(an operator can fix it and redrive it), and the reason in the uniform attributes of every dead
letter (onceflow_common.dead_letters)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from onceflow_common import dead_letters
from onceflow_common.dead_letters import string_attribute
from starter.executions import ExecutionRejected
from starter.messages import InvalidMessage

INVALID_MESSAGE_ERROR = "Onceflow.InvalidMessage"


@dataclass(frozen=True)
class Reason:
    error: str
    cause: str
    field: str
    rule: str
    message_id: str
    event_id: str | None

    @classmethod
    def invalid(cls, invalid: InvalidMessage) -> Reason:
        return cls(
            INVALID_MESSAGE_ERROR, str(invalid), invalid.field, invalid.rule, invalid.message_id, invalid.event_id
        )

    @classmethod
    def rejected(cls, rejected: ExecutionRejected, message_id: str, event_id: str) -> Reason:
        # Named as Step Functions names a service's errors: StepFunctions.InvalidExecutionInput.
        return cls(f"StepFunctions.{rejected.code}", str(rejected), rejected.field, rejected.code, message_id, event_id)


def reason_attributes(reason: Reason) -> dict[str, dict[str, str]]:
    attributes = {
        dead_letters.ERROR: string_attribute(reason.error),
        dead_letters.CAUSE: string_attribute(reason.cause),
        dead_letters.FIELD: string_attribute(reason.field),
        dead_letters.RULE: string_attribute(reason.rule),
        dead_letters.SOURCE: string_attribute(dead_letters.FROM_STARTER),
        dead_letters.SOURCE_MESSAGE_ID: string_attribute(reason.message_id),
    }
    if reason.event_id:
        attributes[dead_letters.EVENT_ID] = string_attribute(reason.event_id)
    return attributes


def send_to_dead_letter_queue(sqs: Any, queue_url: str, body: str, reason: Reason) -> str:
    response = sqs.send_message(QueueUrl=queue_url, MessageBody=body, MessageAttributes=reason_attributes(reason))
    return str(response["MessageId"])

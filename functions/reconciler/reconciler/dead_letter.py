"""A dead letter from the reconciler: the original SQS body, the reason in message attributes
(the names every writer uses: onceflow_common.dead_letters)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from onceflow_common import dead_letters
from onceflow_common.status_change import EndedExecution, event_id_of, group_of, original_body, redrive_count_in

# SQS allows 256 KiB per message, attributes included: the cause is a summary, not a dump.
MAX_CAUSE_CHARACTERS = 4096


@dataclass(frozen=True)
class Reason:
    error: str
    cause: str


def reason_for(execution: EndedExecution) -> Reason:
    """The execution's own error and cause, or its status when it has none (AWS gives none for some stops)."""
    error = execution.error or f"Execution.{execution.status}"
    cause = execution.cause or f"the execution ended {execution.status} outside the workflow's dead-letter path"
    return Reason(error, cause)


def body_of(execution: EndedExecution) -> str:
    """The original SQS body (`message.body` of the starter's input); an input of another shape is sent as it is."""
    return original_body(execution.input) or execution.input or "{}"


def send(sqs: Any, queue_url: str, execution: EndedExecution, reason: Reason) -> str:
    attributes = dead_letters.reason_attributes(
        error=reason.error,
        cause=reason.cause[:MAX_CAUSE_CHARACTERS],
        source=dead_letters.FROM_RECONCILER,
        execution_arn=execution.execution_arn,
        event_id=event_id_of(execution.input) or None,
    )
    count = redrive_count_in(execution.input)
    if count is not None:  # a redriven message's count goes on
        attributes[dead_letters.REDRIVE_COUNT] = {"DataType": "Number", "StringValue": count}
    # FIFO: the execution's message group; keyed by the execution, as the starter keys its letter
    # of the same ended execution, so SQS keeps one of the two within its five-minute window.
    fifo = dead_letters.fifo_fields(queue_url, group_of(execution.input), execution.execution_arn)
    response = sqs.send_message(
        QueueUrl=queue_url, MessageBody=body_of(execution), MessageAttributes=attributes, **fifo
    )
    return str(response["MessageId"])

"""A throttled Step Functions call waits in the invocation, then goes back to the queue as a new message.

SQS counts receives, not failures: every receive of a message increments its
ApproximateReceiveCount, and the redrive policy moves it to the dead-letter queue once that passes
maxReceiveCount (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html).
Changing a message's visibility does not reset the count, so reporting a throttled record failed,
with or without a longer visibility timeout, spends one of its receives per attempt, and a
throttle that outlasts `maxReceiveCount` attempts dead-letters a valid event. Instead:

1. the call is retried inside the invocation, with exponential backoff and full jitter, while the
   invocation has time left (`call_waiting_out_throttling`): waiting costs no receive; with the
   event source's MaximumConcurrency sized by `onceflow capacity`, the starters' own demand stays
   below the bucket's refill and every throttled call gets a token well within the invocation;
2. a record still throttled when the time is up (another consumer drains the account's bucket)
   raises StillThrottled; on a standard source the starter sends it to the source queue again as a
   new message, with a delay, and acknowledges the received one (`requeue`): the new message
   starts at receive count 0, so no number of throttled rounds dead-letters it. Its body is the
   same, so its event_id and payload hash are too (the workflow writes once, R2); its execution
   name differs (a new message id), which only names the execution;
3. on a FIFO source a record cannot be re-queued without going behind the group's later messages,
   so it is reported failed and blocks its group (R5); that spends one receive per invocation the
   throttle outlasts (docs/RUNBOOK.md, "Traffic above capacity").

Throttling Step Functions answers ThrottlingException
(https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

THROTTLING_ERRORS = {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
FIRST_BACKOFF_SECONDS, MAX_BACKOFF_SECONDS = 0.05, 2.0
# A re-queued message waits 2, 4, ... seconds before SQS delivers it, at most SQS's 900 s.
REQUEUES_ATTRIBUTE = "onceflow-throttled-requeues"
AWS_MAX_DELAY_SECONDS = 900  # SQS's largest DelaySeconds
MAX_DELAY_SECONDS = AWS_MAX_DELAY_SECONDS

T = TypeVar("T")


class StillThrottled(Exception):
    """Step Functions kept throttling this record's call until the invocation had no time left."""

    def __init__(self, attempts: int, waited_seconds: float):
        self.attempts, self.waited_seconds = attempts, waited_seconds
        super().__init__(f"still throttled after {attempts} attempts over {waited_seconds:.1f} s")


def is_throttling(error: Exception) -> bool:
    response = getattr(error, "response", None)
    code = (response.get("Error") or {}).get("Code") if isinstance(response, dict) else None
    return code in THROTTLING_ERRORS


def call_waiting_out_throttling(
    call: Callable[[], T],
    remaining_seconds: Callable[[], float],
    reserve_seconds: float,
    sleep: Callable[[float], None],
    on_throttled: Callable[[], None] = lambda: None,
) -> T:
    """`call()`, retried on throttling while `reserve_seconds` of the invocation would remain.

    The time left is the invocation's own, and also its start minus what this loop slept (a local
    runtime's clock does not move while a test replaces `sleep`)."""
    budget = remaining_seconds()
    slept = 0.0
    attempt = 0
    while True:
        try:
            return call()
        except Exception as error:
            if not is_throttling(error):
                raise
            on_throttled()
            attempt += 1
            delay = random.uniform(0, min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2**attempt))
            left = min(remaining_seconds(), budget - slept) - reserve_seconds
            if left < delay:
                raise StillThrottled(attempt, slept) from error
            sleep(delay)
            slept += delay


def requeues_of(record: dict[str, Any]) -> int:
    attribute = (record.get("messageAttributes") or {}).get(REQUEUES_ATTRIBUTE) or {}
    text = attribute.get("stringValue") or "0"
    return int(text) if text.isdigit() else 0


def _message_attributes(record: dict[str, Any], requeues: int) -> dict[str, Any]:
    """The record's attributes as SendMessage takes them, the requeue count set."""
    attributes: dict[str, Any] = {}
    for name, value in (record.get("messageAttributes") or {}).items():
        data_type = value.get("dataType") or "String"
        if value.get("stringValue") is not None:
            attributes[name] = {"DataType": data_type, "StringValue": value["stringValue"]}
        elif value.get("binaryValue") is not None:
            attributes[name] = {"DataType": data_type, "BinaryValue": value["binaryValue"]}
    attributes[REQUEUES_ATTRIBUTE] = {"DataType": "Number", "StringValue": str(requeues)}
    return attributes


def requeue(sqs: Any, queue_url: str, record: dict[str, Any]) -> tuple[str, int]:
    """Send the record again as a new message (receive count 0), delayed; returns its id and delay.
    If this fails the caller reports the record failed, so SQS keeps the received one."""
    requeues = requeues_of(record) + 1
    delay = min(MAX_DELAY_SECONDS, 2 ** min(requeues, 10))
    sent = sqs.send_message(
        QueueUrl=queue_url,
        MessageBody=record.get("body") or "",
        DelaySeconds=delay,
        MessageAttributes=_message_attributes(record, requeues),
    )
    return str(sent["MessageId"]), delay

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
   so it is reported failed and blocks its group (R5), and it stays the same message: each round
   the throttle outlasts spends one receive. So the starter also keeps it, and the group's records
   it holds back, in flight for longer and longer (`hold_back`: ChangeMessageVisibilityBatch with
   their receipt handles). SQS delivers none of a group's messages while one is in flight, so the
   order holds, and a sustained throttle spends receives slowly (`held_back_seconds`;
   docs/RUNBOOK.md, "Traffic above capacity"). Lambda leaves a failed record's visibility as it is:
   it reappears when its visibility timeout runs out
   (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
4. a FIFO record throttled on its last receive (its ApproximateReceiveCount has reached the queue's
   maxReceiveCount: SQS's redrive policy moves it at the next receive, with no reason attached) is
   dead-lettered by the starter with its reason instead (`last_receives`), with the group's records
   held back behind it that are on their last receive too, in order: R1's dead letter always
   carries its reason. With MaxReceiveCount 5 that is its fifth receive, after 7.5 hours of
   uninterrupted throttling (the holds of its first four: 30 min + 1 h + 2 h + 4 h); the redrive
   policy would have moved it, without a reason, 8 hours later. Dead-lettering it is the one way
   it keeps its reason: after the last receive the starter never sees it again.

Time: every wait is counted against the invocation, the SDK's own too. botocore's standard retry
mode retries a throttled call by itself (up to its max attempts, sleeping rand(0, 1) x min(2^i, 20) s
before the i-th retry: botocore/retries/standard.py, ExponentialBackoff; "Retry behavior" in the AWS
SDKs and Tools Reference Guide), so one call may take `sdk_retry_seconds` more than it seems: a call
is made only while that much is left besides the reserve, and the calls' measured time counts with
the starter's own waits. A record there is no time left to hand over raises NotStarted.

Throttling Step Functions answers ThrottlingException
(https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

THROTTLING_ERRORS = {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
FIRST_BACKOFF_SECONDS, MAX_BACKOFF_SECONDS = 0.05, 2.0
# A re-queued message waits 2, 4, ... seconds before SQS delivers it, at most SQS's 900 s.
REQUEUES_ATTRIBUTE = "onceflow-throttled-requeues"
AWS_MAX_DELAY_SECONDS = 900  # SQS's largest DelaySeconds
MAX_DELAY_SECONDS = AWS_MAX_DELAY_SECONDS

# A FIFO record throttled for a whole invocation, on its n-th receive, stays in flight
# HOLD_BASE_SECONDS x 2^(n-1): 30 min, 1 h, 2 h, 4 h, 8 h, then the cap. The first is about the
# queue's own visibility timeout (1980 s, from the receive), so a throttle that ends soon costs what
# it did before; with MaxReceiveCount 5 (the template's default) the fifth receive, the last before
# the redrive policy would move it, comes after 30 min + 1 h + 2 h + 4 h = 7.5 h of throttling (each
# further receive allowed adds the next hold: 8 h, then the cap), and there the starter dead-letters
# it with its reason (`last_receives`). SQS caps a message's visibility at 12 h counted from its receive
# (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html,
# a longer request is refused); the starter asks at most an hour less, as its call comes within the
# receive's visibility timeout (1980 s) plus its own run.
HOLD_BASE_SECONDS = 1_800
SQS_MAX_VISIBILITY_SECONDS = 43_200
HOLD_MAX_SECONDS = SQS_MAX_VISIBILITY_SECONDS - 3_600
CHANGE_VISIBILITY_BATCH = 10  # entries per ChangeMessageVisibilityBatch call, SQS's limit
# botocore's standard retry mode for a throttling error: rand(0, 1) x min(1 s x 2^i, 20 s) before retry i.
SDK_THROTTLING_BASE_SECONDS, SDK_MAX_BACKOFF_SECONDS = 1.0, 20.0
CALL_LATENCY_SECONDS = 1.0  # an attempt's own time, besides the SDK's waits: a throttled answer is quick
monotonic = time.monotonic  # the clock the calls are measured on (replaced with a test's clock)

T = TypeVar("T")


class NotStarted(Exception):
    """Less of the invocation is left than one call may take with the SDK's own retries: the record
    was not handed over (not throttled: out of time, after other records' waits)."""

    def __init__(self, left_seconds: float, call_seconds: float):
        self.left_seconds, self.call_seconds = left_seconds, call_seconds
        super().__init__(f"not handed over: {left_seconds:.1f} s left, one call may take {call_seconds:.1f} s")


def sdk_retry_seconds(max_attempts: int) -> float:
    """The longest botocore's standard mode sleeps in one call throttled on each of `max_attempts`."""
    return sum(min(SDK_THROTTLING_BASE_SECONDS * 2**i, SDK_MAX_BACKOFF_SECONDS) for i in range(max_attempts - 1))


def call_seconds(client: Any) -> float:
    """The most one call of `client` may take when throttled: its SDK retries' waits and each attempt."""
    retries = getattr(getattr(getattr(client, "meta", None), "config", None), "retries", None) or {}
    attempts = int(retries.get("total_max_attempts") or retries.get("max_attempts", 2) + 1)
    return sdk_retry_seconds(attempts) + attempts * CALL_LATENCY_SECONDS


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
    call_seconds: float = 0.0,
) -> T:
    """`call()`, retried on throttling while a call (`call_seconds`: with the SDK's own retries) and
    `reserve_seconds` of the invocation would remain.

    The time left is the invocation's own, and also its start minus what was spent here: the waits
    of this loop (as asked: a test may replace `sleep`) and the calls' measured time, the SDK's
    retry sleeps in it. NotStarted when not even the first call fits."""
    budget = remaining_seconds()
    spent = 0.0
    attempt = 0
    while True:
        left = min(remaining_seconds(), budget - spent) - reserve_seconds
        if left < call_seconds:
            if attempt == 0:
                raise NotStarted(left, call_seconds)
            raise StillThrottled(attempt, spent)
        began = monotonic()
        try:
            return call()
        except Exception as error:
            spent += monotonic() - began
            if not is_throttling(error):
                raise
            on_throttled()
            attempt += 1
            delay = random.uniform(0, min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2**attempt))
            left = min(remaining_seconds(), budget - spent) - reserve_seconds
            if left - delay < call_seconds:
                raise StillThrottled(attempt, spent) from error
            sleep(delay)
            spent += delay


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


def receive_count_of(record: dict[str, Any]) -> int:
    text = str((record.get("attributes") or {}).get("ApproximateReceiveCount") or "1")
    return int(text) if text.isdigit() else 1


def held_back_seconds(receive_count: int) -> int:
    """How long a FIFO record throttled on its `receive_count`-th receive stays in flight."""
    return min(HOLD_MAX_SECONDS, HOLD_BASE_SECONDS * 2 ** min(max(receive_count, 1) - 1, 16))


def hold_back(sqs: Any, queue_url: str, records: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """Keep a throttled FIFO record and its group's records held back with it in flight, all for
    the same time (they come back together, in order), grown with the highest receive count among
    them. Returns the visibility set and the message ids SQS did not take it for; a call that
    raises leaves the caller to report them failed all the same (SQS keeps them)."""
    seconds = held_back_seconds(max(receive_count_of(record) for record in records))
    not_held: list[str] = []
    for start in range(0, len(records), CHANGE_VISIBILITY_BATCH):
        chunk = records[start : start + CHANGE_VISIBILITY_BATCH]
        response = sqs.change_message_visibility_batch(
            QueueUrl=queue_url,
            Entries=[
                {"Id": str(index), "ReceiptHandle": record["receiptHandle"], "VisibilityTimeout": seconds}
                for index, record in enumerate(chunk)
            ],
        )
        not_held.extend(chunk[int(failed["Id"])]["messageId"] for failed in response.get("Failed") or [])
    return seconds, not_held


_max_receive_counts: dict[str, int | None] = {}
_max_receive_lock = threading.Lock()


def max_receive_count(sqs: Any, queue_url: str) -> int | None:
    """The queue's redrive policy's maxReceiveCount (GetQueueAttributes, once per process), or None
    when it has none or it cannot be read (then a throttled group is held, as before)."""
    with _max_receive_lock:
        if queue_url not in _max_receive_counts:
            try:
                attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["RedrivePolicy"])
                policy = json.loads(attributes.get("Attributes", {}).get("RedrivePolicy") or "{}")
                _max_receive_counts[queue_url] = int(policy["maxReceiveCount"]) if policy else None
            except Exception:  # a hint only: without it the group is held as before
                return None
        return _max_receive_counts[queue_url]


def forget_queues() -> None:
    """Forget what was read of the queues (the endpoint changed)."""
    with _max_receive_lock:
        _max_receive_counts.clear()


def last_receives(records: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """Of a throttled FIFO group's records (the throttled one first), those SQS would move to the
    dead-letter queue at their next receive, in order; none unless the throttled one is such."""
    if limit is None or not records or receive_count_of(records[0]) < limit:
        return []
    return [record for record in records if receive_count_of(record) >= limit]

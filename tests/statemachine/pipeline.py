"""What the state machine tests read: the pipeline's tables, its dead letters and the ASL's own settings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult
from onceflow_common import dead_letters as dead_letter_attributes
from tests.support import dead_letters, order_rows, state_rows  # noqa: F401 (re-exported)

RECORD = "Record event and business item"
LOOK_UP = "Look up earlier record"
WHAT_IS_LEFT = "What is left to do?"
SAME_PAYLOAD = "Same payload as the stored business item?"
RECORD_AGAIN = "Record again?"
START_COUNTING = "Start counting record retries"
COUNT_RETRY = "Count record retry"
BACK_OFF = "Back off before recording again"
PUBLISH = "Publish notification"
MARK_SENT = "Mark as sent"
DEAD_LETTER = "Send to dead-letter queue"
CONFLICT = "Describe payload conflict"
CONFLICT_WITH_ORDER = "Describe payload conflict with stored business item"

NEW_EVENT_PATH = [RECORD, PUBLISH, MARK_SENT]
PENDING_PATH = [RECORD, LOOK_UP, WHAT_IS_LEFT, PUBLISH, MARK_SENT]
ALREADY_SENT_PATH = [RECORD, LOOK_UP, WHAT_IS_LEFT, "Already sent"]
EXPIRED_PATH = [RECORD, LOOK_UP, WHAT_IS_LEFT, SAME_PAYLOAD, "Already done, record expired"]
# A standard source's dead letter: the queue-type Choice, then the standard send (a FIFO source's takes
# "Send to FIFO dead-letter queue": tests/starter/test_fifo.py).
DEAD_LETTER_QUEUE_TYPE = "Dead-letter queue is FIFO?"
DEAD_LETTERED_TAIL = [DEAD_LETTER_QUEUE_TYPE, DEAD_LETTER, "Dead-lettered"]

# What the workflow must keep, written out here rather than read from the ASL under test (issue 8 §6):
# a change to the ASL's budgets fails these tests until someone decides it on purpose.
RECORD_RETRY_BOUND = 5  # times `Record again?` records again after the first cancellation
RECORD_BACKOFF_CEILINGS = [1, 2, 4, 8, 16]  # seconds, full jitter: each wait is 0..ceiling
PUBLISH_MAX_ATTEMPTS = 5  # retries of a transient SNS error
MARK_SENT_MAX_ATTEMPTS = 4
DEAD_LETTER_MAX_ATTEMPTS = 5


def set_status(stack: LocalStack, event_id: str, status: str) -> None:
    """Rewind (or corrupt) the state record as a crash or an operator would leave it."""
    stack.client("dynamodb").update_item(
        TableName=stack.processed_events_table,
        Key={"event_id": {"S": event_id}},
        UpdateExpression="SET #status = :status",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={":status": {"S": status}},
    )


@dataclass(frozen=True)
class DeadLetter:
    body: str
    cause: str


def assert_dead_lettered(
    stack: LocalStack, result: ExecutionResult, error: str, event_id: str, body: str
) -> DeadLetter:
    """The execution failed as dead-lettered and the DLQ holds exactly its message (now received)."""
    assert result.status == "FAILED"
    assert result.error == "Onceflow.DeadLettered"
    assert result.path[-3:] == DEAD_LETTERED_TAIL
    [message] = dead_letters(stack)
    assert message.body == body, "the original body is kept so an operator can redrive it"
    assert message.attributes["error"] == error
    assert message.attributes["event_id"] == event_id
    assert message.attributes["execution_arn"] == result.arn
    assert message.attributes["source"] == "state-machine"
    assert message.attributes["source_message_id"] == result.input["message"]["id"]
    assert set(message.attributes) <= dead_letter_attributes.WRITTEN_ATTRIBUTES
    assert message.attributes[dead_letter_attributes.REDRIVE_COUNT] == result.input["message"]["redrive_count"]
    cause = message.attributes["cause"]
    assert not cause.startswith("{"), "the cause is the plain Cause text, not a JSON document"
    return DeadLetter(body=message.body, cause=cause)


@dataclass(frozen=True)
class Backoff:
    """One Retry entry of the ASL: the delay before retry n is at most min(interval * rate^n, max delay)."""

    interval_seconds: float
    backoff_rate: float
    max_delay_seconds: float
    max_attempts: int
    jitter: str

    def ceiling(self, retry_index: int) -> float:
        return min(self.interval_seconds * self.backoff_rate**retry_index, self.max_delay_seconds)


def _states(stack: LocalStack) -> dict[str, Any]:
    return json.loads(stack.definition_path.read_text())["States"]


def retrier(stack: LocalStack, state: str, error: str) -> Backoff:
    """The Retry entry of `state` in the deployed ASL file that handles `error` (or States.ALL)."""
    for entry in _states(stack)[state]["Retry"]:
        if error in entry["ErrorEquals"] or "States.ALL" in entry["ErrorEquals"]:
            return Backoff(
                interval_seconds=entry.get("IntervalSeconds", 1),
                backoff_rate=entry.get("BackoffRate", 2.0),
                max_delay_seconds=entry.get("MaxDelaySeconds", float("inf")),
                max_attempts=entry.get("MaxAttempts", 3),
                jitter=entry.get("JitterStrategy", "NONE"),
            )
    raise AssertionError(f"no Retry of {state!r} handles {error}")


def assert_full_jitter(delays: list[float], backoff: Backoff) -> None:
    """Each recorded delay lies between 0 and its exponential ceiling (capped by MaxDelaySeconds), and
    jitter really applied: without it every delay would be exactly its ceiling."""
    assert backoff.jitter == "FULL"
    ceilings = [backoff.ceiling(retry_index) for retry_index in range(len(delays))]
    for delay, ceiling in zip(delays, ceilings, strict=True):
        assert 0 <= delay <= ceiling, (delays, ceilings)
    assert delays != ceilings, "no jitter was applied"


def task_errors(result: ExecutionResult, state: str) -> list[str]:
    return [failure["error"] for failure in result.task_failures(state)]

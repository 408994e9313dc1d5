"""Record cancelled or throttled with nothing recorded. A cancellation for another reason than a failed
condition (TransactionConflict, or ThrottlingError: how AWS reports an item throttled inside a
transaction) goes round the bounded `Record again?` loop with exponential backoff and full jitter;
a throttled or failed request as a whole is retried by the Record state's own Retry. Both give up into
the dead-letter queue with nothing written.

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
(TransactionCanceledException with CancellationReasons TransactionConflict / ThrottlingError).
"""

from __future__ import annotations

import json

from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException
from moto.dynamodb.models import DynamoDBBackend

from onceflow.local.faults import dynamodb_throttling, dynamodb_transaction_conflicts, inject
from tests.statemachine.pipeline import (
    BACK_OFF,
    COUNT_RETRY,
    LOOK_UP,
    NEW_EVENT_PATH,
    PUBLISH,
    RECORD,
    RECORD_AGAIN,
    RECORD_BACKOFF_CEILINGS,
    RECORD_RETRY_BOUND,
    START_COUNTING,
    WHAT_IS_LEFT,
    assert_dead_lettered,
    dead_letters,
    order_rows,
    retrier,
    state_rows,
    task_errors,
)
from tests.support import order, run_execution

CANCELLED = "DynamoDb.TransactionCanceledException"
THROUGHPUT_EXCEEDED = "DynamoDb.ProvisionedThroughputExceededException"
RECORD_MAX_ATTEMPTS = 3  # the Record state's own Retry (whole-request throttling)


def _one_round(first: bool) -> list[str]:
    return [RECORD, LOOK_UP, WHAT_IS_LEFT, RECORD_AGAIN, *([START_COUNTING] if first else []), COUNT_RETRY, BACK_OFF]


def _assert_backoff(waits: list[float], retries: int) -> None:
    """One wait per retry, each between 0 and its exponential ceiling (full jitter)."""
    assert len(waits) == retries
    for wait, ceiling in zip(waits, RECORD_BACKOFF_CEILINGS, strict=False):
        assert 0 <= wait <= ceiling, (waits, RECORD_BACKOFF_CEILINGS)


def test_cancelled_transaction_with_no_record_is_retried_after_backing_off(stack, inbox, embedded_aws):
    with dynamodb_transaction_conflicts(times=2) as fault:
        result = run_execution(stack, order("order-9"), name="order-9-first")

    assert fault.injected == 2
    assert result.status == "SUCCEEDED"
    assert result.path == [*_one_round(first=True), *_one_round(first=False), *NEW_EVENT_PATH]
    assert task_errors(result, RECORD) == [CANCELLED, CANCELLED]
    assert all("TransactionConflict" in failure["cause"] for failure in result.task_failures(RECORD))
    _assert_backoff(embedded_aws.clock.wait_seconds, retries=2)
    [state] = state_rows(stack)
    assert state["status"] == "sent"
    [business] = order_rows(stack)
    assert business["execution_arn"] == result.arn
    assert inbox.by_event_id() == {"order-9": 1}
    assert dead_letters(stack) == []


def test_throttling_inside_the_transaction_is_retried_like_a_conflict(stack, inbox, embedded_aws):
    """Issue 8 §4: a throttled item cancels the transaction (reason ThrottlingError); it is recorded
    again after a backoff instead of being dead-lettered as a conflict would have been."""
    with dynamodb_throttling(times=3) as fault:
        result = run_execution(stack, order("order-11"), name="order-11-first")

    assert fault.injected == 3
    assert result.status == "SUCCEEDED"
    assert task_errors(result, RECORD) == [CANCELLED] * 3
    assert all("ThrottlingError" in failure["cause"] for failure in result.task_failures(RECORD))
    assert result.path[-len(NEW_EVENT_PATH) :] == NEW_EVENT_PATH
    assert result.path.count(BACK_OFF) == 3
    _assert_backoff(embedded_aws.clock.wait_seconds, retries=3)
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert len(order_rows(stack)) == 1
    assert inbox.by_event_id() == {"order-11": 1}
    assert dead_letters(stack) == []


def test_cancelled_transaction_beyond_the_bound_is_dead_lettered(stack, inbox, embedded_aws):
    body = order("order-10")

    with dynamodb_transaction_conflicts() as fault:
        result = run_execution(stack, body, name="order-10-first")

    assert fault.injected == 1 + RECORD_RETRY_BOUND
    assert result.attempts(RECORD) == 1 + RECORD_RETRY_BOUND
    assert task_errors(result, RECORD) == [CANCELLED] * (1 + RECORD_RETRY_BOUND)
    assert result.path[-5:] == [
        RECORD_AGAIN,
        "Describe record retries exhausted",
        "Dead-letter queue is FIFO?",
        "Send to dead-letter queue",
        "Dead-lettered",
    ]
    _assert_backoff(embedded_aws.clock.wait_seconds, retries=RECORD_RETRY_BOUND)
    dead_letter = assert_dead_lettered(
        stack, result, "Onceflow.RecordRetriesExhausted", event_id="order-10", body=json.dumps(body)
    )
    assert "TransactionConflict" in dead_letter.cause
    assert f"cancelled {RECORD_RETRY_BOUND} more times" in dead_letter.cause
    assert state_rows(stack) == []
    assert order_rows(stack) == []
    assert inbox.collect() == []


def _whole_request_throttled(times: int | None = None):
    """The request as a whole is refused (ProvisionedThroughputExceededException), before any item is
    looked at: one of TransactWriteItems' documented errors besides TransactionCanceledException."""
    return inject(
        DynamoDBBackend,
        "transact_write_items",
        lambda: DynamodbException(ERROR_TYPE_PREFIX + "ProvisionedThroughputExceededException", "Injected fault"),
        times=times,
        name="dynamodb.transact_write_items:ProvisionedThroughputExceeded",
    )


def test_throttled_request_is_retried_by_the_record_state(stack, inbox, embedded_aws):
    with _whole_request_throttled(times=2) as fault:
        result = run_execution(stack, order("order-18"), name="order-18-first")

    assert fault.injected == 2
    assert result.status == "SUCCEEDED"
    assert result.path == NEW_EVENT_PATH, "a throttled request never reaches the look-up: the Retry handles it"
    assert result.attempts(RECORD) == 3
    # moto's States.ALL would also catch States.Runtime: the error that reached the retrier must be throttling.
    assert task_errors(result, RECORD) == [THROUGHPUT_EXCEEDED, THROUGHPUT_EXCEEDED]
    delays = embedded_aws.clock.retry_delays
    assert len(delays) == 2
    backoff = retrier(stack, RECORD, THROUGHPUT_EXCEEDED)
    assert backoff.jitter == "FULL"
    assert all(0 <= delay <= backoff.ceiling(n) for n, delay in enumerate(delays))
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert inbox.by_event_id() == {"order-18": 1}


def test_throttling_beyond_the_record_retries_is_dead_lettered_with_nothing_written(stack, inbox):
    body = order("order-12")

    with _whole_request_throttled() as fault:
        result = run_execution(stack, body, name="order-12-first")

    assert fault.injected == RECORD_MAX_ATTEMPTS + 1
    assert task_errors(result, RECORD) == [THROUGHPUT_EXCEEDED] * (RECORD_MAX_ATTEMPTS + 1)
    assert LOOK_UP not in result.path
    assert_dead_lettered(stack, result, THROUGHPUT_EXCEEDED, event_id="order-12", body=json.dumps(body))
    assert state_rows(stack) == []
    assert order_rows(stack) == []
    assert PUBLISH not in result.path
    assert inbox.collect() == []

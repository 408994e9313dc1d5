"""Record cancelled or throttled with nothing recorded: a cancelled transaction goes round the bounded
`First record retry?` loop, throttling is retried by the Record state's own Retry; both give up into
the dead-letter queue with nothing written."""

from __future__ import annotations

import json

from onceflow.local.faults import dynamodb_throttling, dynamodb_transaction_conflicts
from tests.statemachine.pipeline import (
    LOOK_UP,
    NEW_EVENT_PATH,
    PUBLISH,
    RECORD,
    assert_dead_lettered,
    assert_full_jitter,
    dead_letters,
    order_rows,
    record_retry_bound,
    retrier,
    state_rows,
    task_errors,
)
from tests.support import order, run_execution

CANCELLED = "DynamoDb.TransactionCanceledException"
THROUGHPUT_EXCEEDED = "DynamoDb.ProvisionedThroughputExceededException"


def test_cancelled_transaction_with_no_record_is_retried_after_backing_off(stack, inbox, embedded_aws):
    with dynamodb_transaction_conflicts(times=2) as fault:
        result = run_execution(stack, order("order-9"), name="order-9-first")

    assert fault.injected == 2
    assert result.status == "SUCCEEDED"
    assert result.path == [
        "Build order record",
        RECORD,
        LOOK_UP,
        "What is left to do?",
        "First record retry?",
        "Start counting record retries",
        "Back off before retrying record",
        RECORD,
        LOOK_UP,
        "What is left to do?",
        "First record retry?",
        "Retry record again?",
        "Count record retry",
        "Back off before retrying record",
        *NEW_EVENT_PATH[1:],
    ]
    assert task_errors(result, RECORD) == [CANCELLED, CANCELLED]
    assert all("TransactionConflict" in failure["cause"] for failure in result.task_failures(RECORD))
    assert embedded_aws.clock.wait_seconds == [1, 2], "linear backoff: one second per retry so far"
    [state] = state_rows(stack)
    assert state["status"] == "sent"
    [business] = order_rows(stack)
    assert business["execution_arn"] == result.arn
    assert inbox.by_event_id() == {"order-9": 1}
    assert dead_letters(stack) == []


def test_cancelled_transaction_beyond_the_bound_is_dead_lettered(stack, inbox, embedded_aws):
    body = order("order-10")
    bound = record_retry_bound(stack)

    with dynamodb_transaction_conflicts() as fault:
        result = run_execution(stack, body, name="order-10-first")

    assert fault.injected == 1 + bound
    assert result.attempts(RECORD) == 1 + bound
    assert task_errors(result, RECORD) == [CANCELLED] * (1 + bound)
    assert result.path[-4:] == [
        "Retry record again?",
        "Describe record retries exhausted",
        "Send to dead-letter queue",
        "Dead-lettered",
    ]
    assert embedded_aws.clock.wait_seconds == list(range(1, bound + 1)), "linear backoff: one second per retry"
    dead_letter = assert_dead_lettered(
        stack, result, "Onceflow.RecordRetriesExhausted", event_id="order-10", body=json.dumps(body)
    )
    assert "TransactionConflict" in dead_letter.cause
    assert state_rows(stack) == []
    assert order_rows(stack) == []
    assert inbox.collect() == []


def test_throttled_transaction_is_retried_by_the_record_state(stack, inbox, embedded_aws):
    with dynamodb_throttling(times=2) as fault:
        result = run_execution(stack, order("order-11"), name="order-11-first")

    assert fault.injected == 2
    assert result.status == "SUCCEEDED"
    assert result.path == NEW_EVENT_PATH, "throttling never reaches the look-up: the Retry handles it"
    assert result.attempts(RECORD) == 3
    # moto's States.ALL would also catch States.Runtime: the error that reached the retrier must be throttling.
    assert task_errors(result, RECORD) == [THROUGHPUT_EXCEEDED, THROUGHPUT_EXCEEDED]
    delays = embedded_aws.clock.retry_delays
    assert len(delays) == 2
    assert_full_jitter(delays, retrier(stack, RECORD, THROUGHPUT_EXCEEDED))
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert len(order_rows(stack)) == 1
    assert inbox.by_event_id() == {"order-11": 1}


def test_throttling_beyond_the_record_retries_is_dead_lettered_with_nothing_written(stack, inbox):
    body = order("order-12")
    backoff = retrier(stack, RECORD, THROUGHPUT_EXCEEDED)

    with dynamodb_throttling() as fault:
        result = run_execution(stack, body, name="order-12-first")

    assert fault.injected == backoff.max_attempts + 1
    assert task_errors(result, RECORD) == [THROUGHPUT_EXCEEDED] * (backoff.max_attempts + 1)
    assert LOOK_UP not in result.path
    assert_dead_lettered(stack, result, THROUGHPUT_EXCEEDED, event_id="order-12", body=json.dumps(body))
    assert state_rows(stack) == []
    assert order_rows(stack) == []
    assert PUBLISH not in result.path
    assert inbox.collect() == []

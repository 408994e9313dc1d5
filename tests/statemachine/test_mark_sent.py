"""Mark as sent failing: throttling is retried; beyond the retries the event is dead-lettered with the
notification already out and the record `pending`, so a redrive costs one duplicate notification only."""

from __future__ import annotations

import json

from onceflow.local.faults import dynamodb_throttling
from tests.statemachine.pipeline import (
    MARK_SENT,
    MARK_SENT_MAX_ATTEMPTS,
    NEW_EVENT_PATH,
    PENDING_PATH,
    assert_dead_lettered,
    assert_full_jitter,
    dead_letters,
    order_rows,
    retrier,
    state_rows,
    task_errors,
)
from tests.support import order, run_execution

THROUGHPUT_EXCEEDED = "DynamoDB.ProvisionedThroughputExceededException"


def test_throttled_mark_as_sent_is_retried(stack, inbox, embedded_aws):
    with dynamodb_throttling(times=2, operation="update_item") as fault:
        result = run_execution(stack, order("order-14"), name="order-14-first")

    assert fault.injected == 2
    assert result.status == "SUCCEEDED"
    assert result.path == NEW_EVENT_PATH
    assert task_errors(result, MARK_SENT) == [THROUGHPUT_EXCEEDED, THROUGHPUT_EXCEEDED]
    assert_full_jitter(embedded_aws.clock.retry_delays, retrier(stack, MARK_SENT, THROUGHPUT_EXCEEDED))
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert inbox.by_event_id() == {"order-14": 1}


def test_mark_as_sent_failing_beyond_retries_is_dead_lettered_and_redriven(stack, inbox):
    body = order("order-15")
    with dynamodb_throttling(operation="update_item"):
        failed = run_execution(stack, body, name="order-15-first")

    assert task_errors(failed, MARK_SENT) == [THROUGHPUT_EXCEEDED] * (MARK_SENT_MAX_ATTEMPTS + 1)
    dead_letter = assert_dead_lettered(stack, failed, THROUGHPUT_EXCEEDED, event_id="order-15", body=json.dumps(body))
    assert [row["status"] for row in state_rows(stack)] == ["pending"]
    assert inbox.by_event_id() == {"order-15": 1}

    redriven = run_execution(stack, dead_letter.body, name="order-15-redrive")

    assert redriven.path == PENDING_PATH
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    [business] = order_rows(stack)
    assert business["execution_arn"] == failed.arn
    assert inbox.by_event_id() == {"order-15": 2}, "the accepted cost: one duplicate notification"
    assert dead_letters(stack) == []

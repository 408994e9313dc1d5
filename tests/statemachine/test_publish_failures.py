"""SNS failing: transient failures are retried with full-jitter backoff; failures beyond the retries
are dead-lettered with the record left `pending`, and a redrive then publishes once and marks `sent`."""

from __future__ import annotations

import json

from onceflow.local.faults import sns_publish_failures
from tests.statemachine.pipeline import (
    NEW_EVENT_PATH,
    PENDING_PATH,
    PUBLISH,
    PUBLISH_MAX_ATTEMPTS,
    assert_dead_lettered,
    assert_full_jitter,
    dead_letters,
    order_rows,
    retrier,
    state_rows,
    task_errors,
)
from tests.support import order, run_execution

THROTTLED = "SNS.ThrottledException"


def test_transient_publish_failures_are_retried_with_full_jitter_backoff(stack, inbox, embedded_aws):
    with sns_publish_failures(times=2) as fault:
        result = run_execution(stack, order("order-6"), name="order-6-first")

    assert fault.injected == 2
    assert result.status == "SUCCEEDED"
    assert result.path == NEW_EVENT_PATH
    assert result.attempts(PUBLISH) == 3
    assert task_errors(result, PUBLISH) == [THROTTLED, THROTTLED]
    delays = embedded_aws.clock.retry_delays
    assert len(delays) == 2
    assert_full_jitter(delays, retrier(stack, PUBLISH, THROTTLED))
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert len(order_rows(stack)) == 1
    assert inbox.by_event_id() == {"order-6": 1}
    assert dead_letters(stack) == []


def test_publish_failing_beyond_retries_is_dead_lettered_and_a_redrive_publishes_once(stack, inbox, embedded_aws):
    body = order("order-7")
    backoff = retrier(stack, PUBLISH, THROTTLED)
    assert backoff.max_attempts == PUBLISH_MAX_ATTEMPTS

    with sns_publish_failures() as fault:
        failed = run_execution(stack, body, name="order-7-first")

    assert fault.injected == backoff.max_attempts + 1
    assert failed.attempts(PUBLISH) == backoff.max_attempts + 1
    assert task_errors(failed, PUBLISH) == [THROTTLED] * (backoff.max_attempts + 1)
    assert len(embedded_aws.clock.retry_delays) == backoff.max_attempts
    assert_full_jitter(embedded_aws.clock.retry_delays, backoff)
    assert failed.path[-4:] == [PUBLISH, "Dead-letter queue is FIFO?", "Send to dead-letter queue", "Dead-lettered"]
    dead_letter = assert_dead_lettered(stack, failed, THROTTLED, event_id="order-7", body=json.dumps(body))
    assert "Injected fault" in dead_letter.cause
    [state] = state_rows(stack)
    assert state["status"] == "pending", "the record stays pending so a redrive publishes without rewriting"
    assert "ttl" not in state, "a pending record never expires"
    assert state["pending_shard"] == failed.input["pending_shard"]
    assert state["pending_since"] == state["recorded_at"], "the pending index's sort key: when Record ran"
    [business] = order_rows(stack)
    assert business["execution_arn"] == failed.arn
    assert inbox.collect() == []

    # The operator redrives the DLQ message: the starter turns it into a new execution of the same event.
    redriven = run_execution(stack, dead_letter.body, name="order-7-redrive")

    assert redriven.status == "SUCCEEDED"
    assert redriven.path == PENDING_PATH
    assert redriven.attempts(PUBLISH) == 1
    assert order_rows(stack) == [business]
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert inbox.by_event_id() == {"order-7": 1}
    assert dead_letters(stack) == []


def test_a_missing_topic_is_dead_lettered_at_once_without_retries(stack, embedded_aws):
    """A permanent SNS error (the topic is gone) cannot succeed on a retry: it takes the dead-letter path
    with its own name after one attempt."""
    body = order("order-8")
    stack.client("sns").delete_topic(TopicArn=stack.notification_topic_arn)

    failed = run_execution(stack, body, name="order-8-first")

    assert task_errors(failed, PUBLISH) == ["SNS.NotFoundException"]
    assert failed.attempts(PUBLISH) == 1
    assert embedded_aws.clock.retry_delays == []
    assert_dead_lettered(stack, failed, "SNS.NotFoundException", event_id="order-8", body=json.dumps(body))
    assert [row["status"] for row in state_rows(stack)] == ["pending"]

"""After RecordRetentionDays DynamoDB's TTL deletes a sent event's state record; the business row stays
(it has no TTL) and its key condition keeps the event from being written or published twice.

The expiry is the TTL emulation (onceflow/engine/dynamodb/ttl.py) on a clock the test advances, deleting
what DynamoDB would delete, on the table's own TimeToLiveSpecification: not items deleted by hand.
AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
"""

from __future__ import annotations

import json

from onceflow.engine.dynamodb.ttl import TtlClock
from onceflow.local.faults import sns_publish_failures
from tests.statemachine.pipeline import (
    CONFLICT_WITH_ORDER,
    DEAD_LETTERED_TAIL,
    EXPIRED_PATH,
    LOOK_UP,
    NEW_EVENT_PATH,
    RECORD,
    SAME_PAYLOAD,
    WHAT_IS_LEFT,
    assert_dead_lettered,
    dead_letters,
    order_rows,
    state_rows,
)
from tests.support import order, run_execution

RECORD_RETENTION_DAYS = 35  # template.yaml's default, which the starter's ttl is computed from
SENT_AT = 1_790_000_000  # tests.support.sqs_record's SentTimestamp, in seconds


def test_after_the_record_expires_redeliveries_and_resends_do_nothing_twice(stack, inbox):
    body = order("order-20")
    first = run_execution(stack, body, name="order-20-first", message_id="message-20")
    assert first.path == NEW_EVENT_PATH
    assert first.input["ttl"] == SENT_AT + RECORD_RETENTION_DAYS * 86_400
    clock = TtlClock(stack.client("dynamodb"), now=SENT_AT)

    assert clock.advance_days(RECORD_RETENTION_DAYS - 1) == []
    [expired] = clock.advance_days(2)

    assert (expired.table, expired.key) == (stack.processed_events_table, {"event_id": {"S": "order-20"}})
    assert state_rows(stack) == []
    [business] = order_rows(stack)

    # SQS redelivers the same message (same message id, same input), then the producer resends it.
    redelivered = run_execution(stack, body, name="order-20-redelivered", message_id="message-20")
    resent = run_execution(stack, body, name="order-20-resent", message_id="message-20-resend")

    for again in (redelivered, resent):
        assert again.status == "SUCCEEDED"
        assert again.path == EXPIRED_PATH
        [cancelled] = again.task_failures(RECORD)
        assert "[None, ConditionalCheckFailed]" in cancelled["cause"], "only the business row's condition failed"
    assert order_rows(stack) == [business], "the business row is neither rewritten nor duplicated"
    assert business["execution_arn"] == first.arn
    assert state_rows(stack) == [], "nothing is written on this path, not even a new state record"
    assert inbox.by_event_id() == {"order-20": 1}
    assert dead_letters(stack) == []


def test_a_resend_with_another_payload_after_expiry_is_a_conflict(stack, inbox):
    original, conflicting = order("order-21", amount=10), order("order-21", amount=99)
    run_execution(stack, original, name="order-21-first")
    TtlClock(stack.client("dynamodb"), now=SENT_AT).advance_days(RECORD_RETENTION_DAYS + 1)
    [business] = order_rows(stack)

    conflict = run_execution(stack, conflicting, name="order-21-conflict")

    assert conflict.path == [RECORD, LOOK_UP, WHAT_IS_LEFT, SAME_PAYLOAD, CONFLICT_WITH_ORDER, *DEAD_LETTERED_TAIL]
    dead_letter = assert_dead_lettered(
        stack, conflict, "Onceflow.PayloadConflict", event_id="order-21", body=json.dumps(conflicting)
    )
    assert conflict.input["payload_hash"] in dead_letter.cause
    assert order_rows(stack) == [business]
    assert json.loads(business["payload"]) == original
    assert state_rows(stack) == []
    assert inbox.by_event_id() == {"order-21": 1}


def test_a_pending_record_never_expires(stack):
    """Issue 8 §1: the ttl is written by Mark as sent only, so an event left pending (an SNS outage, a
    redrive cycle) keeps its record however long it waits."""
    with sns_publish_failures():
        run_execution(stack, order("order-22"), name="order-22-first")
    clock = TtlClock(stack.client("dynamodb"), now=SENT_AT)

    assert clock.advance_days(10 * 365) == []
    assert [row["status"] for row in state_rows(stack)] == ["pending"]


def test_an_expired_record_is_readable_until_the_sweep_runs(stack):
    """As on AWS, expiry is not deletion: between the TTL passing and the sweep, reads still see it."""
    run_execution(stack, order("order-23"), name="order-23-first")
    clock = TtlClock(stack.client("dynamodb"), now=SENT_AT + (RECORD_RETENTION_DAYS + 1) * 86_400)

    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert [item.key for item in clock.expire()] == [{"event_id": {"S": "order-23"}}]
    assert state_rows(stack) == []

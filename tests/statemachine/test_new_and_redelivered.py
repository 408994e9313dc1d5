"""A new event is written once, published once and marked sent; a redelivery after `sent` does nothing."""

from __future__ import annotations

import json

from tests.statemachine.pipeline import (
    ALREADY_SENT_PATH,
    NEW_EVENT_PATH,
    RECORD,
    dead_letters,
    order_rows,
    state_rows,
)
from tests.support import order, run_execution


def test_new_event_is_recorded_published_and_marked_sent(stack, inbox):
    body = order("order-1", amount=42.5)

    result = run_execution(stack, body, name="order-1-first")

    assert result.status == "SUCCEEDED"
    assert result.path == NEW_EVENT_PATH
    [state] = state_rows(stack)
    assert state["event_id"] == "order-1"
    assert state["status"] == "sent"
    assert state["payload_hash"] == result.input["payload_hash"]
    assert state["execution_arn"] == result.arn
    assert state["sent_by"] == result.arn
    assert state["ttl"] == result.input["ttl"], "the ttl is set when the event is marked sent"
    assert "pending_since" not in state and "pending_shard" not in state, "off the pending index once sent"
    [business] = order_rows(stack)
    assert business["order_id"] == "order-1"
    assert json.loads(business["payload"]) == body
    assert business["payload_hash"] == result.input["payload_hash"]
    assert business["execution_arn"] == result.arn
    [notification] = inbox.collect()
    assert notification.json == body
    assert notification.attributes["event_id"] == "order-1"
    assert notification.attributes["payload_hash"] == result.input["payload_hash"]
    assert dead_letters(stack) == []


def test_redelivery_after_sent_writes_and_publishes_nothing(stack, inbox):
    body = order("order-2")
    first = run_execution(stack, body, name="order-2-first")
    business_before = order_rows(stack)

    # A producer resend or an SQS redelivery: new message id, so a new execution, same event.
    again = run_execution(stack, body, name="order-2-again")

    assert first.status == again.status == "SUCCEEDED"
    assert again.path == ALREADY_SENT_PATH
    [cancelled] = again.task_failures(RECORD)
    assert cancelled["error"] == "DynamoDb.TransactionCanceledException"
    assert "ConditionalCheckFailed" in cancelled["cause"]
    assert order_rows(stack) == business_before
    assert business_before[0]["execution_arn"] == first.arn
    [state] = state_rows(stack)
    assert state["status"] == "sent"
    assert state["sent_by"] == first.arn
    assert inbox.by_event_id() == {"order-2": 1}
    assert dead_letters(stack) == []

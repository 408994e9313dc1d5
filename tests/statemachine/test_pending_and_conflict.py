"""What a cancelled Record finds: a `pending` event is published only; another payload under a known
event_id is dead-lettered untouched, also while the first one is still pending; a status nobody wrote
is dead-lettered for an operator."""

from __future__ import annotations

import json

from onceflow.local.faults import sns_publish_failures
from tests.statemachine.pipeline import (
    CONFLICT,
    DEAD_LETTERED_TAIL,
    LOOK_UP,
    PENDING_PATH,
    PUBLISH,
    RECORD,
    assert_dead_lettered,
    dead_letters,
    order_rows,
    set_status,
    state_rows,
)
from tests.support import order, run_execution


def test_redelivery_while_pending_publishes_only_then_marks_sent(stack, inbox):
    body = order("order-3")
    first = run_execution(stack, body, name="order-3-first")
    business_before = order_rows(stack)
    # The first run crashed after Publish and before Mark as sent: the record is still pending.
    set_status(stack, "order-3", "pending")

    again = run_execution(stack, body, name="order-3-again")

    assert again.status == "SUCCEEDED"
    assert again.path == PENDING_PATH
    [cancelled] = again.task_failures(RECORD)
    assert "ConditionalCheckFailed" in cancelled["cause"]
    assert order_rows(stack) == business_before, "the business row is neither rewritten nor duplicated"
    assert business_before[0]["execution_arn"] == first.arn
    [state] = state_rows(stack)
    assert state["status"] == "sent"
    assert state["execution_arn"] == first.arn, "the state record keeps the execution that recorded it"
    assert state["sent_by"] == again.arn
    # One publish per run: the crash costs a duplicate notification (R3), never a missing one.
    assert inbox.by_event_id() == {"order-3": 2}
    assert dead_letters(stack) == []


def test_conflicting_payload_for_a_known_event_id_is_dead_lettered_without_overwrite(stack, inbox):
    original, conflicting = order("order-4", amount=10), order("order-4", amount=99)
    first = run_execution(stack, original, name="order-4-first")
    business_before = order_rows(stack)

    conflict = run_execution(stack, conflicting, name="order-4-conflict")

    assert conflict.path[-5:] == [
        "What is left to do?",
        "Describe payload conflict",
        "Dead-letter queue is FIFO?",
        "Send to dead-letter queue",
        "Dead-lettered",
    ]
    assert LOOK_UP in conflict.path
    dead_letter = assert_dead_lettered(
        stack, conflict, "Onceflow.PayloadConflict", event_id="order-4", body=json.dumps(conflicting)
    )
    assert first.input["payload_hash"] in dead_letter.cause
    assert conflict.input["payload_hash"] in dead_letter.cause
    assert order_rows(stack) == business_before
    assert json.loads(business_before[0]["payload"]) == original
    [state] = state_rows(stack)
    assert state["status"] == "sent"
    assert state["payload_hash"] == first.input["payload_hash"]
    assert inbox.by_event_id() == {"order-4": 1}


def test_conflicting_payload_while_the_first_is_pending_is_dead_lettered_unpublished(stack, inbox):
    """Issue 8 §6: the payload hash is checked before the status. Checking `pending` first would publish
    the conflicting payload and mark the first event sent."""
    original, conflicting = order("order-19", amount=10), order("order-19", amount=99)
    with sns_publish_failures():
        first = run_execution(stack, original, name="order-19-first")
    assert [row["status"] for row in state_rows(stack)] == ["pending"]
    first_dead_letter = assert_dead_lettered(
        stack, first, "SNS.ThrottledException", event_id="order-19", body=json.dumps(original)
    )
    business_before = order_rows(stack)

    conflict = run_execution(stack, conflicting, name="order-19-conflict")

    assert conflict.path == [RECORD, LOOK_UP, "What is left to do?", CONFLICT, *DEAD_LETTERED_TAIL]
    assert PUBLISH not in conflict.path
    assert_dead_lettered(stack, conflict, "Onceflow.PayloadConflict", event_id="order-19", body=json.dumps(conflicting))
    [state] = state_rows(stack)
    assert (state["status"], state["payload_hash"]) == ("pending", first.input["payload_hash"])
    assert order_rows(stack) == business_before
    assert inbox.collect() == [], "neither payload was published"

    # The first event is still whole: its redrive publishes the original payload once.
    redriven = run_execution(stack, first_dead_letter.body, name="order-19-redrive")

    assert redriven.path == PENDING_PATH
    [notification] = inbox.collect()
    assert notification.json == original


def test_unknown_status_is_dead_lettered_for_an_operator(stack, inbox):
    body = order("order-5")
    run_execution(stack, body, name="order-5-first")
    set_status(stack, "order-5", "archived")

    again = run_execution(stack, body, name="order-5-again")

    assert again.path[-4:] == [
        "Describe unknown status",
        "Dead-letter queue is FIFO?",
        "Send to dead-letter queue",
        "Dead-lettered",
    ]
    assert_dead_lettered(stack, again, "Onceflow.UnknownStatus", event_id="order-5", body=json.dumps(body))
    assert [row["status"] for row in state_rows(stack)] == ["archived"]
    assert len(order_rows(stack)) == 1
    assert inbox.by_event_id() == {"order-5": 1}

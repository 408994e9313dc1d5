"""The example subscriber behind its queue, subscribed to the notification topic of the stack made
from template.yaml (DeploySubscriber=true): notifications published as `Publish notification`
publishes them (SNS -> SQS raw delivery), delivered by the emulated SQS event source (batches,
partial batch responses, redelivery after the visibility timeout) to the real handler.

R4: its effect (ADD event_count 1 on the tally of the order's customer: a duplicate would count
twice) happens once per event_id however often the notification arrives and wherever the
subscriber crashes, and a notification it cannot apply ends in its dead-letter queue with the reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from onceflow.local.faults import dynamodb_transaction_conflicts, dynamodb_transaction_throttled
from tests.subscriber.support import dead_letters, log_outcomes, markers, order_payload, publish, tallies


def _drain(source) -> None:
    source.run_until_empty(max_batches=50, timeout=60)


def test_a_notification_published_three_times_is_applied_once(subscriber_stack, subscriber_source, subscriber_logs):
    payload = order_payload("order-1", amount=42.5)
    for _ in range(3):
        publish(subscriber_stack, payload, event_id="order-1")
    _drain(subscriber_source)

    assert subscriber_source.stats.records == 3  # three deliveries, each its own SQS message id
    tally = tallies(subscriber_stack)["customer-001"]
    assert (tally["event_count"], tally["last_event_id"]) == (1, "order-1")
    assert list(markers(subscriber_stack)) == ["order-1"]
    outcomes = sorted(line["outcome"] for line in log_outcomes(subscriber_logs.getvalue()))
    assert outcomes == ["already_applied", "already_applied", "applied"]
    assert subscriber_source.stats.acknowledged == 3 and dead_letters(subscriber_stack) == []


def _crashing(invoke, where: str, crashes: list[str]):
    """The handler crashes once, before its write or between its write and the acknowledgement."""

    def wrapped(event: dict[str, Any]) -> dict[str, Any]:
        if not crashes:
            crashes.append(where)
            if where == "before write":
                raise RuntimeError("injected crash before the write")
            invoke(event)
            raise RuntimeError("injected crash after the write, before the acknowledgement")
        return invoke(event)

    return wrapped


@pytest.mark.parametrize("where", ["before write", "between write and acknowledgement"])
def test_a_crash_before_or_after_the_write_still_applies_once(subscriber_stack, subscriber_source, where):
    subscriber_source.invoke = _crashing(subscriber_source.invoke, where, crashes := [])
    publish(subscriber_stack, order_payload("order-2", amount=10), event_id="order-2")
    _drain(subscriber_source)

    assert crashes == [where] and subscriber_source.stats.crashed_batches == 1
    assert subscriber_source.stats.records == 2  # delivered again after the crash
    assert tallies(subscriber_stack)["customer-001"]["event_count"] == 1


def test_a_duplicate_after_the_acknowledgement_applies_nothing(subscriber_stack, subscriber_source, subscriber_logs):
    """SQS rarely delivers a deleted message again; the pipeline publishes again after a crash
    between Publish and Mark as sent: the notification arrives after the first was acknowledged."""
    publish(subscriber_stack, order_payload("order-3"), event_id="order-3")
    _drain(subscriber_source)
    publish(subscriber_stack, order_payload("order-3"), event_id="order-3")
    _drain(subscriber_source)

    assert tallies(subscriber_stack)["customer-001"]["event_count"] == 1
    duplicate = log_outcomes(subscriber_logs.getvalue())[-1]
    assert duplicate["outcome"] == "already_applied"
    assert duplicate["applied_by_message"] == markers(subscriber_stack)["order-3"]["message_id"]


def test_another_payload_under_an_applied_event_id_is_dead_lettered(subscriber_stack, subscriber_source):
    publish(subscriber_stack, order_payload("order-4", amount=10), event_id="order-4")
    publish(subscriber_stack, order_payload("order-4", amount=99), event_id="order-4")
    _drain(subscriber_source)

    assert tallies(subscriber_stack)["customer-001"]["event_count"] == 1
    (letter,) = dead_letters(subscriber_stack)
    assert letter.attributes["error"] == "Onceflow.PayloadConflict"
    assert letter.attributes["field"] == "messageAttributes.payload_hash"
    assert letter.attributes["rule"] == "one payload per event_id"
    assert letter.attributes["source"] == "subscriber" and letter.attributes["event_id"] == "order-4"
    assert letter.json["amount"] == 99  # the body as delivered, to fix and move back


def test_notifications_it_cannot_apply_are_dead_lettered_with_the_reason_and_the_rest_applied(
    subscriber_stack, subscriber_source
):
    publish(subscriber_stack, order_payload("no-id"))  # no event_id attribute
    publish(subscriber_stack, "not JSON", event_id="order-5")
    publish(subscriber_stack, {"order_id": "order-6", "amount": 3}, event_id="order-6")  # no customer_id
    publish(subscriber_stack, order_payload("order-7", amount=7), event_id="order-7")
    _drain(subscriber_source)

    letters = {(m.attributes["field"], m.attributes["rule"]): m for m in dead_letters(subscriber_stack)}
    assert set(letters) == {
        ("messageAttributes.event_id", "required"),
        ("body", "JSON object"),
        ("body.customer_id", "tally_key"),
    }
    for letter in letters.values():
        assert letter.attributes["error"] == "Onceflow.InvalidNotification"
        assert letter.attributes["source_message_id"] in letter.attributes["cause"]
    assert letters[("body", "JSON object")].body == "not JSON"
    assert tallies(subscriber_stack)["customer-001"]["event_count"] == 1
    assert list(markers(subscriber_stack)) == ["order-7"]
    assert subscriber_source.stats.reported_failed == 0 and subscriber_source.stats.crashed_batches == 0


def test_a_transaction_conflict_is_tried_again_in_the_same_delivery(subscriber_stack, subscriber_source):
    with dynamodb_transaction_conflicts(times=2, table_contains="SubscriberMarkers") as conflict:
        publish(subscriber_stack, order_payload("order-8"), event_id="order-8")
        _drain(subscriber_source)
    assert conflict.injected == 2
    assert subscriber_source.stats.records == 1 and subscriber_source.stats.reported_failed == 0
    assert tallies(subscriber_stack)["customer-001"]["event_count"] == 1


def test_a_throttled_transaction_reports_the_record_failed_and_sqs_delivers_it_again(
    subscriber_stack, subscriber_source
):
    with dynamodb_transaction_throttled(times=1, table_contains="SubscriberMarkers") as throttled:
        publish(subscriber_stack, order_payload("order-9"), event_id="order-9")
        _drain(subscriber_source)
    assert throttled.injected == 1
    assert subscriber_source.stats.reported_failed == 1 and subscriber_source.stats.records == 2
    assert tallies(subscriber_stack)["customer-001"]["event_count"] == 1
    assert dead_letters(subscriber_stack) == []


def test_a_record_failing_every_delivery_ends_in_the_dead_letter_queue(subscriber_stack, subscriber_source, subscriber):
    """The queue's redrive policy (maxReceiveCount) moves it: nothing is lost."""
    with dynamodb_transaction_throttled(table_contains="SubscriberMarkers") as throttled:
        publish(subscriber_stack, order_payload("order-10"), event_id="order-10")
        _drain(subscriber_source)
    assert throttled.injected == subscriber.event_source.max_receive_count
    (letter,) = dead_letters(subscriber_stack)
    assert letter.attributes["event_id"] == "order-10"  # the notification's own attributes, kept
    assert "customer-001" not in tallies(subscriber_stack)


def test_a_records_log_keys_leave_with_it(subscriber_stack, subscriber_source, subscriber_runtime, subscriber_logs):
    """The last record's message_id and event_id are not left on the logger: the function's later
    lines (and, on the local stack, another function sharing the process's logger) carry none."""
    publish(subscriber_stack, order_payload("order-k"), event_id="order-k")
    _drain(subscriber_source)

    [applied] = log_outcomes(subscriber_logs.getvalue())
    assert applied["event_id"] == "order-k"
    keys = subscriber_runtime.module.logger.get_current_keys()
    assert "event_id" not in keys and "message_id" not in keys, keys

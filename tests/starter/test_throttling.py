"""A valid event Step Functions throttles is never dead-lettered because of it, however long the
throttle lasts: SQS counts every receive of a message (ApproximateReceiveCount) and its redrive
policy moves it to the DLQ past maxReceiveCount, whatever its visibility was changed to
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html).
The starter waits the throttle out inside the invocation and then sends the record again as a new
message (starter/throttling.py), so no receive is spent on throttling.

Throttled calls answer ThrottlingException: https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
"""

from __future__ import annotations

import json

import pytest

from onceflow.local.faults import step_functions_throttling
from onceflow.local.pipeline import LocalPipeline
from onceflow.ops.observe import drain, scan
from starter import executions, throttling
from tests.support import order


@pytest.fixture
def no_waiting(monkeypatch):
    monkeypatch.setattr(executions, "sleep", lambda seconds: None)  # backoff recorded as slept, not slept
    monkeypatch.setattr(throttling, "MAX_DELAY_SECONDS", 0)  # re-queued messages are visible at once


def test_a_record_throttled_for_longer_than_max_receive_count_rounds_spends_no_receive(
    embedded_aws, stack, no_waiting, monkeypatch
):
    """Fails when a throttled record is reported failed (or only has its visibility changed):
    its receive count then climbs and the redrive policy dead-letters a valid event."""
    monkeypatch.setattr(throttling, "MAX_BACKOFF_SECONDS", 30)  # fewer, longer waits per invocation: a cheaper test
    received_counts: list[int] = []
    pipeline = LocalPipeline(embedded_aws, stack)
    starter_invoke = pipeline.event_source.invoke

    def invoke(event):
        received_counts.extend(int(r["attributes"]["ApproximateReceiveCount"]) for r in event["Records"])
        return starter_invoke(event)

    pipeline.event_source.invoke = invoke
    max_receives = pipeline.event_source.settings.max_receive_count
    assert max_receives is not None
    pipeline.send([order("order-throttled")])

    with step_functions_throttling() as throttle:
        for _ in range(max_receives + 2):
            assert pipeline.event_source.poll_once() == 1

    assert throttle.injected > max_receives + 2  # each round waited through several throttled calls
    assert received_counts == [1] * (max_receives + 2)  # every round a fresh message, received once
    assert drain(stack.client("sqs"), stack.dead_letter_queue_url) == []

    pipeline.process()  # the throttle is over: the re-queued message goes through

    rows = scan(stack.client("dynamodb"), stack.business_table)
    assert [row["order_id"] for row in rows] == ["order-throttled"]
    states = scan(stack.client("dynamodb"), stack.processed_events_table)
    assert [s["status"] for s in states] == ["sent"]
    assert drain(stack.client("sqs"), stack.dead_letter_queue_url) == []
    assert pipeline.queue_depth(stack.source_queue_url) == 0


def test_a_throttled_call_waited_out_in_the_invocation_is_one_handover(embedded_aws, stack, no_waiting):
    """A throttle shorter than the invocation costs nothing but time: one execution, no re-queue."""
    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([order("order-brief")])
    with step_functions_throttling(times=4) as throttle:
        pipeline.event_source.poll_once()
    pipeline.process()
    assert throttle.injected == 4
    assert [e.status for e in pipeline.executions()] == ["SUCCEEDED"]
    requeued = [m for m in drain(stack.client("sqs"), stack.source_queue_url)]
    assert requeued == []


def test_a_requeued_record_keeps_its_body_and_attributes_and_counts_its_requeues(embedded_aws, stack):
    sqs = stack.client("sqs")
    record = {
        "body": json.dumps(order("order-kept")),
        "messageAttributes": {"trace": {"stringValue": "t-1", "dataType": "String"}},
    }
    throttling.requeue(sqs, stack.source_queue_url, record)
    [message] = sqs.receive_message(QueueUrl=stack.source_queue_url, MessageAttributeNames=["All"], WaitTimeSeconds=3)[
        "Messages"
    ]
    assert message["Body"] == record["body"]
    assert message["MessageAttributes"]["trace"]["StringValue"] == "t-1"
    assert message["MessageAttributes"][throttling.REQUEUES_ATTRIBUTE]["StringValue"] == "1"


def test_a_throttled_fifo_record_is_held_in_flight_longer_each_receive_up_to_under_sqs_12_hour_maximum():
    """SQS refuses a visibility timeout past 12 hours from the receive
    (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html):
    the hold doubles per receive from 30 min and stops an hour under that, whatever the count."""
    held = [throttling.held_back_seconds(count) for count in range(1, 1001)]
    assert held[:7] == [1_800, 3_600, 7_200, 14_400, 28_800, 39_600, 39_600]
    assert held == sorted(held) and max(held) == throttling.HOLD_MAX_SECONDS < throttling.SQS_MAX_VISIBILITY_SECONDS
    assert throttling.SQS_MAX_VISIBILITY_SECONDS == 12 * 3600
    # With the template's MaxReceiveCount (5), the last receive, where the starter dead-letters a
    # record still throttled with its reason, comes after 7.5 hours of throttling (the first four
    # holds); the redrive policy would have moved it 8 hours later (tests/starter/test_throttle_past_the_limits.py).
    assert sum(held[:4]) == 7.5 * 3600 and held[4] == 8 * 3600
    # An unreadable or missing count is a first receive.
    assert throttling.receive_count_of({"attributes": {}}) == 1
    assert throttling.receive_count_of({"attributes": {"ApproximateReceiveCount": "x"}}) == 1
    assert throttling.receive_count_of({"attributes": {"ApproximateReceiveCount": "4"}}) == 4

"""The emulated event source on a clock of simulated seconds (a benchmark's virtual clock): a record
reported failed becomes visible again once the queue's visibility timeout has passed on that clock,
not before, and its next receive counts (ApproximateReceiveCount), as SQS does
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html)."""

from __future__ import annotations

import json

import pytest

from onceflow.local.event_source import SqsEventSource
from tests.support import order


def test_a_failed_record_is_visible_again_only_when_its_visibility_timeout_has_passed_on_the_clock(stack):
    sqs = stack.client("sqs")
    now = [0.0]
    receive_counts: list[int] = []

    def fail_all(event):
        receive_counts.extend(int(r["attributes"]["ApproximateReceiveCount"]) for r in event["Records"])
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"]]}

    source = SqsEventSource(sqs, stack.source_queue_url, stack.event_source, fail_all, clock=lambda: now[0])
    timeout = stack.event_source.visibility_timeout
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-held")))

    assert source.poll_once() == 1
    now[0] = timeout - 1
    assert source.poll_once() == 0  # still invisible, however much real time passed
    now[0] = timeout
    assert source.poll_once() == 1
    assert receive_counts == [1, 2]
    sqs.purge_queue(QueueUrl=stack.source_queue_url)


@pytest.mark.embedded_only(reason="the event source reads the visibility change the embedded SQS noted")
def test_a_visibility_timeout_the_function_set_on_its_record_is_the_one_that_runs_out(stack):
    """Lambda leaves a failed record's visibility as it is: it reappears when its visibility timeout
    runs out (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html), and a
    function may change that timeout with the record's receipt handle, counted from its call
    (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html).
    Fails if the event source resets it to the queue's."""
    sqs = stack.client("sqs")
    now = [0.0]
    timeout = stack.event_source.visibility_timeout
    held_for = timeout * 3
    seen: list[float] = []

    def hold_and_fail(event):
        seen.append(now[0])
        if len(seen) > 1:
            return {"batchItemFailures": []}  # handled this time: deleted
        for record in event["Records"]:
            sqs.change_message_visibility(
                QueueUrl=stack.source_queue_url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=held_for
            )
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"]]}

    source = SqsEventSource(sqs, stack.source_queue_url, stack.event_source, hold_and_fail, clock=lambda: now[0])
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-held-longer")))

    assert source.poll_once() == 1
    now[0] = timeout
    assert source.poll_once() == 0  # the queue's timeout has passed, the function's has not
    now[0] = held_for
    assert source.poll_once() == 1
    assert seen == [0.0, held_for]

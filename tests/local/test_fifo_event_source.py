"""The embedded SQS FIFO queue and the emulated event source, checked against AWS's documented
behaviour (not against themselves):

- SQS FIFO delivery logic
  (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html):
  messages of a group are returned in the order sent; "when you receive a message with a message
  group ID, no more messages for the same message group ID are returned unless you delete the
  message or it becomes visible".
- Deduplication
  (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html):
  a message sent with a deduplication id already sent in the last five minutes is accepted and not
  delivered, even after the first was received and deleted.
- Lambda with a FIFO queue (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
  and services-sqs-errorhandling.html): Lambda sends one batch at a time per message group; when a
  record fails, the group's messages are retried before Lambda receives more of the same group;
  the redrive policy moves a message that was received maxReceiveCount times to the dead-letter
  queue, which for a FIFO queue is FIFO and keeps the message's group
  (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from onceflow.engine import EmbeddedAws
from onceflow.local.event_source import SqsEventSource
from onceflow.local.function_runtime import StarterRuntime
from onceflow.local.stack import LocalStack
from onceflow.ops.observe import scan
from tests.conftest import fresh_stack
from tests.support import order


@pytest.fixture
def fifo_stack(request: pytest.FixtureRequest, embedded_aws: EmbeddedAws) -> LocalStack:
    return fresh_stack(embedded_aws, request.getfixturevalue("_deployed"), mode="FIFO")


@pytest.fixture
def starter(fifo_stack: LocalStack, starter_polls_wait_on_the_engine: None) -> StarterRuntime:
    return StarterRuntime(fifo_stack)


def send(stack: LocalStack, *messages: tuple[str, str], dedup: str | None = None) -> None:
    """(event_id, group) pairs, in this order, one request each."""
    sqs = stack.client("sqs")
    for event_id, group in messages:
        sqs.send_message(
            QueueUrl=stack.source_queue_url,
            MessageBody=json.dumps(order(event_id)),
            MessageGroupId=group,
            MessageDeduplicationId=dedup or event_id,
        )


def receive(stack: LocalStack, count: int = 10) -> list[dict[str, Any]]:
    return (
        stack.client("sqs")
        .receive_message(
            QueueUrl=stack.source_queue_url, MaxNumberOfMessages=count, AttributeNames=["All"], VisibilityTimeout=600
        )
        .get("Messages", [])
    )


def event_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [json.loads(m["Body"])["order_id"] for m in messages]


def test_a_group_is_blocked_while_one_of_its_messages_is_in_flight(fifo_stack):
    send(fifo_stack, ("a-1", "A"), ("a-2", "A"), ("b-1", "B"))
    sqs = fifo_stack.client("sqs")

    [first] = receive(fifo_stack, count=1)
    assert event_ids([first]) == ["a-1"]
    assert event_ids(receive(fifo_stack)) == ["b-1"], "a-2 is held back while a-1 is in flight"
    assert receive(fifo_stack) == []

    sqs.delete_message(QueueUrl=fifo_stack.source_queue_url, ReceiptHandle=first["ReceiptHandle"])
    assert event_ids(receive(fifo_stack)) == ["a-2"]


def test_a_message_made_visible_again_comes_back_before_the_rest_of_its_group(fifo_stack):
    send(fifo_stack, ("a-1", "A"), ("a-2", "A"))
    sqs = fifo_stack.client("sqs")
    [first] = receive(fifo_stack, count=1)

    sqs.change_message_visibility(
        QueueUrl=fifo_stack.source_queue_url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0
    )

    again = receive(fifo_stack)
    assert event_ids(again) == ["a-1", "a-2"]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert again[0]["Attributes"]["MessageGroupId"] == "A"


def test_a_resend_within_five_minutes_is_not_delivered_even_after_the_first_was_deleted(fifo_stack):
    """moto compared only with messages still queued (onceflow/engine/sqs/fifo.py)."""
    send(fifo_stack, ("d-1", "D"), dedup="same-id")
    [first] = receive(fifo_stack)
    fifo_stack.client("sqs").delete_message(QueueUrl=fifo_stack.source_queue_url, ReceiptHandle=first["ReceiptHandle"])

    send(fifo_stack, ("d-1", "D"), dedup="same-id")  # accepted ...

    assert receive(fifo_stack) == []  # ... and not delivered
    send(fifo_stack, ("d-1", "D"), dedup="fresh-id")
    assert event_ids(receive(fifo_stack)) == ["d-1"], "a fresh deduplication id is a new message"


def test_two_pollers_never_hold_batches_of_one_group_at_once_and_each_group_keeps_its_order(fifo_stack, starter):
    groups = {"A": 3, "B": 3, "C": 2}
    send(fifo_stack, *[(f"{g.lower()}-{n}", g) for n in range(1, 4) for g in groups if n <= groups[g]])
    in_flight: list[set[str]] = []
    overlaps: list[tuple[set[str], set[str]]] = []
    delivered: dict[str, list[str]] = {}
    lock = threading.Lock()
    second_batch_arrived = threading.Event()

    def invoke(event: dict[str, Any]) -> dict[str, Any]:
        batch_groups = {r["attributes"]["MessageGroupId"] for r in event["Records"]}
        with lock:
            overlaps.extend((batch_groups, other) for other in in_flight)
            in_flight.append(batch_groups)
            for r in event["Records"]:
                delivered.setdefault(r["attributes"]["MessageGroupId"], []).append(json.loads(r["body"])["order_id"])
            first = len(in_flight) == 1 and not second_batch_arrived.is_set()
            if not first:
                second_batch_arrived.set()
        if first:  # hold the first batch (bounded) until another poller brought its own
            second_batch_arrived.wait(timeout=10)
        try:
            return starter.invoke(event)
        finally:
            with lock:
                in_flight.remove(batch_groups)

    settings = dataclasses.replace(fifo_stack.event_source, batch_size=2)
    source = SqsEventSource(fifo_stack.client("sqs"), fifo_stack.source_queue_url, settings, invoke)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for _ in range(10):
            if sum(pool.map(lambda _: source.poll_once(), range(2))) == 0:
                break

    assert overlaps, "two batches were in flight at once (the first was held until the second came)"
    assert all(not (mine & other) for mine, other in overlaps), overlaps
    assert delivered == {g: [f"{g.lower()}-{n}" for n in range(1, count + 1)] for g, count in groups.items()}
    assert source.stats.acknowledged == sum(groups.values())


def test_a_failing_message_holds_its_group_back_and_takes_the_records_received_with_it_to_the_dlq(
    fifo_stack, starter, monkeypatch
):
    """a-2 always fails. The starter reports it and a-3 (received in the same batches, held back)
    failed each time, so both are received as often and the redrive policy moves both after
    maxReceiveCount receives, in order, into the FIFO dead-letter queue with their group. a-4, sent
    later, was received once fewer: it runs after them. Group B goes on meanwhile."""
    real_start = starter.module.start_execution
    attempts: list[str] = []

    def start_failing_a2(sfn: Any, arn: str, event: Any, *rest: Any) -> Any:
        attempts.append(event.event_id)
        if event.event_id == "a-2":
            raise sfn.exceptions.ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "injected"}}, "Start")
        return real_start(sfn, arn, event, *rest)

    monkeypatch.setattr(starter.module, "start_execution", start_failing_a2)
    send(fifo_stack, ("a-1", "A"), ("a-2", "A"), ("b-1", "B"), ("a-3", "A"), ("b-2", "B"))
    source = SqsEventSource(
        fifo_stack.client("sqs"), fifo_stack.source_queue_url, fifo_stack.event_source, starter.invoke
    )
    source.poll_once()
    send(fifo_stack, ("a-4", "A"))

    source.run_until_empty(max_batches=50)

    max_receives = fifo_stack.event_source.max_receive_count
    assert attempts.count("a-2") == max_receives, "one attempt per receive, then the redrive policy moved it"
    assert "a-3" not in attempts, "held back behind a-2 every time"
    assert attempts.index("a-4") > max(i for i, e in enumerate(attempts) if e == "a-2"), "a-4 never overtook a-2"
    assert [e for e in attempts if e.startswith("b")] == ["b-1", "b-2"]
    rows = {row["order_id"] for row in scan(fifo_stack.client("dynamodb"), fifo_stack.business_table)}
    assert rows == {"a-1", "a-4", "b-1", "b-2"}
    letters = fifo_stack.client("sqs").receive_message(
        QueueUrl=fifo_stack.dead_letter_queue_url, AttributeNames=["All"], MaxNumberOfMessages=10
    )["Messages"]
    assert event_ids(letters) == ["a-2", "a-3"]
    assert {letter["Attributes"]["MessageGroupId"] for letter in letters} == {"A"}

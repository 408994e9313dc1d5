"""Guarantee (R5 carried to the subscriber): on a FIFO queue a failed record holds the rest of its
message group back, and the group is applied in order afterwards.

With an SNS FIFO topic (NotificationTopicType=FIFO) the subscriber's queue is FIFO, and each group's
notifications arrive in the order of the group's events (docs/SUBSCRIBERS.md, "SNS FIFO topic").
Lambda's rule for a FIFO source with partial batch responses is to stop at a group's first failure
and report it and every later record of that group failed
(https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html, "Implementing partial
batch responses"): a record the function reports as processed is deleted, so a later record applied
while an earlier one failed is applied ahead of it for good. The building block does this with
Powertools' SqsFifoPartialProcessor; the standard BatchProcessor would apply the later records.

A notification's transaction is throttled once (counted), so that record fails and SQS delivers it
again; the other group of the same batch goes on.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from moto.dynamodb.exceptions import TransactionCanceledException
from moto.dynamodb.models import DynamoDBBackend

from onceflow.local.event_source import Invoke, SqsEventSource
from onceflow.local.faults import THROTTLING_ERROR, inject
from onceflow.local.function_runtime import FunctionRuntime
from onceflow.local.stack import LocalStack
from tests.conftest import fresh_stack
from tests.subscriber.support import dead_letters, log_outcomes, markers, order_payload

FIFO_TOPIC = {"DeploySubscriber": "true", "NotificationTopicType": "FIFO"}
HELD_GROUP = ["order-a1", "order-a2", "order-a3"]  # customer-a's events, in the order they happened
OTHER_GROUP = ["order-b1"]


@pytest.fixture
def fifo_topic_stack(request: pytest.FixtureRequest) -> LocalStack:
    """Shares its deployment with tests/subscriber/test_sns_fifo.py (same key and parameters)."""
    return fresh_stack(
        request.getfixturevalue("embedded_aws"),
        request.getfixturevalue("_deployed"),
        "fifo-topic",
        parameters=FIFO_TOPIC,
    )


@pytest.fixture
def logs() -> io.StringIO:
    return io.StringIO()


@dataclass
class Batches:
    """What each invocation of the subscriber was handed and what it reported failed (by event_id)."""

    handed: list[list[str]] = field(default_factory=list)
    failed: list[list[str]] = field(default_factory=list)

    def recording(self, invoke: Invoke) -> Invoke:
        def invoke_and_record(event: dict[str, Any]) -> dict[str, Any]:
            by_message = {r["messageId"]: r["messageAttributes"]["event_id"]["stringValue"] for r in event["Records"]}
            self.handed.append(list(by_message.values()))
            response = invoke(event)
            self.failed.append([by_message[f["itemIdentifier"]] for f in response.get("batchItemFailures", [])])
            return response

        return invoke_and_record


@pytest.fixture
def subscriber(fifo_topic_stack: LocalStack, logs: io.StringIO) -> tuple[SqsEventSource, Batches]:
    (function,) = fifo_topic_stack.subscribers
    assert function.queue_url is not None and function.queue_url.endswith(".fifo")
    assert function.event_source is not None and function.event_source.batch_size >= 4  # one batch holds them all
    runtime = FunctionRuntime(fifo_topic_stack, function.logical_id, log_stream=logs)
    batches = Batches()
    source = SqsEventSource(
        fifo_topic_stack.client("sqs"), function.queue_url, function.event_source, batches.recording(runtime.invoke)
    )
    return source, batches


def _publish_in_group(stack: LocalStack, event_id: str, group: str) -> None:
    """As `Publish notification` publishes to a FIFO topic: the event's group, deduplicated by event_id."""
    message = json.dumps(order_payload(event_id, customer_id=group))
    stack.client("sns").publish(
        TopicArn=stack.notification_topic_arn,
        Message=message,
        MessageAttributes={
            "event_id": {"DataType": "String", "StringValue": event_id},
            "payload_hash": {"DataType": "String", "StringValue": f"hash-of-{event_id}"},
        },
        MessageGroupId=group,
        MessageDeduplicationId=event_id,
    )


def _writes_marker_of(event_id: str, transact_items: list[dict[str, Any]]) -> bool:
    return any(
        action.get("Put", {}).get("Item", {}).get("event_id", {}).get("S") == event_id
        and "SubscriberMarkers" in action["Put"]["TableName"]
        for action in transact_items
    )


def _throttled_once(event_id: str) -> Any:
    """The transaction that applies `event_id` is cancelled once with ThrottlingError, as DynamoDB
    cancels a throttled transaction; nothing is written and the building block reports it failed."""
    return inject(
        DynamoDBBackend,
        "transact_write_items",
        lambda: TransactionCanceledException([(*THROTTLING_ERROR, None), (None, None, None)]),
        times=1,
        applies=lambda transact_items, *args, **kwargs: _writes_marker_of(event_id, transact_items),
        name=f"dynamodb.transact_write_items:ThrottlingError:{event_id}",
    )


def test_a_failed_record_holds_the_rest_of_its_group_back_and_the_group_applies_in_order_after_it(
    fifo_topic_stack, subscriber, logs
):
    source, batches = subscriber
    first, *later = HELD_GROUP
    for event_id in (first, *OTHER_GROUP, *later):
        _publish_in_group(fifo_topic_stack, event_id, "customer-a" if event_id in HELD_GROUP else "customer-b")

    with _throttled_once(first) as throttled:
        source.run_until_empty(max_batches=10, timeout=60)

    assert throttled.injected == 1, "the group's first record really failed once"
    assert sorted(batches.handed[0]) == sorted(HELD_GROUP + OTHER_GROUP), "one batch held both groups"
    applied = [line["event_id"] for line in log_outcomes(logs.getvalue()) if line["outcome"] == "applied"]
    assert [e for e in applied if e in HELD_GROUP] == HELD_GROUP, f"the group applied out of order: {applied}"
    assert batches.failed[0] == HELD_GROUP, "the failed record and the rest of its group, in order, held back"
    assert applied.index(OTHER_GROUP[0]) < applied.index(first), "the other group did not wait for this one"
    assert batches.handed[1:] == [HELD_GROUP] and batches.failed[1:] == [[]], "delivered again, in order, applied"
    assert sorted(markers(fifo_topic_stack)) == sorted(HELD_GROUP + OTHER_GROUP)
    assert source.stats.reported_failed == len(HELD_GROUP) and dead_letters(fifo_topic_stack) == []

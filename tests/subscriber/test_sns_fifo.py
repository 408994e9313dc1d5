"""NotificationTopicType=FIFO: an SNS FIFO topic whose notifications carry MessageDeduplicationId
SHA-256(event_id), so SNS drops a duplicate published within 5 minutes; the standard topic's
definition stays the ASL file's.

The embedded SNS follows AWS here (onceflow/engine/sns/fifo.py):
https://docs.aws.amazon.com/sns/latest/dg/fifo-message-dedup.html (a duplicate within the
5-minute interval is "accepted successfully but not delivered") and
https://docs.aws.amazon.com/sns/latest/dg/fifo-message-delivery.html (SQS subscribers only).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models import DynamoDBBackend

from onceflow.local.event_source import SqsEventSource
from onceflow.local.faults import inject
from onceflow.local.function_runtime import FunctionRuntime
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import render_definition
from onceflow.ops.observe import drain, topic_may_send
from onceflow.ops.redrive import redrive
from tests.conftest import fresh_stack
from tests.orders import make_orders
from tests.static.test_template_parameters import refused
from tests.static.test_template_parameters import template as template
from tests.subscriber.support import log_outcomes, tallies

FIFO_PARAMETERS = {"DeploySubscriber": "true", "NotificationTopicType": "FIFO"}


@pytest.fixture
def fifo_stack(request):
    return fresh_stack(
        request.getfixturevalue("embedded_aws"),
        request.getfixturevalue("_deployed"),
        "fifo-topic",
        parameters=FIFO_PARAMETERS,
    )


def test_the_standard_topic_runs_the_asl_file_as_written(stack):
    """The FIFO fields ride in the NotificationTopicArn placeholder only when the topic is FIFO."""
    assert stack.substitutions["NotificationTopicArn"] == stack.notification_topic_arn
    definition = json.loads(render_definition(stack.definition_path, stack.substitutions))
    assert set(definition["States"]["Publish notification"]["Parameters"]) == {
        "TopicArn",
        "Message.$",
        "MessageAttributes",
    }


def _fifo_topic_with_a_standard_queue(stack) -> tuple[str, str]:
    sns, sqs = stack.client("sns"), stack.client("sqs")
    topic = sns.create_topic(Name="conformance.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    queue = sqs.create_queue(QueueName="conformance-reader")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    # SNS delivers only to a queue whose policy admits the topic (enforced locally too: docs/IAM.md).
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={"Policy": topic_may_send(topic, arn)})
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
    return topic, queue


def test_a_fifo_topic_delivers_a_deduplication_id_once_within_the_interval(fifo_stack):
    sns = fifo_stack.client("sns")
    topic, queue = _fifo_topic_with_a_standard_queue(fifo_stack)
    for body, dedup in (("a", "d-1"), ("a again", "d-1"), ("b", "d-2")):
        response = sns.publish(TopicArn=topic, Message=body, MessageGroupId="g", MessageDeduplicationId=dedup)
        assert response["MessageId"]  # accepted, duplicate or not
    assert sorted(m.body for m in drain(fifo_stack.client("sqs"), queue)) == ["a", "b"]


def test_a_fifo_topic_refuses_an_email_subscription(fifo_stack):
    topic, _ = _fifo_topic_with_a_standard_queue(fifo_stack)
    with pytest.raises(ClientError) as refused_error:
        fifo_stack.client("sns").subscribe(TopicArn=topic, Protocol="email", Endpoint="ops@example.com")
    assert refused_error.value.response["Error"]["Code"] == "InvalidParameter"


def test_the_template_refuses_an_email_subscriber_on_a_fifo_topic(template):
    assert refused(template, NotificationTopicType="FIFO", NotificationEmail="ops@example.com") != []
    assert refused(template, NotificationTopicType="FIFO") == []
    assert refused(template, NotificationEmail="ops@example.com") == []


def test_republished_notifications_reach_the_subscriber_once(embedded_aws, fifo_stack, request):
    """Mark as sent fails after Publish for 3 events; their redrive publishes again, within 5
    minutes: SNS drops each second publish, so the subscriber sees one notification per event."""
    orders = make_orders(8, random.Random(5))
    logs = request.getfixturevalue("subscriber_logs")
    pipeline = LocalPipeline(embedded_aws, fifo_stack, log_stream=logs)
    with inject(
        DynamoDBBackend,
        "update_item",
        lambda: RuntimeError("injected: Mark as sent failed"),
        times=3,
        applies=lambda *a, **k: "ProcessedEvents" in str(a[0] if a else k.get("table_name")),
    ) as failures:
        pipeline.send([json.dumps(o) for o in orders])
        pipeline.process(timeout=120)
    assert failures.injected == 3
    sqs = fifo_stack.client("sqs")
    assert redrive(sqs, fifo_stack.dead_letter_queue_url, fifo_stack.source_queue_url, False, None).moved == 3
    pipeline.process(timeout=120)

    sfn = fifo_stack.client("stepfunctions")
    published = [
        json.loads(event["taskScheduledEventDetails"]["parameters"])
        for execution in sfn.list_executions(stateMachineArn=fifo_stack.state_machine_arn)["executions"]
        for event in sfn.get_execution_history(executionArn=execution["executionArn"])["events"]
        if event["type"] == "TaskScheduled" and event["taskScheduledEventDetails"]["resourceType"] == "sns"
    ]
    assert len(published) == len(orders) + 3  # the 3 events really were published twice
    for parameters in published:
        event_id = parameters["MessageAttributes"]["event_id"]["StringValue"]
        assert parameters["MessageDeduplicationId"] == hashlib.sha256(event_id.encode()).hexdigest()
    assert Counter(m.attributes["event_id"] for m in pipeline.inbox.received) == Counter(o["order_id"] for o in orders)
    assert [line["outcome"] for line in log_outcomes(logs.getvalue())] == ["applied"] * len(orders)
    assert sum(a["event_count"] for a in tallies(fifo_stack).values()) == len(orders)


def test_with_a_fifo_source_the_group_is_the_source_messages_and_subscribers_get_its_order(embedded_aws, request):
    """SourceQueueType=FIFO: MessageGroupId is the source message's group, so the subscriber's FIFO
    queue hands each group's notifications over in the order of the group's messages."""
    stack = fresh_stack(
        embedded_aws,
        request.getfixturevalue("_deployed"),
        "fifo-source-fifo-topic",
        parameters={**FIFO_PARAMETERS, "SourceQueueType": "FIFO", "MaximumBatchingWindowInSeconds": "0"},
    )
    logs = request.getfixturevalue("subscriber_logs")
    pipeline = LocalPipeline(embedded_aws, stack, log_stream=logs)
    orders = make_orders(6, random.Random(9))
    group_of = {o["order_id"]: ("group-a" if i % 2 == 0 else "group-b") for i, o in enumerate(orders)}
    sqs = stack.client("sqs")
    for order in orders:
        sqs.send_message(
            QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order), MessageGroupId=group_of[order["order_id"]]
        )
    pipeline.process(timeout=120)

    sfn = stack.client("stepfunctions")
    groups = {
        json.loads(e["taskScheduledEventDetails"]["parameters"])["MessageAttributes"]["event_id"][
            "StringValue"
        ]: json.loads(e["taskScheduledEventDetails"]["parameters"])["MessageGroupId"]
        for x in sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
        for e in sfn.get_execution_history(executionArn=x["executionArn"])["events"]
        if e["type"] == "TaskScheduled" and e["taskScheduledEventDetails"]["resourceType"] == "sns"
    }
    assert groups == group_of
    applied = [line["event_id"] for line in log_outcomes(logs.getvalue()) if line["outcome"] == "applied"]
    for group in ("group-a", "group-b"):
        sent = [o["order_id"] for o in orders if group_of[o["order_id"]] == group]
        assert [event_id for event_id in applied if group_of[event_id] == group] == sent


def test_a_notification_the_fifo_subscriber_cannot_apply_reaches_its_fifo_dead_letter_queue(fifo_stack):
    (function,) = fifo_stack.subscribers
    runtime = FunctionRuntime(fifo_stack, function.logical_id)
    source = SqsEventSource(fifo_stack.client("sqs"), function.queue_url, function.event_source, runtime.invoke)
    fifo_stack.client("sns").publish(
        TopicArn=fifo_stack.notification_topic_arn,
        Message=json.dumps({"order_id": "order-x", "amount": 3}),  # no customer_id
        MessageAttributes={
            "event_id": {"DataType": "String", "StringValue": "order-x"},
            "payload_hash": {"DataType": "String", "StringValue": "h"},
        },
        MessageGroupId="group-x",
        MessageDeduplicationId="order-x",
    )
    source.run_until_empty(max_batches=10, timeout=60)
    dead_letter_url = function.environment["SUBSCRIBER_DEAD_LETTER_QUEUE_URL"]
    assert dead_letter_url.endswith(".fifo")
    (letter,) = drain(fifo_stack.client("sqs"), dead_letter_url)
    assert (letter.attributes["error"], letter.attributes["field"]) == (
        "Onceflow.InvalidNotification",
        "body.customer_id",
    )
    assert source.stats.reported_failed == 0

"""Test helpers: orders, SQS records in the Lambda event shape, execution input as the starter builds it."""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult, wait_for
from onceflow.ops.observe import QueuedMessage, drain, scan, topic_may_send


def order(order_id: str = "order-1", amount: str | float = 42.5, **extra: Any) -> dict[str, Any]:
    return {"order_id": order_id, "customer_id": "customer-7", "amount": amount, "currency": "EUR", **extra}


def sqs_record(body: Any, message_id: str | None = None, sent_timestamp: int = 1_790_000_000_000) -> dict[str, Any]:
    """An SQS record as Lambda delivers it (body serialised unless already a string)."""
    text = body if isinstance(body, str) else json.dumps(body)
    return {
        "messageId": message_id or str(uuid.uuid4()),
        "receiptHandle": "handle-" + str(uuid.uuid4()),
        "body": text,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": str(sent_timestamp),
            "SenderId": "AIDAEXAMPLE",
            "ApproximateFirstReceiveTimestamp": str(sent_timestamp + 5),
        },
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:source",
        "awsRegion": "us-east-1",
    }


def sqs_event(*records: dict[str, Any]) -> dict[str, Any]:
    return {"Records": list(records)}


def execution_input(body: Any, message_id: str = "message-1") -> str:
    """The input the real starter builds for this body (its own parser, default settings)."""
    from starter.formats import FORMATS
    from starter.messages import parse_record
    from starter.settings import Settings

    settings = Settings("arn:unused", "https://unused", FORMATS["json"], "order_id", 35)
    return parse_record(sqs_record(body, message_id=message_id), settings).execution_input


def run_execution(
    stack: LocalStack, body: Any, name: str, message_id: str | None = None, timeout: float = 30
) -> ExecutionResult:
    """Start the real state machine with the starter's input for `body`, wait (bounded), return the result."""
    sfn = stack.client("stepfunctions")
    arn = sfn.start_execution(
        stateMachineArn=stack.state_machine_arn, name=name, input=execution_input(body, message_id or name)
    )["executionArn"]
    return wait_for(sfn, arn, timeout=timeout)


def state_rows(stack: LocalStack) -> list[dict[str, Any]]:
    return scan(stack.client("dynamodb"), stack.processed_events_table)


def order_rows(stack: LocalStack) -> list[dict[str, Any]]:
    return scan(stack.client("dynamodb"), stack.business_table)


def dead_letters(stack: LocalStack) -> list[QueuedMessage]:
    return drain(stack.client("sqs"), stack.dead_letter_queue_url)


@dataclass
class RetryHold:
    """Holds the first Retry delay of any execution until released (bounded waits only): put its
    `sleep` in place of the embedded AWS clock's, and the test can act between an execution's
    failed attempt and its retry (e.g. stop it)."""

    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def sleep(self, seconds: float) -> None:  # stands in for the engine's retry sleep
        self.reached.set()
        self.released.wait(timeout=10)

    def wait_until_reached(self, timeout: float = 10) -> None:
        assert self.reached.wait(timeout), f"no execution reached a retry within {timeout}s"


def sqs_subscribed_topic(stack: LocalStack, name: str) -> tuple[str, str]:
    """A new topic with a new SQS queue subscribed to it (envelopes, not raw delivery): (topic ARN, queue URL)."""
    sns, sqs = stack.client("sns"), stack.client("sqs")
    topic = sns.create_topic(Name=name)["TopicArn"]
    queue = sqs.create_queue(QueueName=name)["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    # SNS delivers only to a queue whose policy admits the topic (the embedded AWS enforces it as AWS does).
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={"Policy": topic_may_send(topic, queue_arn)})
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    return topic, queue

"""Tests against a deployed stack, found as SAM's templates do: AWS_SAM_STACK_NAME and its outputs.

    sam build && sam deploy --config-env it    # stack "onceflow-it" (samconfig.toml), not production
    AWS_SAM_STACK_NAME=onceflow-it pytest -m integration tests/integration

They use real SQS, Lambda, Step Functions, DynamoDB, SNS and EventBridge, wait by polling with
bounded timeouts, and clean up what they create. Without AWS_SAM_STACK_NAME every test is
skipped (reported as skipped, never as passed).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from onceflow.ops.executions import PollTimeout, poll_until

STACK_VARIABLE = "AWS_SAM_STACK_NAME"


def eventually(check: Callable[[], Any], timeout: float, what: str, interval: float = 2.0) -> Any:
    """Poll `check` until it returns something truthy; fail with `what` after `timeout` seconds."""
    try:
        return poll_until(check, timeout, what, interval=interval)
    except PollTimeout as timed_out:
        pytest.fail(str(timed_out))


@dataclass
class DeployedStack:
    name: str
    outputs: dict[str, str]
    parameters: dict[str, str]
    _clients: dict[str, Any] = field(default_factory=dict)

    def client(self, service: str) -> Any:
        import boto3

        if service not in self._clients:
            self._clients[service] = boto3.client(service)
        return self._clients[service]

    def record(self, event_id: str) -> dict[str, Any] | None:
        item = self.client("dynamodb").get_item(
            TableName=self.outputs["ProcessedEventsTableName"],
            Key={"event_id": {"S": event_id}},
            ConsistentRead=True,
        )
        return item.get("Item")

    def business_rows(self, order_id: str) -> int:
        response = self.client("dynamodb").query(
            TableName=self.outputs["BusinessTableName"],
            KeyConditionExpression="order_id = :id",
            ExpressionAttributeValues={":id": {"S": order_id}},
            ConsistentRead=True,
        )
        return int(response["Count"])

    def send(self, body: str) -> str:
        sqs = self.client("sqs")
        return sqs.send_message(QueueUrl=self.outputs["SourceQueueUrl"], MessageBody=body)["MessageId"]

    def wait_until_sent(self, event_id: str, timeout: float = 180) -> dict[str, Any]:
        def sent() -> dict[str, Any] | None:
            record = self.record(event_id)
            return record if record and record["status"]["S"] == "sent" else None

        return eventually(sent, timeout, f"event {event_id} to be marked sent")

    def dead_letters(self, predicate: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Dead letters matching `predicate`, left in the queue (visible again at once)."""
        sqs, found = self.client("sqs"), {}
        for _ in range(5):
            response = sqs.receive_message(
                QueueUrl=self.outputs["DeadLetterQueueUrl"],
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                VisibilityTimeout=0,
                WaitTimeSeconds=1,
            )
            for message in response.get("Messages", []):
                if predicate(message):
                    found[message["MessageId"]] = message
        return list(found.values())

    def remove_dead_letters(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60) -> int:
        """Delete this test's own dead letters (never anything else)."""
        sqs, removed = self.client("sqs"), 0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            response = sqs.receive_message(
                QueueUrl=self.outputs["DeadLetterQueueUrl"],
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                VisibilityTimeout=5,
                WaitTimeSeconds=1,
            )
            messages = response.get("Messages", [])
            if not messages:
                return removed
            for message in messages:
                if predicate(message):
                    sqs.delete_message(
                        QueueUrl=self.outputs["DeadLetterQueueUrl"], ReceiptHandle=message["ReceiptHandle"]
                    )
                    removed += 1
                else:
                    sqs.change_message_visibility(
                        QueueUrl=self.outputs["DeadLetterQueueUrl"],
                        ReceiptHandle=message["ReceiptHandle"],
                        VisibilityTimeout=0,
                    )
        return removed


@pytest.fixture(scope="session")
def deployed() -> DeployedStack:
    name = os.environ.get(STACK_VARIABLE)
    if not name:
        pytest.skip(
            f"{STACK_VARIABLE} is not set: these tests need a deployed stack "
            "(sam deploy --config-env it, then AWS_SAM_STACK_NAME=onceflow-it)"
        )
    import boto3

    described = boto3.client("cloudformation").describe_stacks(StackName=name)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    parameters = {p["ParameterKey"]: p.get("ParameterValue", "") for p in described.get("Parameters", [])}
    if parameters.get("EventFormat", "json") != "json" or parameters.get("EventIdPath"):
        pytest.skip("these tests send plain JSON orders: deploy the test stack with EventFormat=json")
    return DeployedStack(name, outputs, parameters)


@pytest.fixture
def run_id() -> str:
    return f"it-{uuid.uuid4().hex[:12]}"


@dataclass
class Inbox:
    """A temporary SQS queue subscribed to the notification topic (raw delivery)."""

    stack: DeployedStack
    queue_url: str
    subscription_arn: str
    received: list[dict[str, Any]] = field(default_factory=list)

    def count(self, event_id: str, timeout: float = 60) -> int:
        """Notifications for `event_id` seen so far, waiting up to `timeout` for the first one."""
        deadline = time.monotonic() + timeout
        sqs = self.stack.client("sqs")
        while True:
            response = sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], WaitTimeSeconds=2
            )
            for message in response.get("Messages", []):
                self.received.append(message)
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
            seen = sum(
                1
                for m in self.received
                if m.get("MessageAttributes", {}).get("event_id", {}).get("StringValue") == event_id
            )
            if (seen and not response.get("Messages")) or time.monotonic() > deadline:
                return seen


@pytest.fixture(scope="session")
def inbox(deployed: DeployedStack) -> Iterator[Inbox]:
    sqs, sns = deployed.client("sqs"), deployed.client("sns")
    topic_arn = deployed.outputs["NotificationTopicArn"]
    queue_url = sqs.create_queue(
        QueueName=f"{deployed.name}-it-inbox-{uuid.uuid4().hex[:8]}"[:80],
        Attributes={"SqsManagedSseEnabled": "true"},
    )["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": topic_arn}},
            }
        ],
    }
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"Policy": json.dumps(policy)})
    subscription = sns.subscribe(
        TopicArn=topic_arn,
        Protocol="sqs",
        Endpoint=queue_arn,
        Attributes={"RawMessageDelivery": "true"},
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]
    try:
        yield Inbox(deployed, queue_url, subscription)
    finally:
        sns.unsubscribe(SubscriptionArn=subscription)
        sqs.delete_queue(QueueUrl=queue_url)

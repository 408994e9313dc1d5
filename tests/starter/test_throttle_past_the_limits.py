# ruff: noqa: F811 (the FIFO fixtures of test_fifo.py, imported, are the tests' parameters)
"""The bad day that does not end (issue 30, item 5): throttling past every limit, on a clock that gets there.

A standard source: the starter's time budget holds with the SDK's own retries counted. botocore's
standard retry mode retries a throttled StartExecution by itself, sleeping rand(0, 1) x min(2^i, 20) s
before each retry (botocore/retries/standard.py); those sleeps are botocore's real decisions here,
spent on the test's clock instead of the wall's (`botocore.endpoint.time.sleep`, the one place it
sleeps), as are the starter's own waits. The Lambda context counts down on the same clock, as
Lambda's does. Before issue 30 each record made its first call whatever was left, and the SDK's
sleeps were not counted: ten throttled records took 39.6 s of a 30 s function.

A FIFO source: a group Step Functions throttles for a day is held in flight longer each receive and,
on its last receive (the queue's maxReceiveCount), dead-lettered by the starter with its reason,
in order, before SQS's redrive policy could move it with none (R1: a dead letter carries its reason).
"""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

import botocore.endpoint
import pytest

from onceflow.local.faults import step_functions_throttling
from onceflow.local.function_runtime import StarterRuntime
from onceflow.ops.redrive import redrive
from starter import executions, throttling
from tests.starter.helpers import log_lines, metric_totals
from tests.starter.test_fifo import (  # noqa: F401 (fixtures: the FIFO stack of each workflow type, its starter)
    ThrottledGroup,
    fifo_stack,
    logs,
    rows,
    starter,
    workflow_type,
)
from tests.support import order


class Clock:
    """Seconds that pass only when something waits: the starter, the SDK's retries."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sdk_sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def sdk_sleep(self, seconds: float) -> None:
        self.sdk_sleeps.append(seconds)
        self.now += seconds


class CountingDown:
    """A Lambda context whose remaining time runs down on `clock`, as Lambda's does on the wall's."""

    def __init__(self, clock: Clock, timeout_seconds: int):
        self.clock, self.deadline = clock, clock.now + timeout_seconds
        self.function_name, self.memory_limit_in_mb = "starter", 256
        self.invoked_function_arn, self.aws_request_id = "arn:aws:lambda:us-east-1:123456789012:function:s", "r-1"

    def get_remaining_time_in_millis(self) -> int:
        return int((self.deadline - self.clock.now) * 1000)


def test_ten_records_throttled_for_the_whole_invocation_end_within_its_timeout_sdk_retries_counted(
    stack, monkeypatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(executions, "sleep", clock.sleep)
    monkeypatch.setattr(executions, "monotonic", lambda: clock.now)
    monkeypatch.setattr(throttling, "monotonic", lambda: clock.now)
    monkeypatch.setattr(throttling, "MAX_DELAY_SECONDS", 0)
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=clock.sdk_sleep))
    log = io.StringIO()
    runtime = StarterRuntime(stack, log_stream=log)
    timeout = runtime.function.timeout
    assert timeout == 30  # STANDARD x STANDARD: the starter only starts executions
    sqs = stack.client("sqs")
    for n in range(10):
        sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order(f"budget-{n}")))
    received = sqs.receive_message(
        QueueUrl=stack.source_queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=180
    )["Messages"]
    event = {"Records": [_as_lambda_record(message, stack.source_queue_url) for message in received]}
    assert len(event["Records"]) == 10

    with step_functions_throttling() as throttle:
        response = runtime.handler(event, CountingDown(clock, timeout))

    assert clock.now <= timeout, f"the invocation ran {clock.now:.1f} s of its {timeout} s"
    assert response == {"batchItemFailures": []}  # every record handed back as a new message
    metrics = metric_totals(log)
    assert metrics.get("ThrottledRecordsRequeued", 0) + metrics.get("RecordsRequeuedOutOfTime", 0) == 10
    called = metrics["StepFunctionsCallsThrottled"]  # the starter's calls, each throttled
    assert throttle.injected > called  # the SDK retried within them, by itself ...
    assert clock.sdk_sleeps and sum(clock.sdk_sleeps) <= clock.now  # ... and its sleeps were counted


def _as_lambda_record(message: dict[str, Any], queue_url: str) -> dict[str, Any]:
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message["Attributes"],
        "messageAttributes": {},
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:" + queue_url.rsplit("/", 1)[-1],
        "awsRegion": "us-east-1",
    }


def _letters(stack: Any) -> list[dict[str, Any]]:
    """The dead-letter queue's messages, left in place: body, group and reason attributes."""
    sqs = stack.client("sqs")
    seen: list[dict[str, Any]] = []
    for message in sqs.receive_message(
        QueueUrl=stack.dead_letter_queue_url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageAttributeNames=["All"],
        VisibilityTimeout=0,
    ).get("Messages", []):
        attributes = {k: v.get("StringValue") for k, v in message.get("MessageAttributes", {}).items()}
        seen.append({"order_id": json.loads(message["Body"])["order_id"], **attributes})
    return seen


def test_a_group_throttled_for_a_day_is_dead_lettered_by_the_starter_with_its_reason_on_its_last_receive(
    fifo_stack, starter, logs, workflow_type, monkeypatch
) -> None:
    """Receives at 0, 30 min, 1.5 h, 3.5 h, 7.5 h (the holds: 30 min, 1 h, 2 h, 4 h); the fifth is
    the queue's maxReceiveCount, SQS would move the group's records at the sixth without a reason.
    Fails when the starter holds the group on that receive too: 8 h later (15.5 h) the redrive policy moves
    them, and their dead letters carry no `source`, no `error`."""
    monkeypatch.setattr(throttling, "MAX_BACKOFF_SECONDS", 60)  # fewer, longer (unslept) waits per invocation
    group = ThrottledGroup(fifo_stack, starter, workflow_type, "d")
    assert fifo_stack.event_source.max_receive_count == 5

    with step_functions_throttling(operation=group.operation):
        group.run_until(24 * 3600)

    assert group.receives == [(0, [1] * 3), (1800, [2] * 3), (5400, [3] * 3), (12600, [4] * 3), (27000, [5] * 3)]
    letters = _letters(fifo_stack)
    assert [letter["order_id"] for letter in letters] == group.order_ids  # in the group's order
    assert {letter["source"] for letter in letters} == {"starter"}  # none moved by the redrive policy
    assert {letter["error"] for letter in letters} == {"StepFunctions.ThrottlingException"}
    assert all(letter["rule"] == "throttled" for letter in letters)
    assert "on receive 5, the queue's maxReceiveCount" in letters[0]["cause"]
    assert "held back behind message" in letters[1]["cause"] and "held back behind message" in letters[2]["cause"]
    assert metric_totals(logs)["ThrottledRecordsDeadLettered"] == 3
    assert rows(fifo_stack) == []
    held = [line for line in log_lines(logs) if line.get("message", "").endswith("its records stay in flight")]
    assert [line["visibility_timeout_seconds"] for line in held] == [1800, 3600, 7200, 14400]

    # The throttle is over: a redrive brings the group back, in order, and it is applied.
    report = redrive(
        fifo_stack.client("sqs"), fifo_stack.dead_letter_queue_url, fifo_stack.source_queue_url, False, None
    )
    assert report.moved == 3
    group.run_until(25 * 3600)
    assert rows(fifo_stack) == group.order_ids


@pytest.mark.parametrize("workflow_type", ["STANDARD"])
def test_a_record_below_its_last_receive_is_held_not_dead_lettered(
    fifo_stack, starter, logs, workflow_type, monkeypatch
) -> None:
    """Four receives of throttling (7.5 h): held each time, nothing dead-lettered (docs/RUNBOOK.md,
    "Traffic above capacity": held as long as SQS allows, dead-lettered with its reason only then)."""
    monkeypatch.setattr(throttling, "MAX_BACKOFF_SECONDS", 60)
    group = ThrottledGroup(fifo_stack, starter, workflow_type, "h")
    with step_functions_throttling(operation=group.operation):
        group.run_until(7 * 3600)
    assert [counts for _, counts in group.receives] == [[1] * 3, [2] * 3, [3] * 3, [4] * 3]
    assert _letters(fifo_stack) == []
    assert isinstance(starter, StarterRuntime)

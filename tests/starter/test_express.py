"""EXPRESS mode: the real starter runs each record's execution with StartSyncExecution (on the
embedded engine's implementation) and acknowledges a record only when its execution finished the
event or dead-lettered it itself; anything else goes back to SQS in batchItemFailures.

AWS: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartSyncExecution.html;
partial batch responses: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from moto.core.exceptions import AWSError

from onceflow.engine import EmbeddedAws
from onceflow.engine.stepfunctions.api import sync_execution
from onceflow.local.faults import inject, sns_publish_failures, sqs_send_failures
from onceflow.local.function_runtime import LambdaContext, StarterRuntime
from onceflow.local.stack import LocalStack, deploy
from onceflow.ops.observe import NotificationInbox, scan
from starter import executions
from starter.naming import execution_name
from tests.starter.helpers import dead_letters, failed_ids, log_lines, metric_totals
from tests.support import order, sqs_event, sqs_record


@pytest.fixture
def express_stack(embedded_aws: EmbeddedAws) -> Iterator[LocalStack]:
    embedded_aws.reset()
    yield deploy(embedded_aws.endpoint_url, parameter_overrides={"StateMachineType": "EXPRESS"})


@pytest.fixture
def logs() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def starter(express_stack: LocalStack, logs: io.StringIO) -> StarterRuntime:
    return StarterRuntime(express_stack, log_stream=logs)


@pytest.fixture
def inbox(express_stack: LocalStack) -> NotificationInbox:
    stack = express_stack
    return NotificationInbox(stack.client("sns"), stack.client("sqs"), stack.notification_topic_arn)


def rows(stack: LocalStack) -> list[str]:
    return sorted(row["order_id"] for row in scan(stack.client("dynamodb"), stack.business_table))


def logged(logs: io.StringIO, message: str) -> list[dict[str, Any]]:
    return [line for line in log_lines(logs) if line.get("message") == message]


def test_the_template_sizes_the_express_starter(express_stack):
    assert express_stack.starter_timeout == 330
    assert express_stack.event_source.visibility_timeout >= 6 * express_stack.starter_timeout
    assert express_stack.starter_environment["STATE_MACHINE_TYPE"] == "EXPRESS"
    assert express_stack.starter_environment["SYNC_EXECUTION_TIMEOUT_SECONDS"] == "315"


def test_a_batch_is_acknowledged_once_its_executions_finished(express_stack, starter, logs, inbox):
    batch = [sqs_record(order(f"order-{n}"), message_id=f"m-{n}") for n in range(5)]

    response = starter.invoke(sqs_event(*batch))

    assert response == {"batchItemFailures": []}
    # Acknowledged means done: every row and notification exists when the handler returns.
    assert rows(express_stack) == [f"order-{n}" for n in range(5)]
    assert inbox.by_event_id() == {f"order-{n}": 1 for n in range(5)}
    assert metric_totals(logs)["SyncExecutionsFinished"] == 5
    finished = logged(logs, "Execution finished the event")
    assert {line["execution_name"] for line in finished} == {execution_name(f"order-{n}", f"m-{n}") for n in range(5)}
    assert all(":express:" in line["execution_arn"] for line in finished)


def test_redelivery_of_a_finished_event_runs_no_second_execution(express_stack, starter, logs, inbox):
    record = sqs_record(order("order-1"), message_id="m-1")
    assert starter.invoke(sqs_event(record)) == {"batchItemFailures": []}

    assert starter.invoke(sqs_event(record)) == {"batchItemFailures": []}  # already sent: the pre-check

    assert metric_totals(logs)["SyncExecutionsFinished"] == 1
    assert metric_totals(logs)["AlreadySentAcknowledged"] == 1
    assert inbox.by_event_id() == {"order-1": 1}


def test_an_execution_that_dead_lettered_its_event_is_acknowledged(express_stack, starter, logs, inbox):
    """A conflicting payload: the workflow dead-letters it and fails with Onceflow.DeadLettered."""
    assert starter.invoke(sqs_event(sqs_record(order("order-c"), message_id="first"))) == {"batchItemFailures": []}

    response = starter.invoke(sqs_event(sqs_record(order("order-c", amount=7), message_id="conflict")))

    assert response == {"batchItemFailures": []}
    dead = dead_letters(express_stack)
    assert dead["conflict"].attributes["source"] == "state-machine"
    assert metric_totals(logs)["SyncExecutionsDeadLettered"] == 1
    assert rows(express_stack) == ["order-c"]


def test_an_sns_outage_dead_letters_and_the_record_is_acknowledged(express_stack, starter, logs):
    with sns_publish_failures() as outage:
        response = starter.invoke(sqs_event(sqs_record(order("order-o"), message_id="m-o")))

    assert outage.injected >= 1
    assert response == {"batchItemFailures": []}
    assert set(dead_letters(express_stack)) == {"m-o"}
    assert metric_totals(logs)["SyncExecutionsDeadLettered"] == 1


def test_an_execution_that_failed_otherwise_goes_back_to_sqs(express_stack, starter, logs):
    """The workflow cannot even dead-letter (the DLQ refuses): FAILED with another error, so SQS keeps it."""
    assert starter.invoke(sqs_event(sqs_record(order("order-f"), message_id="first"))) == {"batchItemFailures": []}
    queue = express_stack.dead_letter_queue_url.rsplit("/", 1)[1]

    with sqs_send_failures(queue) as fault:
        response = starter.invoke(sqs_event(sqs_record(order("order-f", amount=9), message_id="m-f")))

    assert fault.injected >= 1
    assert failed_ids(response) == ["m-f"]
    [failure] = logged(logs, "Record failed; SQS will redeliver it")
    assert "ended FAILED" in failure["exception"] and failure["message_id"] == "m-f"


def test_throttled_start_sync_execution_is_retried_within_the_time_left(express_stack, starter, monkeypatch):
    delays: list[float] = []
    monkeypatch.setattr(executions, "sleep", delays.append)
    throttled = inject(
        sync_execution,
        "start",
        lambda: AWSError("Rate exceeded", exception_type="ThrottlingException", status=400),
        times=2,
    )

    with throttled as fault:
        response = starter.invoke(sqs_event(sqs_record(order("order-t"), message_id="m-t")))

    assert fault.injected == 2
    assert response == {"batchItemFailures": []}
    assert len(delays) == 2 and all(0 <= d <= 2 for d in delays)
    assert rows(express_stack) == ["order-t"]


def test_throttling_that_persists_requeues_the_record_as_a_new_message(express_stack, starter, monkeypatch):
    """Throttled for the whole invocation: sent to the source queue again and acknowledged, so
    no receive of it is spent (starter/throttling.py)."""
    monkeypatch.setattr(executions, "sleep", lambda seconds: None)
    error = AWSError("Rate exceeded", exception_type="ThrottlingException", status=400)

    with inject(sync_execution, "start", lambda: error) as fault:
        response = starter.invoke(sqs_event(sqs_record(order("order-t"), message_id="m-t")))

    assert fault.injected > 1  # waited out in the invocation until its time was up
    assert response == {"batchItemFailures": []}
    assert rows(express_stack) == []
    sqs = express_stack.client("sqs")
    attributes = sqs.get_queue_attributes(
        QueueUrl=express_stack.source_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"],
    )["Attributes"]
    assert sum(map(int, attributes.values())) == 1  # the new message (delayed unless a local run fast-forwards it)


def test_a_record_is_not_started_without_time_for_a_whole_execution(express_stack, starter, logs):
    """A synchronous execution may take SYNC_EXECUTION_TIMEOUT_SECONDS: with less time left, SQS keeps the record."""
    context = LambdaContext(function_name="starter", timeout_seconds=60)

    response = starter.handler(sqs_event(sqs_record(order("order-late"), message_id="m-late")), context)

    assert failed_ids(response) == ["m-late"]
    assert rows(express_stack) == []
    [failure] = logged(logs, "Record failed; SQS will redeliver it")
    assert "not started" in failure["exception"]

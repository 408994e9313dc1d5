"""The dead-letter send itself is retried; when it cannot succeed the execution fails with the SQS error
(not `Onceflow.DeadLettered`), which is what the execution-status safety net has to pick up."""

from __future__ import annotations

import json

import pytest

from onceflow.local.faults import sns_publish_failures, sqs_send_failures
from tests.statemachine.pipeline import (
    DEAD_LETTER,
    DEAD_LETTER_MAX_ATTEMPTS,
    assert_dead_lettered,
    state_rows,
    task_errors,
)
from tests.support import order, run_execution

SQS_ERROR = "SQS.SdkClientException"

# The injected SQS error code is not in botocore's SQS model; moto warns and still returns it.
pytestmark = pytest.mark.filterwarnings("ignore:Exception\\(SQSException\\):UserWarning")


def _queue_name(queue_url: str) -> str:
    return queue_url.rsplit("/", 1)[-1]


def test_dead_letter_send_is_retried(stack):
    body = order("order-16")

    with sns_publish_failures(), sqs_send_failures(_queue_name(stack.dead_letter_queue_url), times=2) as fault:
        result = run_execution(stack, body, name="order-16-first")

    assert fault.injected == 2
    assert task_errors(result, DEAD_LETTER) == [SQS_ERROR, SQS_ERROR]
    assert_dead_lettered(stack, result, "SNS.ThrottledException", event_id="order-16", body=json.dumps(body))


def test_dead_letter_send_failing_beyond_retries_fails_the_execution_with_the_sqs_error(stack):
    with sns_publish_failures(), sqs_send_failures(_queue_name(stack.dead_letter_queue_url)) as fault:
        result = run_execution(stack, order("order-17"), name="order-17-first")

    assert fault.injected == DEAD_LETTER_MAX_ATTEMPTS + 1
    assert result.status == "FAILED"
    assert result.error == SQS_ERROR, "not Onceflow.DeadLettered: the safety net must dead-letter this one"
    assert result.path[-1] == DEAD_LETTER
    assert [row["status"] for row in state_rows(stack)] == ["pending"], "a redrive can still finish it"

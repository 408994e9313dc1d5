"""Bodies near the size limit: what the starter hands over fits every state of the workflow, on
every path, and what would not fit is dead-lettered by the starter with field and rule.

AWS: a state's input (also after Parameters), output or a task's result over 256 KiB fails the
execution with States.DataLimitExceeded, which no Catch handles
(https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html,
https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html); the embedded
engine enforces the same limit (onceflow/engine/stepfunctions/strict.py). The largest state is measured
here from the execution histories, so a workflow change that adds a copy of the payload fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from onceflow.local.faults import sns_publish_failures
from onceflow.ops.executions import ExecutionResult, wait_for
from starter.limits import MAX_EXECUTION_INPUT_BYTES, MAX_STATE_BYTES, WORKFLOW_STATE_OVERHEAD_BYTES
from starter.messages import InvalidMessage, parse_record
from tests.starter.helpers import dead_letters
from tests.starter.helpers import settings as starter_settings
from tests.support import order, sqs_event, sqs_record


def body_with_input_of(size: int, order_id: str, message_id: str, **changes: Any) -> str:
    """A valid order whose execution input, for this message id, is `size` bytes (or one under)."""
    empty = json.dumps(order(order_id, note="", **changes))
    fixed = len(parse_record(sqs_record(empty, message_id=message_id), starter_settings()).execution_input.encode())
    return json.dumps(order(order_id, note="x" * ((size - fixed) // 2), **changes))  # the note travels twice


def input_size(body: str, message_id: str) -> int:
    return len(parse_record(sqs_record(body, message_id=message_id), starter_settings()).execution_input.encode())


def largest_state(result: ExecutionResult) -> int:
    """The largest state input, state output, task parameters or task result in the history."""
    sizes = [0]
    for event in result.history:
        for key, details in event.items():
            if key.endswith("EventDetails") and isinstance(details, dict):
                for field in ("input", "output", "parameters"):
                    if isinstance(details.get(field), str):
                        sizes.append(len(details[field].encode()))
    return max(sizes)


def run(stack: Any, body: str, message_id: str) -> ExecutionResult:
    sfn = stack.client("stepfunctions")
    event = parse_record(sqs_record(body, message_id=message_id), starter_settings())
    arn = sfn.start_execution(stateMachineArn=stack.state_machine_arn, name=message_id, input=event.execution_input)[
        "executionArn"
    ]
    return wait_for(sfn, arn, timeout=60)


@pytest.mark.parametrize("kilobytes", [60, 100])
def test_bodies_that_fit_go_through_the_real_handler(stack, starter, kilobytes):
    body = json.dumps(order(f"order-{kilobytes}kb", note="x" * (kilobytes * 1000)))
    assert starter.invoke(sqs_event(sqs_record(body, message_id=f"m-{kilobytes}"))) == {"batchItemFailures": []}
    sfn = stack.client("stepfunctions")
    [execution] = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    result = wait_for(sfn, execution["executionArn"], timeout=60)
    assert result.status == "SUCCEEDED"
    assert dead_letters(stack) == {}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(json.dumps(order("order-200kb", note="x" * 200_000)), id="200-KB"),
        pytest.param(
            body_with_input_of(MAX_EXECUTION_INPUT_BYTES + 2, "order-over", "m-big"), id="just-over-the-limit"
        ),
    ],
)
def test_bodies_that_cannot_fit_are_dead_lettered_by_the_starter(stack, starter, body):
    assert starter.invoke(sqs_event(sqs_record(body, message_id="m-big"))) == {"batchItemFailures": []}
    [dead] = dead_letters(stack).values()
    assert (dead.attributes["field"], dead.attributes["rule"]) == ("body", "max_state_size")
    assert dead.body == body
    assert stack.client("stepfunctions").list_executions(stateMachineArn=stack.state_machine_arn)["executions"] == []


def test_at_the_limit_every_path_of_the_workflow_stays_within_the_state_limit(stack):
    """New event, already sent, conflicting payload, publish outage then resumed from pending."""
    size = MAX_EXECUTION_INPUT_BYTES
    # Message ids of one length: the id is part of the input.
    body = body_with_input_of(size, "order-edge", "m-01")
    assert size - 1 <= input_size(body, "m-01") <= size
    conflicting = body_with_input_of(size, "order-edge", "m-03", amount=1)
    outage_body = body_with_input_of(size, "order-outage", "m-04")

    results = {"new": run(stack, body, "m-01"), "already-sent": run(stack, body, "m-02")}
    results["conflict"] = run(stack, conflicting, "m-03")
    with sns_publish_failures() as outage:
        results["publish-outage"] = run(stack, outage_body, "m-04")
    assert outage.injected >= 1
    results["resumed-from-pending"] = run(stack, outage_body, "m-05")

    assert {path: r.status for path, r in results.items()} == {
        "new": "SUCCEEDED",
        "already-sent": "SUCCEEDED",
        "conflict": "FAILED",
        "publish-outage": "FAILED",
        "resumed-from-pending": "SUCCEEDED",
    }
    assert results["conflict"].error == results["publish-outage"].error == "Onceflow.DeadLettered"
    assert results["already-sent"].path[-1] == "Already sent"
    added = {path: largest_state(r) - size for path, r in results.items()}
    print("bytes the workflow adds to the input, per path:", added)
    assert max(added.values()) <= WORKFLOW_STATE_OVERHEAD_BYTES, added
    assert all(largest_state(r) <= MAX_STATE_BYTES for r in results.values())


def test_the_limit_is_where_the_starter_says():
    with pytest.raises(InvalidMessage, match="max_state_size"):
        parse_record(
            sqs_record(body_with_input_of(MAX_EXECUTION_INPUT_BYTES + 2, "o", "m"), message_id="m"), starter_settings()
        )

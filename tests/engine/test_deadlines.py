"""TimeoutSeconds and HeartbeatSeconds on one time line: the engine's time scale never changes which
deadline comes first.

AWS: an execution that runs longer than the state machine's `TimeoutSeconds` ends TIMED_OUT
(https://docs.aws.amazon.com/step-functions/latest/dg/statemachine-structure.html); a Task that
hears nothing for `HeartbeatSeconds` fails with States.Timeout
(https://docs.aws.amazon.com/step-functions/latest/dg/state-task.html). Each test names the
recording of AWS it follows (LocalStack's tests/aws/services/stepfunctions/v2 snapshots, recorded
against AWS). The engine's side: onceflow/engine/stepfunctions/interpreter/deadlines.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from onceflow.ops.executions import wait_for
from tests.engine.harness import Account

pytestmark = pytest.mark.embedded_only(reason="sets the embedded engine's time scale")


def _waits(timeout: int, *seconds: int) -> dict[str, Any]:
    states = {f"Wait{i}": {"Type": "Wait", "Seconds": s, "Next": f"Wait{i + 1}"} for i, s in enumerate(seconds)}
    states[f"Wait{len(seconds) - 1}"].pop("Next")
    states[f"Wait{len(seconds) - 1}"]["End"] = True
    return {"TimeoutSeconds": timeout, "StartAt": "Wait0", "States": states}


@pytest.mark.parametrize("time_scale", [0.0, 0.0001])
def test_an_execution_whose_timeout_is_shorter_than_its_waits_times_out_at_any_time_scale(
    account: Account, monkeypatch: pytest.MonkeyPatch, time_scale: float
):
    """AWS's recording (timeouts/test_timeouts.snapshot.json, test_global_timeout, March 2024): a
    Wait of 60 s under `TimeoutSeconds: 5` ends TIMED_OUT. Here under the engine's time scale 0
    (no real waiting) and 0.0001 alike; Waits that fit the deadline still succeed."""
    monkeypatch.setattr(account.aws.clock, "time_scale", time_scale)
    machine = account.state_machine(_waits(5, 60))
    timed_out = wait_for(account.sfn, account.start(machine), timeout=30)
    fitting = wait_for(account.sfn, account.start(account.state_machine(_waits(70, 30, 30))), timeout=30)

    assert timed_out.status == "TIMED_OUT" and account.describe(timed_out.arn)["status"] == "TIMED_OUT"
    assert [e["type"] for e in timed_out.history] == ["ExecutionStarted", "WaitStateEntered", "ExecutionTimedOut"]
    assert fitting.status == "SUCCEEDED"


def test_map_iterations_wait_side_by_side_and_one_after_another_under_max_concurrency(account: Account):
    """The Map state runs its iterations concurrently, at most MaxConcurrency at a time
    (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-inline.html): four iterations
    that each Wait 30 s take 30 s of a 50 s TimeoutSeconds; with MaxConcurrency 1 they take 120 s
    and the execution times out, under time scale 0 as on AWS."""

    def map_of_waits(max_concurrency: int) -> dict[str, Any]:
        iteration = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 30, "End": True}}}
        each = {"Type": "Map", "MaxConcurrency": max_concurrency, "Iterator": iteration, "End": True}
        return {"TimeoutSeconds": 50, "StartAt": "Each", "States": {"Each": each}}

    side_by_side = wait_for(account.sfn, account.start(account.state_machine(map_of_waits(0)), raw_input="[1,2,3,4]"))
    in_turn = wait_for(account.sfn, account.start(account.state_machine(map_of_waits(1)), raw_input="[1,2,3,4]"))

    assert side_by_side.status == "SUCCEEDED", [e["type"] for e in side_by_side.history]
    assert in_turn.status == "TIMED_OUT", [e["type"] for e in in_turn.history]


def test_a_task_without_heartbeats_times_out_on_the_scaled_heartbeat(account: Account, monkeypatch: pytest.MonkeyPatch):
    """AWS's recording (timeouts/test_heartbeats.snapshot.json, test_heartbeat_timeout, April
    2024): a `.waitForTaskToken` task with HeartbeatSeconds 5 (TimeoutSeconds 600) that hears
    nothing ends TaskTimedOut {"error": "States.Timeout"} and the execution FAILED States.Timeout.
    Under time scale 0.001 its 5 s are 5 ms of real waiting, not 5 s."""
    monkeypatch.setattr(account.aws.clock, "time_scale", 0.001)
    sqs = account.client("sqs")
    queue_url = sqs.create_queue(QueueName="deadlines-heartbeat")["QueueUrl"]
    task = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "TimeoutSeconds": 600,
        "HeartbeatSeconds": 5,
        "Parameters": {"QueueUrl": queue_url, "MessageBody": {"TaskToken.$": "$$.Task.Token"}},
        "End": True,
    }
    machine = account.state_machine({"StartAt": "SendMessageWithWait", "States": {"SendMessageWithWait": task}})
    result = wait_for(account.sfn, account.start(machine), timeout=3)

    assert result.status == "FAILED", [e["type"] for e in result.history]
    assert [e["type"] for e in result.history][-3:] == ["TaskSubmitted", "TaskTimedOut", "ExecutionFailed"]
    assert result.history[-2]["taskTimedOutEventDetails"] == {
        "resourceType": "sqs",
        "resource": "sendMessage.waitForTaskToken",
        "error": "States.Timeout",
    }
    assert result.history[-1]["executionFailedEventDetails"] == {"error": "States.Timeout"}

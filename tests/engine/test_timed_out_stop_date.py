"""A TIMED_OUT execution answers the date it stopped, as every ended execution does on AWS.

DescribeExecution's `stopDate`: "If the execution ended, the date the execution stopped"
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html), and
ListExecutions' items alike
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_ExecutionListItem.html). moto
5.2.5 keeps the date but answers it for SUCCEEDED, FAILED and ABORTED only
(onceflow/engine/stepfunctions/api/executions.py, timed_out_stop_date). The reconciler reads it (an ended
execution's sweep against its checkpoint); tests/starter/test_guarantee_fifo_redelivery_of_ended.py,
which orders a group's executions by it, found it missing.

The execution is timed out on entering a state by the transition moto takes when TimeoutSeconds
runs out (onceflow.devtools.schedules.hooks.ExecutionInterrupts): no real wait for the timeout.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from onceflow.devtools.schedules.hooks import ExecutionInterrupts
from onceflow.ops.executions import wait_for
from tests.engine.harness import Account

pytestmark = pytest.mark.embedded_only(reason="times the execution out by patching moto in this process")

TWO_PASSES = {
    "StartAt": "First",
    "States": {"First": {"Type": "Pass", "Next": "Second"}, "Second": {"Type": "Pass", "End": True}},
}


def test_a_timed_out_execution_answers_its_stop_date_in_describe_and_list(account: Account) -> None:
    machine = account.state_machine(TWO_PASSES)
    with ExecutionInterrupts(account.sfn).installed() as interrupts:
        interrupts.arm("late", "Second", "timeout")
        arn = account.start(machine, {"event_id": "late"})
        result = wait_for(account.sfn, arn)
    assert [fired.how for fired in interrupts.fired] == ["timeout"] and result.status == "TIMED_OUT"
    assert result.history[-1]["type"] == "ExecutionTimedOut"

    described = account.describe(arn)
    assert "stopDate" in described, "DescribeExecution of a TIMED_OUT execution without its stopDate"
    assert described["startDate"] <= described["stopDate"] <= datetime.now(UTC)
    for listing in ({}, {"statusFilter": "TIMED_OUT"}):
        [listed] = account.sfn.list_executions(stateMachineArn=machine, **listing)["executions"]
        assert listed.get("stopDate") == described["stopDate"], f"ListExecutions {listing}"

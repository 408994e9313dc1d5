"""Step Functions' execution metrics are in the embedded CloudWatch as AWS publishes them: namespace
AWS/States, dimension StateMachineArn, ExecutionsStarted / -Succeeded / -Failed (Count, read with
Sum), https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html
(onceflow/engine/cloudwatch/execution_metrics.py). stock moto publishes none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.cloudwatch.models import cloudwatch_backends

from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.ops.executions import poll_until, wait_for
from tests.engine.harness import Account

pytestmark = pytest.mark.embedded_only(reason="the embedded engine's own CloudWatch data")

CHOICE = {
    "StartAt": "Which",
    "States": {
        "Which": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.ok", "BooleanEquals": True, "Next": "Done"}],
            "Default": "Bad",
        },
        "Done": {"Type": "Succeed"},
        "Bad": {"Type": "Fail", "Error": "Probe.Bad", "Cause": "asked to fail"},
    },
}


def _sums(cloudwatch: Any, arn: str, names: list[str]) -> dict[str, float]:
    now = datetime.now(UTC)
    answer = cloudwatch.get_metric_data(
        MetricDataQueries=[
            {
                "Id": f"m{i}",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/States",
                        "MetricName": name,
                        "Dimensions": [{"Name": "StateMachineArn", "Value": arn}],
                    },
                    "Period": 60,
                    "Stat": "Sum",
                },
            }
            for i, name in enumerate(names)
        ],
        StartTime=now - timedelta(minutes=10),
        EndTime=now + timedelta(minutes=1),
    )
    return {names[int(r["Id"][1:])]: sum(r["Values"]) for r in answer["MetricDataResults"]}


def test_each_start_and_end_is_counted_by_state_machine(account: Account) -> None:
    first, second = account.state_machine(CHOICE), account.state_machine(CHOICE)
    runs = [account.start(first, {"ok": ok}) for ok in (True, True, True, False)] + [
        account.start(second, {"ok": True})
    ]
    for arn in runs:
        wait_for(account.sfn, arn, timeout=30)
    cloudwatch = account.client("cloudwatch")
    names = ["ExecutionsStarted", "ExecutionsSucceeded", "ExecutionsFailed", "ExecutionsAborted", "ExecutionsTimedOut"]
    assert _sums(cloudwatch, first, names) == {
        "ExecutionsStarted": 4,
        "ExecutionsSucceeded": 3,
        "ExecutionsFailed": 1,
        "ExecutionsAborted": 0,
        "ExecutionsTimedOut": 0,
    }
    assert _sums(cloudwatch, second, names)["ExecutionsSucceeded"] == 1
    now = datetime.now(UTC)
    statistics = cloudwatch.get_metric_statistics(
        Namespace="AWS/States",
        MetricName="ExecutionsStarted",
        Dimensions=[{"Name": "StateMachineArn", "Value": first}],
        StartTime=now - timedelta(minutes=10),
        EndTime=now + timedelta(minutes=1),
        Period=600,
        Statistics=["Sum", "SampleCount"],
    )["Datapoints"]
    assert sum(p["Sum"] for p in statistics) == 4 and all(p["Unit"] == "Count" for p in statistics)
    listed = cloudwatch.list_metrics(Namespace="AWS/States", Dimensions=[{"Name": "StateMachineArn", "Value": first}])
    assert {m["MetricName"] for m in listed["Metrics"]} == {
        "ExecutionsStarted",
        "ExecutionsSucceeded",
        "ExecutionsFailed",
    }


def test_what_is_kept_grows_with_the_minutes_not_with_the_executions(account: Account) -> None:
    """One datum per metric, state machine and minute (as CloudWatch keeps one-minute data), however
    many executions: a long local run does not keep one per execution."""
    machine = account.state_machine(CHOICE)
    for arn in [account.start(machine, {"ok": True}) for _ in range(12)]:
        wait_for(account.sfn, arn, timeout=30)
    data = [
        d
        for d in cloudwatch_backends[ACCOUNT_ID][REGION].metric_data
        if d.namespace == "AWS/States" and d.dimensions[0].value == machine
    ]
    minutes = {d.timestamp for d in data}
    assert len(data) <= 2 * len(minutes) <= 2 * 2, [(d.name, d.timestamp, d.sum) for d in data]
    assert sum(d.sum for d in data if d.name == "ExecutionsStarted") == 12


def test_express_executions_are_counted_under_their_state_machine(account: Account) -> None:
    """An Express execution's ARN is `...:express:Machine:name:id`; its metrics carry the machine's ARN."""
    machine = account.state_machine(CHOICE, kind="EXPRESS")
    account.sfn.start_execution(stateMachineArn=machine, input='{"ok": true}')
    cloudwatch = account.client("cloudwatch")
    names = ["ExecutionsStarted", "ExecutionsSucceeded"]
    poll_until(lambda: _sums(cloudwatch, machine, names) == dict.fromkeys(names, 1), 30, "the Express metrics")

"""`onceflow status` (onceflow/ops/status.py) shows true counts without listing every execution or
scanning a table: executions from CloudWatch's AWS/States metrics and the RUNNING list, events from
the pending-since index and DescribeTable, the latest executions from ListExecutions' first page
(issue 21: `status` took 8 s at 1,000 executions, 10 s at 5,000, growing with the run)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from onceflow.engine import EmbeddedAws
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import LocalStack
from onceflow.ops.counts import CountsUnavailable, EventCounts, ExecutionCounts, execution_counts
from onceflow.ops.executions import history, list_executions, oldest_first, wait_for
from onceflow.ops.observe import scan
from onceflow.ops.stack import StackResources, Target, find_stack
from onceflow.ops.status import read_status
from tests.support import execution_input, order

SERVICES = ("stepfunctions", "dynamodb", "sqs", "cloudwatch")


@contextmanager
def requests_made(stack: StackResources) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every API call the stack's clients make while open: (operation, parameters)."""
    made: list[tuple[str, dict[str, Any]]] = []

    def record(model: Any, params: dict[str, Any], **_: Any) -> None:
        made.append((model.name, params))

    clients = [stack.client(service) for service in SERVICES]
    for client in clients:
        client.meta.events.register("provide-client-params", record, unique_id="status-probe")
    try:
        yield made
    finally:
        for client in clients:
            client.meta.events.unregister("provide-client-params", unique_id="status-probe")


def _fill(stack: LocalStack, count: int) -> None:
    """`count` executions as the starter starts them: every 5th resends an earlier event ("already
    sent"), every 7th with another payload (dead-lettered: FAILED)."""
    sfn = stack.client("stepfunctions")
    arns = []
    for i in range(count):
        earlier = i - 1 if i % 5 == 4 or i % 7 == 6 else i
        body = order(f"order-{earlier:03d}", amount=1.0 if i % 7 == 6 else 42.5)
        arns.append(
            sfn.start_execution(
                stateMachineArn=stack.state_machine_arn, name=f"run-{i:03d}", input=execution_input(body, f"m-{i}")
            )["executionArn"]
        )
        if i % 5 == 3:  # let the event be recorded before it is resent
            wait_for(sfn, arns[-1])
    for arn in arns:
        wait_for(sfn, arn)


@pytest.mark.embedded_only(reason="finds the stack through CloudFormation; an external endpoint's stack has none")
def test_status_counts_what_listing_and_scanning_count_without_either(stack: LocalStack) -> None:
    _fill(stack, 30)
    dynamodb = stack.client("dynamodb")
    dynamodb.put_item(  # one event still pending (recorded, not yet sent), as Record leaves it
        TableName=stack.processed_events_table,
        Item={
            "event_id": {"S": "order-pending"},
            "status": {"S": "pending"},
            "pending_shard": {"S": "03"},
            "pending_since": {"S": datetime.now(UTC).isoformat(timespec="milliseconds")},  # the index's type
        },
    )
    resources = find_stack(Target(stack.endpoint_url), stack.stack_name)
    with requests_made(resources) as made:
        report = read_status(resources, last=5)

    sfn = stack.client("stepfunctions")
    every = oldest_first(list_executions(sfn, stack.state_machine_arn))
    statuses = Counter(e["status"] for e in every)
    assert statuses["FAILED"] > 0 and statuses["SUCCEEDED"] > 0
    assert report.execution_count == len(every) == 30
    assert report.executions.statuses == statuses
    assert report.finished == 30
    assert report.executions_line().startswith(
        f"30 started: {statuses['FAILED']} FAILED, {statuses['SUCCEEDED']} SUCCEEDED ("
    )

    rows = Counter(row["status"] for row in scan(dynamodb, stack.processed_events_table))
    assert (report.events.recorded, report.events.pending, report.events.sent) == (
        sum(rows.values()),
        rows["pending"],
        rows["sent"],
    )
    assert report.events_line() == f"{sum(rows.values())} recorded: 1 pending, {rows['sent']} sent"

    assert [line.name for line in report.latest] == [e["name"] for e in every[-5:]]
    for line in report.latest:
        events = history(sfn, next(e["executionArn"] for e in every if e["name"] == line.name))
        assert line.path == [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
        assert line.event_id.startswith("order-")
    reasons = report.dead_letters_by_reason()
    assert sum(len(group) for group in reasons.values()) == statuses["FAILED"]

    operations = Counter(name for name, _ in made)
    assert "Scan" not in operations
    assert operations["GetExecutionHistory"] == 5
    for name, params in made:
        if name == "ListExecutions":  # the latest page, or the running ones: never every execution
            assert params.get("statusFilter") == "RUNNING" or params.get("maxResults", 1000) <= 5, params


def test_status_counts_running_executions_from_the_list_of_running_ones(
    stack: LocalStack, embedded_aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Wait states hold until stopped (bounded), instead of the tests' time scale 0.
    monkeypatch.setattr(embedded_aws.clock, "wait", lambda env, seconds: env.program_state_event.wait(10))
    sfn = stack.client("stepfunctions")
    definition = '{"StartAt":"Hold","States":{"Hold":{"Type":"Wait","Seconds":300,"End":true}}}'
    holding = sfn.create_state_machine(name="status-hold", definition=definition, roleArn=_role(sfn))["stateMachineArn"]
    resources = find_stack(Target(stack.endpoint_url), stack.stack_name)
    resources = StackResources(
        resources.target, resources.stack_name, {**resources.outputs, "StateMachineArn": holding}
    )
    started = [sfn.start_execution(stateMachineArn=holding, name=f"hold-{i}")["executionArn"] for i in range(3)]
    sfn.stop_execution(executionArn=started[0], error="Probe.Stop")
    wait_for(sfn, started[0])
    report = read_status(resources, last=0)
    assert report.executions.statuses == Counter({"RUNNING": 2, "ABORTED": 1})
    assert report.execution_count == 3
    for arn in started[1:]:
        sfn.stop_execution(executionArn=arn)
        wait_for(sfn, arn)
    assert read_status(resources, last=0).executions.statuses == Counter({"ABORTED": 3})


def _role(sfn: Any) -> str:
    return sfn.describe_state_machine(stateMachineArn=sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"])[
        "roleArn"
    ]


class _Refusing:
    """A CloudWatch client of a role without cloudwatch:GetMetricData."""

    def get_metric_data(self, **_: Any) -> Any:
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "not allowed"}}, "GetMetricData")


def test_counts_a_role_cannot_read_are_one_clear_error(stack: LocalStack) -> None:
    with pytest.raises(CountsUnavailable, match=r"^CloudWatch GetMetricData: AccessDenied$"):
        execution_counts(_Refusing(), stack.client("stepfunctions"), stack.state_machine_arn, exact=False)


def test_on_aws_the_lines_say_which_counts_are_approximate() -> None:
    """AWS delivers the metrics at best effort, late, and refreshes ItemCount about every 6 hours
    (onceflow/ops/counts.py cites the pages): the lines say so there, and not on the local stack."""
    since = datetime(2026, 12, 1, 9, tzinfo=UTC)
    ended = Counter({"SUCCEEDED": 9, "FAILED": 1})
    on_aws = ExecutionCounts(started=11, ended=ended, running=1, redriven=0, since=since, exact=False)
    assert on_aws.source() == (
        "CloudWatch AWS/States since 2026-12-01 09:00 UTC, best effort: a minute or more behind; running: listed now"
    )
    assert "best effort" not in ExecutionCounts(11, ended, 1, 0, since, exact=True).source()
    assert EventCounts(recorded=100, pending=3, exact=False).line() == (
        "3 pending (pending-since index, now); about 100 recorded in all "
        "(DynamoDB's ItemCount, refreshed about every 6 hours), the rest sent"
    )
    assert EventCounts(recorded=100, pending=3, exact=True).line() == "100 recorded: 3 pending, 97 sent"


@pytest.mark.parametrize("mode", ["EXPRESS"])
def test_status_of_an_express_stack_counts_without_listing_executions(
    stack: LocalStack, embedded_aws: EmbeddedAws
) -> None:
    """AWS refuses ListExecutions of an Express machine (API_ListExecutions:
    StateMachineTypeNotSupported) and keeps no history of its executions: status counts them from
    the metrics, lists none and says so, instead of failing on the refused call."""
    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([order(f"order-x{i}") for i in range(3)])
    pipeline.process()
    resources = find_stack(Target(stack.endpoint_url), stack.stack_name)
    with requests_made(resources) as made:
        report = read_status(resources, last=5)
    listed = [params for name, params in made if name == "ListExecutions"]
    assert len(listed) == 1 and "statusFilter" not in listed[0]  # the latest page, refused; no RUNNING list
    assert "GetExecutionHistory" not in {name for name, _ in made}
    assert report.latest == []
    assert report.executions.running is None
    assert report.execution_count == 3 and report.executions.statuses == Counter({"SUCCEEDED": 3})
    assert report.executions_line().endswith("EXPRESS: running executions are not listed (API_ListExecutions))")

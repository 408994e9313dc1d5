"""How many executions ran and how many events are recorded, read without listing or scanning
everything: `onceflow status` reads these the same way on AWS and on the local stack.

- Executions: Step Functions' own CloudWatch metrics (namespace AWS/States, dimension
  StateMachineArn: ExecutionsStarted, -Succeeded, -Failed, -Aborted, -TimedOut, -Redriven;
  https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html), summed since
  the state machine was created, in one GetMetricData call. AWS delivers them on a best-effort
  basis, a minute or more late (that page, "CloudWatch metrics delivery"), and keeps hourly data
  for 455 days (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html);
  the embedded engine publishes them as executions start and end (onceflow/engine/cloudwatch/execution_metrics.py).
  Those running now are listed (ListExecutions with the RUNNING filter): exact, and as many as run
  at once, not as many as ever ran.
- Events: the pending ones are counted in the sparse pending-since index (a COUNT Query per shard,
  as the reconciler reads it); all of them is DescribeTable's ItemCount, which AWS refreshes only
  about every six hours
  (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TableDescription.html), so on
  AWS the total and the sent ones derived from it are approximate and said to be.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from onceflow_common.pending import INDEX_NAME as PENDING_INDEX
from onceflow_common.pending import all_shards

NAMESPACE = "AWS/States"
ENDED = {
    "SUCCEEDED": "ExecutionsSucceeded",
    "FAILED": "ExecutionsFailed",
    "ABORTED": "ExecutionsAborted",
    "TIMED_OUT": "ExecutionsTimedOut",
}
STARTED, REDRIVEN = "ExecutionsStarted", "ExecutionsRedriven"
RETENTION = timedelta(days=455)  # CloudWatch keeps data points of one hour for 455 days
PERIOD = 3600  # a multiple of 60, 300 and 3600: allowed however far back the window starts


class CountsUnavailable(RuntimeError):
    """The counts could not be read (the message says which call and why)."""


@dataclass(frozen=True)
class ExecutionCounts:
    started: int
    ended: Counter[str]  # SUCCEEDED, FAILED, ABORTED, TIMED_OUT: how many ends of each (a redrive ends again)
    running: int | None  # listed now: exact; None for EXPRESS, whose executions AWS does not list
    redriven: int
    since: datetime
    exact: bool  # the local stack publishes every metric at once; AWS at best effort, late

    @property
    def statuses(self) -> Counter[str]:
        counts = Counter({status: n for status, n in self.ended.items() if n})
        if self.running:
            counts["RUNNING"] = self.running
        return counts

    @property
    def finished(self) -> int:
        return sum(self.ended.values())

    def source(self) -> str:
        where = f"CloudWatch AWS/States since {self.since:%Y-%m-%d %H:%M} UTC"
        if not self.exact:
            where += ", best effort: a minute or more behind"
        if self.redriven:
            where += f"; {self.redriven} redriven, each ending counted again"
        if self.running is None:
            return where + "; EXPRESS: running executions are not listed (API_ListExecutions)"
        return where + "; running: listed now"


@dataclass(frozen=True)
class EventCounts:
    recorded: int  # DescribeTable ItemCount
    pending: int  # the pending-since index, exact
    exact: bool  # ItemCount is current on the local stack, refreshed about every 6 hours on AWS

    @property
    def sent(self) -> int:
        return max(self.recorded - self.pending, 0)

    def line(self) -> str:
        if self.exact:
            parts = [f"{n} {name}" for name, n in (("pending", self.pending), ("sent", self.sent)) if n]
            return f"{self.recorded} recorded" + (f": {', '.join(parts)}" if parts else "")
        return (
            f"{self.pending} pending (pending-since index, now); about {self.recorded} recorded in all "
            "(DynamoDB's ItemCount, refreshed about every 6 hours), the rest sent"
        )


def execution_counts(
    cloudwatch: Any, sfn: Any, state_machine_arn: str, exact: bool, now: datetime | None = None
) -> ExecutionCounts:
    now = now or datetime.now(UTC)
    machine = sfn.describe_state_machine(stateMachineArn=state_machine_arn)
    created = machine["creationDate"]
    since = max(created.astimezone(UTC), now - RETENTION + timedelta(hours=1)).replace(
        minute=0, second=0, microsecond=0
    )
    hours = max(1, math.ceil((now - since).total_seconds() / PERIOD) + 1)
    metrics = [STARTED, REDRIVEN, *ENDED.values()]
    queries = [
        {
            "Id": f"m{i}",
            "MetricStat": {
                "Metric": {
                    "Namespace": NAMESPACE,
                    "MetricName": name,
                    "Dimensions": [{"Name": "StateMachineArn", "Value": state_machine_arn}],
                },
                "Period": PERIOD,
                "Stat": "Sum",
            },
        }
        for i, name in enumerate(metrics)
    ]
    sums = dict.fromkeys(metrics, 0.0)
    request: dict[str, Any] = {
        "MetricDataQueries": queries,
        "StartTime": since,
        "EndTime": since + timedelta(seconds=hours * PERIOD),
    }
    while True:
        try:
            page = cloudwatch.get_metric_data(**request)
        except ClientError as error:  # e.g. a role without cloudwatch:GetMetricData
            raise CountsUnavailable(f"CloudWatch GetMetricData: {error.response['Error'].get('Code', error)}") from None
        for result in page["MetricDataResults"]:
            sums[metrics[int(result["Id"][1:])]] += sum(result.get("Values", []))
        if not page.get("NextToken"):
            break
        request["NextToken"] = page["NextToken"]
    return ExecutionCounts(
        started=round(sums[STARTED]),
        ended=Counter({status: round(sums[name]) for status, name in ENDED.items()}),
        running=None if machine.get("type") == "EXPRESS" else _running(sfn, state_machine_arn),
        redriven=round(sums[REDRIVEN]),
        since=since,
        exact=exact,
    )


def _running(sfn: Any, state_machine_arn: str) -> int:
    pages = sfn.get_paginator("list_executions").paginate(
        stateMachineArn=state_machine_arn, statusFilter="RUNNING", PaginationConfig={"PageSize": 1000}
    )
    return sum(len(listed["executions"]) for listed in pages)


def event_counts(
    dynamodb: Any,
    table: str,
    exact: bool,
    map_: Callable[[Callable[[str], int], Iterable[str]], Iterable[int]] = map,
    index: str = PENDING_INDEX,
) -> EventCounts:
    """`map_` runs the shards' queries (a thread pool's map runs them at once)."""

    def pending_in(shard: str) -> int:
        request: dict[str, Any] = {
            "TableName": table,
            "IndexName": index,
            "KeyConditionExpression": "pending_shard = :shard",
            "ExpressionAttributeValues": {":shard": {"S": shard}},
            "Select": "COUNT",
        }
        count = 0
        while True:
            page = dynamodb.query(**request)
            count += page["Count"]
            if "LastEvaluatedKey" not in page:
                return count
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    pending = sum(map_(pending_in, all_shards()))
    recorded = dynamodb.describe_table(TableName=table)["Table"].get("ItemCount", 0)
    return EventCounts(recorded=recorded, pending=pending, exact=exact)

"""Where the reconciler finds work, without EventBridge: ended executions (ListExecutions with a
status filter) and events pending too long (a Query of the sparse `pending-since` index per shard,
never a table scan). Standard workflows only: Express has no ListExecutions or DescribeExecution."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from onceflow_common.pending import all_shards
from onceflow_common.status_change import ENDED_BADLY


@dataclass(frozen=True)
class ListedExecution:
    execution_arn: str
    status: str
    stopped_at: float | None


def ended_executions(sfn: Any, state_machine_arn: str, since: float, lookback: float) -> Iterator[ListedExecution]:
    """Executions that ended FAILED, TIMED_OUT or ABORTED at `since` or later.

    ListExecutions sorts by start time, newest first
    (https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html), so
    paging stops at executions that started `lookback` before `since`: none of them can have ended
    after it, as an execution runs at most the state machine's TimeoutSeconds.
    """
    started_after = since - lookback
    paginator = sfn.get_paginator("list_executions")
    for status in ENDED_BADLY:
        for page in paginator.paginate(stateMachineArn=state_machine_arn, statusFilter=status):
            executions = page["executions"]
            for execution in executions:
                if execution["startDate"].timestamp() < started_after:
                    break
                stopped = execution.get("stopDate")
                stopped_at = stopped.timestamp() if stopped else None
                if stopped_at is None or stopped_at >= since:
                    yield ListedExecution(execution["executionArn"], execution["status"], stopped_at)
            else:
                continue
            break


@dataclass(frozen=True)
class PendingEvent:
    event_id: str
    execution_arn: str | None
    pending_since: str


def iso_millis(epoch_seconds: float) -> str:
    """The format of `$$.State.EnteredTime` (what `pending_since` holds), so strings compare as times."""
    moment = datetime.fromtimestamp(epoch_seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def pending_before(dynamodb: Any, table: str, index: str, cutoff: float) -> Iterator[PendingEvent]:
    """Events recorded `pending` before `cutoff` (epoch seconds), shard by shard."""
    paginator = dynamodb.get_paginator("query")
    for shard in all_shards():
        pages = paginator.paginate(
            TableName=table,
            IndexName=index,
            KeyConditionExpression="pending_shard = :shard AND pending_since < :cutoff",
            ExpressionAttributeValues={":shard": {"S": shard}, ":cutoff": {"S": iso_millis(cutoff)}},
        )
        for page in pages:
            for item in page.get("Items", []):
                arn = item.get("execution_arn", {}).get("S")
                yield PendingEvent(item["event_id"]["S"], arn, item["pending_since"]["S"])

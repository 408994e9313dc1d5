"""What `onceflow status` shows, read with boto3 only: counts, the latest executions with their
paths, and the dead-letter queue read through the redrive tool's reader."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from onceflow.ops.executions import TERMINAL, history, history_budget, list_executions, oldest_first
from onceflow.ops.redrive import DeadLetter, QueueView, peek
from onceflow.ops.stack import StackResources
from onceflow.ops.subscriber import SubscriberOutcome, outcomes, queue_line


@dataclass(frozen=True)
class ExecutionLine:
    started: str
    name: str
    status: str
    event_id: str
    path: list[str]


@dataclass(frozen=True)
class StatusReport:
    event_statuses: Counter[str]
    execution_statuses: Counter[str]
    execution_count: int
    latest: list[ExecutionLine]
    source_visible: int
    source_in_flight: int
    dead_letters: QueueView
    history_budget: int | None = None  # what the endpoint keeps (the tag `onceflow start` puts on the state machine)
    finished: int = 0

    def histories_line(self) -> str | None:
        """How many executions no longer have a history, and why; None when none can have lost it."""
        if self.history_budget is None or self.finished <= self.history_budget:
            return None
        return (
            f"kept for the newest {self.history_budget} finished executions (history budget, "
            f"`onceflow start --history-budget N`): up to {self.finished - self.history_budget} older ones have none; "
            "`onceflow trace` lists them with what DescribeExecution still knows"
        )

    # The example subscriber (DeploySubscriber=true): its queues, and its outcome per shown event.
    subscriber_queues: str | None = None
    subscriber: dict[str, SubscriberOutcome] | None = None

    def events_line(self) -> str:
        total = sum(self.event_statuses.values())
        return f"{total} recorded" + (f": {_counted(self.event_statuses)}" if total else "")

    def executions_line(self) -> str:
        return f"{self.execution_count}" + (f": {_counted(self.execution_statuses)}" if self.execution_count else "")

    def source_queue_line(self) -> str:
        return f"{self.source_visible} waiting, {self.source_in_flight} being handled"

    def dead_letter_line(self) -> str:
        view = self.dead_letters
        if view.empty:
            return "empty"
        line = f"{view.visible} waiting"
        if view.in_flight:
            line += f", {view.in_flight} in flight (held by a reader, e.g. a redrive running)"
        if view.visible > len(view.letters) + len(view.unreadable):
            line += f"; reasons below from a sample of {len(view.letters)}"
        return line

    def dead_letters_by_reason(self) -> dict[str, list[DeadLetter]]:
        groups: dict[str, list[DeadLetter]] = {}
        for letter in self.dead_letters.letters:
            groups.setdefault(letter.reason, []).append(letter)
        return dict(sorted(groups.items(), key=lambda item: -len(item[1])))


def _counted(values: Counter[str]) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(values.items()))


def _queue_counts(sqs: Any, queue_url: str) -> tuple[int, int]:
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


def _line(sfn: Any, summary: dict[str, Any]) -> ExecutionLine:
    events = history(sfn, summary["executionArn"])
    started = next((e for e in events if e["type"] == "ExecutionStarted"), {})
    try:
        event_id = str(json.loads(started["executionStartedEventDetails"]["input"]).get("event_id", ""))
    except (KeyError, TypeError, ValueError, AttributeError):
        event_id = ""
    path = [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
    return ExecutionLine(
        summary["startDate"].isoformat(timespec="milliseconds"), summary["name"], summary["status"], event_id, path
    )


def _event_statuses(dynamodb: Any, table: str) -> Counter[str]:
    """The state table's `status` counts, reading that one attribute (a scan of every item otherwise)."""
    counts: Counter[str] = Counter()
    pages = dynamodb.get_paginator("scan").paginate(
        TableName=table, ConsistentRead=True, ProjectionExpression="#s", ExpressionAttributeNames={"#s": "status"}
    )
    for page in pages:
        counts.update(str(item.get("status", {}).get("S", "?")) for item in page["Items"])
    return counts


def read_status(stack: StackResources, last: int = 20, dead_letter_sample: int = 100) -> StatusReport:
    sfn, sqs = stack.client("stepfunctions"), stack.client("sqs")
    executions = oldest_first(list_executions(sfn, stack.state_machine_arn))
    latest = [_line(sfn, summary) for summary in executions[-last:]] if last else []
    visible, in_flight = _queue_counts(sqs, stack.source_queue_url)
    subscriber_queues = queue_line(sqs, stack.outputs)
    return StatusReport(
        event_statuses=_event_statuses(stack.client("dynamodb"), stack.processed_events_table),
        execution_statuses=Counter(e["status"] for e in executions),
        execution_count=len(executions),
        latest=latest,
        source_visible=visible,
        source_in_flight=in_flight,
        dead_letters=peek(sqs, stack.dead_letter_queue_url, limit=dead_letter_sample, sfn=sfn),
        history_budget=history_budget(sfn, stack.state_machine_arn),
        finished=sum(1 for e in executions if e["status"] in TERMINAL),
        subscriber_queues=subscriber_queues,
        subscriber=outcomes(stack.outputs, stack.client("dynamodb"), sqs, (line.event_id for line in latest))
        if subscriber_queues is not None
        else None,
    )

"""What `onceflow status` shows, read with boto3 only: counts, the latest executions with their
paths, and the dead-letter queue read through the redrive tool's reader.

Nothing here lists every execution or scans a table: the counts come from CloudWatch's AWS/States
metrics, the pending-since index and DescribeTable (onceflow/ops/counts.py), the latest executions
from the first page of ListExecutions (newest first), so `status` takes as long after 20,000
executions as after 20, on AWS as on the local stack."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from onceflow.ops.counts import EventCounts, ExecutionCounts, event_counts, execution_counts
from onceflow.ops.denials import DeniedAccess, read_denials
from onceflow.ops.executions import LIST_PAGE_SIZE, history, history_budget, oldest_first, unlisted
from onceflow.ops.redrive import DeadLetter, QueueView, peek
from onceflow.ops.stack import StackResources
from onceflow.ops.subscriber import SubscriberOutcome, outcomes, queue_line

READS = 8  # status's independent reads, at once
FAN_OUT = 8  # the latest executions' histories, the pending index's shards: requests in flight at once


@dataclass(frozen=True)
class ExecutionLine:
    started: str
    name: str
    status: str
    event_id: str
    path: list[str]


@dataclass(frozen=True)
class StatusReport:
    events: EventCounts
    executions: ExecutionCounts
    latest: list[ExecutionLine]
    source_visible: int
    source_in_flight: int
    dead_letters: QueueView
    history_budget: int | None = None  # what the endpoint keeps (the tag `onceflow start` puts on the state machine)

    @property
    def execution_count(self) -> int:
        return self.executions.started

    @property
    def finished(self) -> int:
        return self.executions.finished

    def histories_line(self) -> str | None:
        """How many executions no longer have a history, and why; None when none can have lost it."""
        if self.history_budget is None or self.finished <= self.history_budget:
            return None
        return (
            f"kept for {self.history_budget} finished executions, those that failed, timed out or were aborted "
            "first, then the newest (history budget, "
            f"`onceflow start --history-budget N`): up to {self.finished - self.history_budget} others have none; "
            "`onceflow trace` lists them with what DescribeExecution still knows"
        )

    # The example subscriber (DeploySubscriber=true): its queues, and its outcome per shown event.
    subscriber_queues: str | None = None
    subscriber: dict[str, SubscriberOutcome] | None = None
    # The local stack's IAM enforcement: each distinct refused request (None on AWS: CloudTrail has them).
    denials: list[DeniedAccess] | None = None

    def denials_line(self) -> str | None:
        if self.denials is None:
            return None
        if not self.denials:
            return "none refused"
        total = sum(d.count for d in self.denials)
        return f"{total} requests refused, {len(self.denials)} distinct (principal, action, resource): below"

    def events_line(self) -> str:
        return self.events.line()

    def executions_line(self) -> str:
        counts = self.executions
        line = f"{counts.started} started" + (f": {_counted(counts.statuses)}" if counts.statuses else "")
        return f"{line} ({counts.source()})"

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


def latest_executions(sfn: Any, state_machine_arn: str, last: int) -> list[dict[str, Any]]:
    """The `last` newest executions (ListExecutions answers newest first), oldest first."""
    executions: list[dict[str, Any]] = []
    request: dict[str, Any] = {"stateMachineArn": state_machine_arn}
    while len(executions) < last:
        try:
            page = sfn.list_executions(**request, maxResults=min(LIST_PAGE_SIZE, last - len(executions)))
        except ClientError as error:
            if unlisted(error):
                return []  # EXPRESS: AWS lists no execution of it
            raise
        executions.extend(page["executions"])
        if not page.get("nextToken"):
            break
        request["nextToken"] = page["nextToken"]
    return oldest_first(executions[:last])


def read_status(stack: StackResources, last: int = 20, dead_letter_sample: int = 100) -> StatusReport:
    """Every read at once (threads: each is a request or a few, none depends on another but the
    subscriber's outcomes on the latest executions); the clients are made first, once."""
    sfn, sqs, dynamodb, cloudwatch = (stack.client(s) for s in ("stepfunctions", "sqs", "dynamodb", "cloudwatch"))
    logs = stack.client("logs") if stack.target.is_local else None
    exact = stack.target.is_local
    with ThreadPoolExecutor(FAN_OUT) as fan_out, ThreadPoolExecutor(READS) as reads:

        def latest_lines() -> list[ExecutionLine]:
            summaries = latest_executions(sfn, stack.state_machine_arn, last) if last else []
            return list(fan_out.map(lambda summary: _line(sfn, summary), summaries))

        latest = reads.submit(latest_lines)
        events = reads.submit(event_counts, dynamodb, stack.processed_events_table, exact, fan_out.map)
        executions = reads.submit(execution_counts, cloudwatch, sfn, stack.state_machine_arn, exact)
        source = reads.submit(_queue_counts, sqs, stack.source_queue_url)
        dead_letters = reads.submit(
            peek, sqs, stack.dead_letter_queue_url, limit=dead_letter_sample, sfn=sfn, map_=fan_out.map
        )
        budget = reads.submit(history_budget, sfn, stack.state_machine_arn)
        subscriber_queues = reads.submit(queue_line, sqs, stack.outputs)
        denials = reads.submit(read_denials, logs) if logs is not None else None
        lines = latest.result()
        subscriber = (
            outcomes(stack.outputs, dynamodb, sqs, (line.event_id for line in lines))
            if subscriber_queues.result() is not None
            else None
        )
        visible, in_flight = source.result()
        return StatusReport(
            events=events.result(),
            executions=executions.result(),
            latest=lines,
            source_visible=visible,
            source_in_flight=in_flight,
            dead_letters=dead_letters.result(),
            history_budget=budget.result(),
            subscriber_queues=subscriber_queues.result(),
            subscriber=subscriber,
            denials=denials.result() if denials is not None else None,
        )

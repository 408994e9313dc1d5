"""Waiting for executions and reading what they did. Every wait is bounded."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from botocore.exceptions import ClientError

T = TypeVar("T")

TERMINAL = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


class PollTimeout(AssertionError):
    """A bounded wait ran out."""


class ExecutionTimeout(AssertionError):
    """An execution did not finish in time; the message carries its last history events."""


@dataclass(frozen=True)
class ExecutionResult:
    arn: str
    name: str
    status: str
    input: dict[str, Any]
    history: list[dict[str, Any]]
    # DescribeExecution's answer, read when the history has no events (an embedded AWS's history
    # budget pruned it): its dates, status, input, output, error and cause are all that is left.
    described: dict[str, Any] | None = None

    @property
    def pruned(self) -> bool:
        return not self.history and self.described is not None

    @property
    def path(self) -> list[str]:
        """The states entered, in order."""
        return [e["stateEnteredEventDetails"]["name"] for e in self.history if "stateEnteredEventDetails" in e]

    def task_failures(self, state: str | None = None) -> list[dict[str, Any]]:
        """TaskFailed details (error, cause), optionally only for one state."""
        failures, current = [], None
        for event in self.history:
            if "stateEnteredEventDetails" in event:
                current = event["stateEnteredEventDetails"]["name"]
            if event["type"] == "TaskFailed" and (state is None or current == state):
                failures.append(event["taskFailedEventDetails"])
        return failures

    def count_in_state(self, event_type: str, state: str) -> int:
        """How many history events of `event_type` happened while in `state`."""
        count, current = 0, None
        for event in self.history:
            if "stateEnteredEventDetails" in event:
                current = event["stateEnteredEventDetails"]["name"]
            if event["type"] == event_type and current == state:
                count += 1
        return count

    def attempts(self, state: str) -> int:
        """How many times the task of `state` was scheduled (1 + retries)."""
        return self.count_in_state("TaskScheduled", state)

    @property
    def error(self) -> str | None:
        for event in reversed(self.history):
            details = event.get("executionFailedEventDetails")
            if details:
                return details.get("error")
        return None


def poll_until(check: Callable[[], T | None], timeout: float, what: str, interval: float = 0.05) -> T:
    """Call `check` until it returns something truthy; raise PollTimeout naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise PollTimeout(f"after {timeout:.0f}s still waiting for {what}")
        time.sleep(interval)


def history(sfn: Any, execution_arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"executionArn": execution_arn, "maxResults": 1000}
    while True:
        page = sfn.get_execution_history(**kwargs)
        events.extend(page["events"])
        token = page.get("nextToken")
        if not token or token == kwargs.get("nextToken"):
            return events
        kwargs["nextToken"] = token


def _describe_tail(sfn: Any, execution_arn: str, last: int = 8) -> str:
    tail = history(sfn, execution_arn)[-last:]
    return json.dumps(tail, default=str, indent=1)


def wait_for(sfn: Any, execution_arn: str, timeout: float = 30.0, poll: float = 0.01) -> ExecutionResult:
    """Poll until the execution ends; on timeout raise with its last history events."""
    deadline = time.monotonic() + timeout
    while True:
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] in TERMINAL:
            return ExecutionResult(
                arn=execution_arn,
                name=described["name"],
                status=described["status"],
                input=json.loads(described.get("input") or "{}"),
                history=history(sfn, execution_arn),
            )
        if time.monotonic() > deadline:
            raise ExecutionTimeout(
                f"execution {execution_arn} still {described['status']} after {timeout}s; last events:\n"
                + _describe_tail(sfn, execution_arn)
            )
        time.sleep(poll)


LIST_PAGE_SIZE = 1000  # ListExecutions' maxResults may be 1 to 1,000: fewest requests
# `onceflow start` tags the local state machine with its history budget (engine/retention.py).
HISTORY_BUDGET_TAG = "onceflow:local-history-budget"


# A history budget keeps these first: the executions an on-call engineer opens (RUNBOOK, "Executions
# failed", "timed out or aborted"), then the newest of the others.
ENDED_BADLY = frozenset({"FAILED", "TIMED_OUT", "ABORTED"})


def histories_kept(statuses: Sequence[str], budget: int, margin: int = 0) -> set[int]:
    """Positions in `statuses` (finished executions, oldest first) whose histories a budget keeps: those
    that ended badly, newest first, then the newest others, `budget` in all (engine/bookkeeping/retention.py
    prunes the rest). `margin` more of each kind are counted kept: executions that may still be waiting
    for the next prune."""
    bad = [i for i, status in enumerate(statuses) if status in ENDED_BADLY]
    good = [i for i, status in enumerate(statuses) if status not in ENDED_BADLY]
    kept_bad = bad[max(len(bad) - budget, 0) :]
    room = budget - len(kept_bad)
    maybe_bad = bad[max(len(bad) - budget - margin, 0) :]
    maybe_good = good[max(len(good) - room - margin, 0) :] if room + margin > 0 else []
    return set(maybe_bad) | set(maybe_good)


def list_executions(sfn: Any, state_machine_arn: str, status: str | None = None) -> list[dict[str, Any]]:
    executions: list[dict[str, Any]] = []
    filters = {"statusFilter": status} if status else {}
    pages = sfn.get_paginator("list_executions").paginate(
        stateMachineArn=state_machine_arn, PaginationConfig={"PageSize": LIST_PAGE_SIZE}, **filters
    )
    for page in pages:
        executions.extend(page["executions"])
    return executions


def oldest_first(executions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(executions, key=lambda e: (e["startDate"], e["executionArn"]))


def history_budget(sfn: Any, state_machine_arn: str) -> int | None:
    """The embedded AWS's history budget, from the tag `onceflow start` puts on the state machine."""
    try:
        tags = sfn.list_tags_for_resource(resourceArn=state_machine_arn).get("tags", [])
    except ClientError:  # a hint only: a role on AWS may not be allowed to read tags
        return None
    value = next((t.get("value") for t in tags if t.get("key") == HISTORY_BUDGET_TAG), None)
    return int(value) if value is not None and value.isdigit() else None


def wait_for_all(sfn: Any, state_machine_arn: str, timeout: float = 60.0) -> list[ExecutionResult]:
    """Wait until no execution of the state machine is running; return them all."""
    deadline = time.monotonic() + timeout
    while True:
        running = [e for e in list_executions(sfn, state_machine_arn) if e["status"] == "RUNNING"]
        if not running:
            break
        if time.monotonic() > deadline:
            raise ExecutionTimeout(
                f"{len(running)} executions still running after {timeout}s, e.g. {running[0]['executionArn']}:\n"
                + _describe_tail(sfn, running[0]["executionArn"])
            )
        time.sleep(0.02)
    return [wait_for(sfn, e["executionArn"]) for e in list_executions(sfn, state_machine_arn)]


def unlisted(error: ClientError) -> bool:
    """ListExecutions refused because the state machine is EXPRESS (API_ListExecutions)."""
    return error.response["Error"]["Code"] == "StateMachineTypeNotSupported"


def stop_running(sfn: Any, state_machine_arns: Iterable[str]) -> int:
    """Stop what still runs (test teardown: a leftover execution writes into the next test)."""
    stopped = 0
    for arn in state_machine_arns:
        try:
            executions = list_executions(sfn, arn)
        except ClientError as error:
            if unlisted(error):
                continue  # Express: its executions are neither listed nor stopped (API_StopExecution)
            raise
        for execution in executions:
            if execution["status"] == "RUNNING":
                sfn.stop_execution(executionArn=execution["executionArn"], error="Onceflow.Teardown")
                stopped += 1
    return stopped

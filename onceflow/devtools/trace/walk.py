"""One execution's history read as steps: the states it entered, in order, with what happened."""

from __future__ import annotations

import contextlib
import itertools
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from onceflow.devtools.trace.graph import START_ID, Graph
from onceflow.ops.executions import ExecutionResult

_EXECUTION_ENDS = ("ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted")


@dataclass(frozen=True)
class Failure:
    error: str
    cause: str


@dataclass
class Step:
    """One entry into a state: its input and output, the task attempts and their failures."""

    number: int
    state: str
    type: str
    entered: datetime | None
    input: str | None
    exited: datetime | None = None
    output: str | None = None
    attempts: int = 0
    failures: list[Failure] = field(default_factory=list)
    failed: bool = False  # the last attempt failed: the state left through a Catch (or the execution ended)
    edge_out: str | None = None  # id of the edge to the next step

    @property
    def retries(self) -> int:
        return max(self.attempts - 1, 0)

    @property
    def duration_ms(self) -> float | None:
        if self.entered is None or self.exited is None:
            return None
        return (self.exited - self.entered).total_seconds() * 1000


@dataclass
class ExecutionTrace:
    result: ExecutionResult
    steps: list[Step]
    edges: list[str]  # edge ids in the order taken, starting with the start edge
    started: datetime | None
    stopped: datetime | None
    output: str | None
    error: str | None
    cause: str | None

    @property
    def name(self) -> str:
        return self.result.name

    @property
    def pruned(self) -> bool:
        """Its history is gone (a history budget): no steps, no path; DescribeExecution's facts only."""
        return self.result.pruned

    @property
    def status(self) -> str:
        return self.result.status

    @property
    def retries(self) -> int:
        return sum(step.retries for step in self.steps)

    @property
    def failures(self) -> int:
        return sum(len(step.failures) for step in self.steps)

    @property
    def path(self) -> list[str]:
        return [step.state for step in self.steps]

    def interest(self) -> tuple[int, int, int, int]:
        """Higher is more worth showing: failed, then retried, then errors met, then longer."""
        return (int(self.status not in ("SUCCEEDED", "RUNNING")), int(self.retries > 0), self.failures, len(self.steps))


def event_details(event: dict[str, Any]) -> dict[str, Any]:
    for key in event:
        if key.endswith("EventDetails"):
            return event[key]
    return {}


def _is_task_failure(kind: str) -> bool:
    return not kind.startswith("Execution") and (kind.endswith("Failed") or kind.endswith("TimedOut"))


def _task_event(step: Step, kind: str, details: dict[str, Any]) -> None:
    if step.type == "Task" and kind.endswith("Scheduled"):
        step.attempts += 1
        step.failed = False
    elif step.type == "Task" and kind.endswith("Succeeded"):
        step.failed = False
    elif _is_task_failure(kind) and (step.type == "Task" or kind == f"{step.type}StateFailed"):
        step.failures.append(Failure(str(details.get("error", kind)), str(details.get("cause", ""))))
        step.failed = True


def trace_execution(graph: Graph, result: ExecutionResult) -> ExecutionTrace:
    """States inside a Parallel or Map are not steps, and their task events count for nothing:
    such a state shows only its own failure (MapStateFailed, ParallelStateFailed)."""
    steps: list[Step] = []
    current: Step | None = None
    started = stopped = None
    output = error = cause = None
    for event in result.history:
        kind, details, when = event["type"], event_details(event), event.get("timestamp")
        if kind == "ExecutionStarted":
            started = when
        elif "stateEnteredEventDetails" in event:
            name = details["name"]
            if name in graph.states:
                state_type = graph.states[name].type
                current = Step(len(steps) + 1, name, state_type, when, details.get("input"))
                steps.append(current)
        elif "stateExitedEventDetails" in event:
            if current is not None and details.get("name") == current.state:
                current.exited, current.output = when, details.get("output")
        elif kind == "ExecutionSucceeded":
            stopped, output = when, details.get("output")
        elif kind in _EXECUTION_ENDS:
            stopped, error, cause = when, details.get("error", kind), details.get("cause", "")
        elif current is not None:
            _task_event(current, kind, details)
    if result.pruned and result.described is not None:
        described = result.described
        started, stopped = described.get("startDate"), described.get("stopDate")
        output, error, cause = described.get("output"), described.get("error"), described.get("cause")
    edges = [graph.transition(START_ID, steps[0].state).id] if steps else []
    for step, following in itertools.pairwise(steps):
        last_error = step.failures[-1].error if step.failed and step.failures else None
        step.edge_out = graph.transition(step.state, following.state, last_error).id
        edges.append(step.edge_out)
    return ExecutionTrace(result, steps, edges, started, stopped, output, error, cause)


def pretty_json(text: str | None, limit: int = 20_000) -> str:
    """Indented JSON when it parses; cut at `limit` characters with a note saying how much is left."""
    if text is None:
        return ""
    with contextlib.suppress(ValueError):
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    if len(text) > limit:
        return text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text

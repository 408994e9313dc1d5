"""Every execution of a state machine read for the trace page, with boto3 only, as fast as the API allows.

ListExecutions pages of 1,000 (the API's maximum) give every execution's name, status and dates;
one GetExecutionHistory per execution gives its steps, read by a few threads at once (the calls
wait on the endpoint, not on this process). An execution whose history has no events has lost it:
on AWS a history always starts with ExecutionStarted, and the embedded AWS of a long run keeps
only the newest histories (`onceflow start --history-budget`). For those, DescribeExecution still
knows the input, output, error and dates, and they are read instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from onceflow.ops.executions import ExecutionResult, history, history_budget, list_executions, oldest_first

READERS = 8

Progress = Callable[[int, int], None]  # (executions read so far, executions in all)


@dataclass(frozen=True)
class Collected:
    executions: list[ExecutionResult]  # oldest first
    pruned: int  # executions whose history is gone (DescribeExecution read instead)
    history_budget: int | None  # as the state machine's tag says, when it has one


def _input_of(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"(input)": text}
    return value if isinstance(value, dict) else {"(input)": value}


def _read(sfn: Any, summary: dict[str, Any]) -> ExecutionResult:
    arn = summary["executionArn"]
    events = history(sfn, arn)
    if events:
        started = next((e for e in events if e["type"] == "ExecutionStarted"), {})
        text = started.get("executionStartedEventDetails", {}).get("input")
        return ExecutionResult(arn, summary["name"], summary["status"], _input_of(text), events)
    described = sfn.describe_execution(executionArn=arn)
    described.pop("ResponseMetadata", None)
    return ExecutionResult(
        arn,
        summary["name"],
        described.get("status", summary["status"]),
        _input_of(described.get("input")),
        [],
        described=described,
    )


def collect(sfn: Any, state_machine_arn: str, progress: Progress | None = None, readers: int = READERS) -> Collected:
    listed = oldest_first(list_executions(sfn, state_machine_arn))
    if progress:
        progress(0, len(listed))
    results: list[ExecutionResult] = []
    with ThreadPoolExecutor(max_workers=readers, thread_name_prefix="trace-reader") as pool:
        for result in pool.map(lambda summary: _read(sfn, summary), listed):
            results.append(result)
            if progress:
                progress(len(results), len(listed))
    pruned = sum(1 for r in results if r.described is not None)
    return Collected(results, pruned, history_budget(sfn, state_machine_arn))

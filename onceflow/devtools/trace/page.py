"""write_trace: executions of a state machine drawn onto its graph, as one self-contained HTML page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from onceflow.devtools.trace.aggregate import aggregate
from onceflow.devtools.trace.graph import build_graph
from onceflow.devtools.trace.render import render_page
from onceflow.devtools.trace.walk import ExecutionTrace, trace_execution
from onceflow.ops.executions import ExecutionResult, history, list_executions

DETAIL_LIMIT = 100


def collect_executions(sfn: Any, state_machine_arn: str) -> list[ExecutionResult]:
    """Every execution of the state machine with its full history, oldest first; running ones included."""
    listed = sorted(list_executions(sfn, state_machine_arn), key=lambda e: (e["startDate"], e["executionArn"]))
    results = []
    for summary in listed:
        # One call per execution: the input is in the history's ExecutionStarted event.
        events = history(sfn, summary["executionArn"])
        started = next((e for e in events if e["type"] == "ExecutionStarted"), {})
        text = started.get("executionStartedEventDetails", {}).get("input") or "{}"
        results.append(
            ExecutionResult(
                arn=summary["executionArn"],
                name=summary["name"],
                status=summary["status"],
                input=json.loads(text),
                history=events,
            )
        )
    return results


def pick_selected(traces: list[ExecutionTrace], selected: str | None) -> int | None:
    """The execution named (by name or ARN), or else the most interesting: failed, retried, errors met."""
    if not traces:
        return None
    if selected is not None:
        for index, trace in enumerate(traces):
            if selected in (trace.name, trace.result.arn):
                return index
        raise ValueError(f"no execution named {selected!r} among the {len(traces)} given")
    return max(range(len(traces)), key=lambda i: (traces[i].interest(), -i))


def _title(executions: list[ExecutionResult]) -> str:
    parts = executions[0].arn.split(":") if executions else []
    name = parts[6] if len(parts) > 7 else "state machine"
    return f"Onceflow trace: {name}"


def write_trace(
    definition: dict[str, Any],
    executions: list[ExecutionResult],
    path: Path,
    selected: str | None = None,
    *,
    title: str | None = None,
    detail_limit: int = DETAIL_LIMIT,
    subscriber: Mapping[str, str] | None = None,
) -> Path:
    """Write the page to `path` and return it.

    `selected` names the execution shown step by step (name or ARN); by default the most
    interesting one. Executions are listed oldest first. Inputs and outputs are embedded for at
    most `detail_limit` executions, the most interesting first (and always the selected one);
    the others show their steps and errors only. `subscriber` is the example subscriber's outcome
    per event_id (onceflow/ops/subscriber.py), shown with each execution of that event.
    """
    graph = build_graph(definition)
    traces = sorted(
        (trace_execution(graph, result) for result in executions),
        key=lambda t: t.started.timestamp() if t.started else float("inf"),
    )
    stats = aggregate(graph, traces)
    chosen = pick_selected(traces, selected)
    ranked = sorted(range(len(traces)), key=lambda i: (traces[i].interest(), -i), reverse=True)
    detailed = set(ranked[:detail_limit]) | ({chosen} if chosen is not None else set())
    html = render_page(title or _title(executions), graph, traces, stats, chosen, detailed, subscriber)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path

"""write_trace: executions of a state machine drawn onto its graph, as one self-contained HTML page."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from onceflow.devtools.trace.aggregate import aggregate
from onceflow.devtools.trace.collect import collect
from onceflow.devtools.trace.graph import build_graph
from onceflow.devtools.trace.render import render_page
from onceflow.devtools.trace.walk import ExecutionTrace, trace_execution
from onceflow.ops.executions import ExecutionResult

DETAIL_LIMIT = 100


def collect_executions(sfn: Any, state_machine_arn: str) -> list[ExecutionResult]:
    """Every execution of the state machine with its full history (or, where it was pruned, what
    DescribeExecution says), oldest first; running ones included. See collect.py."""
    return collect(sfn, state_machine_arn).executions


def detail_choice(traces: list[ExecutionTrace], chosen: int | None, limit: int) -> set[int]:
    """Which executions keep their inputs and outputs on the page: the chosen one, one of every
    path, every error met, every status of the pruned, then the most interesting up to `limit`."""
    ranked = sorted(range(len(traces)), key=lambda i: (traces[i].interest(), -i), reverse=True)
    picked: set[int] = {chosen} if chosen is not None else set()
    covered: set[object] = set()
    for i in ranked:
        trace = traces[i]
        kinds: set[object] = {("pruned", trace.status)} if trace.pruned else {("path", tuple(trace.path))}
        kinds |= {("error", name) for name in {f.error for s in trace.steps for f in s.failures} | {trace.error}}
        kinds.discard(("error", None))
        if kinds - covered:
            picked.add(i)
            covered |= kinds
    for i in ranked:
        if len(picked) >= max(limit, len(picked)):
            break
        picked.add(i)
    return picked


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
    history_budget: int | None = None,
    subscriber: Mapping[str, str] | None = None,
    live: Mapping[str, object] | None = None,
) -> Path:
    """Write the page to `path` and return it.

    `selected` names the execution shown step by step (name or ARN); by default the most
    interesting one. The page lists executions newest first. Inputs and outputs are embedded for
    one execution of every path, every error and every status of the pruned (and always the
    selected one), then the most interesting up to `detail_limit`; the others show their steps,
    events and errors, and name the command that shows the rest. `history_budget` is what the
    endpoint keeps (collect.py reads it), said beside the count of executions without a history. `subscriber` is the example
    subscriber's outcome per event_id (onceflow/ops/subscriber.py), shown with each execution of it.
    `live` ({"every": seconds, "written": ISO time}): the page reloads itself that often (trace --watch).
    The file is replaced whole (written beside it, then renamed), so a reload never reads half a page.
    """
    graph = build_graph(definition)
    traces = sorted(
        (trace_execution(graph, result) for result in executions),
        key=lambda t: t.started.timestamp() if t.started else float("inf"),
    )
    stats = aggregate(graph, traces)
    chosen = pick_selected(traces, selected)
    detailed = detail_choice(traces, chosen, detail_limit)
    html = render_page(
        title or _title(executions), graph, traces, stats, chosen, detailed, history_budget, subscriber, live
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(html, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path

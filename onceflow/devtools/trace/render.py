"""The HTML around the graph: status summary, the chosen execution step by step, and tables."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from html import escape

from onceflow.devtools.trace.aggregate import RunStats
from onceflow.devtools.trace.assets import CSS, JS
from onceflow.devtools.trace.graph import START_ID, Graph
from onceflow.devtools.trace.svg import PathMarks, draw_graph, edge_dom_id, node_id
from onceflow.devtools.trace.walk import ExecutionTrace, Failure, Step, pretty_json

_KIND_NAMES = {
    "start": "start",
    "next": "Next",
    "choice": "Choice rule",
    "default": "Default",
    "catch": "Catch",
    "retry": "Retry",
    "other": "not in the definition",
}


# How a state fared on the selected execution's path; worst first (a state entered twice shows the worst).
STATUS_ORDER = ("failed", "caught", "retried", "running", "succeeded")
STATUS_LEGEND = {
    "succeeded": "succeeded",
    "retried": "succeeded after retries",
    "caught": "failed, caught (left through a Catch)",
    "failed": "failed: the execution ended here",
    "running": "running",
}


def step_status(trace: ExecutionTrace, step: Step) -> str:
    last = step.number == len(trace.steps)
    if last and trace.status == "RUNNING":
        return "running"
    if last and trace.status != "SUCCEEDED":
        return "failed"
    if step.failed:
        return "caught"
    return "retried" if step.failures else "succeeded"


def path_marks(graph: Graph, trace: ExecutionTrace) -> PathMarks:
    marks = PathMarks(edges=set(trace.edges))
    if trace.steps:
        marks.states[START_ID] = ""  # on the path, no status of its own
    for step in trace.steps:
        status = step_status(trace, step)
        earlier = marks.states.get(step.state)
        if earlier is None or STATUS_ORDER.index(status) < STATUS_ORDER.index(earlier):
            marks.states[step.state] = status
        if step.retries and (loop := graph.retry_edge(step.state)) is not None:
            marks.edges.add(loop.id)
    return marks


def execution_json(graph: Graph, trace: ExecutionTrace, path_index: int, detailed: bool) -> dict[str, object]:
    """Everything the page needs to show one execution; inputs and outputs only when `detailed`."""
    marks = path_marks(graph, trace)
    index = {name: i for i, name in enumerate(graph.states)}
    duration = (trace.stopped - trace.started).total_seconds() * 1000 if trace.started and trace.stopped else None
    steps = []
    for step in trace.steps:
        via = _via_text(graph, step)
        row: list[object] = [
            index[step.state],
            step.type,
            step.attempts,
            [[f.error, f.cause] for f in step.failures],
            None if step.duration_ms is None else round(step.duration_ms),
            step_status(trace, step),
            via,
        ]
        if detailed:
            row += [pretty_json(step.input), pretty_json(step.output) if step.output is not None else None]
        steps.append(row)
    return {
        "name": trace.name,
        "arn": trace.result.arn,
        "status": trace.status,
        "event_id": str(trace.result.input.get("event_id", "")),
        "started": _time(trace.started),
        "ms": None if duration is None else round(duration),
        "error": trace.error,
        "cause": trace.cause,
        "path": path_index,
        "retries": trace.retries,
        "failures": trace.failures,
        "detailed": detailed,
        "input": json.dumps(trace.result.input) if detailed else None,
        "output": trace.output if detailed else None,
        "states": {node_id(graph, name): mark for name, mark in marks.states.items()},
        "edges": sorted(edge_dom_id(graph.edge(e)) for e in marks.edges),
        "steps": steps,
    }


def _time(value: datetime | None) -> str:
    return value.isoformat(timespec="milliseconds") if value else "—"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def _via_text(graph: Graph, step: Step) -> str:
    if step.edge_out is None:
        return ""
    edge = graph.edge(step.edge_out)
    how = {
        "next": "",
        "choice": f" — choice {edge.label}",
        "default": " — Default: no rule matched",
        "catch": f" — caught by Catch [{edge.label}]",
        "other": " — not in the definition",
    }.get(edge.kind, "")
    return f"→ {edge.target}{how}"


def _via(graph: Graph, step: Step) -> str:
    text = _via_text(graph, step)
    return f'<div class="via">{escape(text)}</div>' if text else ""


def _pre(title: str, text: str | None, open_: bool = False) -> str:
    if text is None:
        return ""
    return (
        f"<details{' open' if open_ else ''}><summary>{title}</summary><pre>{escape(pretty_json(text))}</pre></details>"
    )


def _shorten(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _failures(failures: list[Failure]) -> str:
    """Consecutive failed attempts with the same error on one line; every cause one click away."""
    groups: list[list[Failure]] = []
    for failure in failures:
        if groups and groups[-1][0].error == failure.error:
            groups[-1].append(failure)
        else:
            groups.append([failure])
    parts, attempt = [], 1
    for group in groups:
        first, last = attempt, attempt + len(group) - 1
        which = f"attempt {first}" if first == last else f"attempts {first}–{last}"
        parts.append(
            f'<div class="failure">{which} failed: <b>{escape(group[0].error)}</b> — {escape(_shorten(group[0].cause))}</div>'
        )
        if len(group) > 1:
            causes = "\n".join(f"{first + i}: {f.cause}" for i, f in enumerate(group))
            parts.append(f"<details><summary>all {len(group)} causes</summary><pre>{escape(causes)}</pre></details>")
        attempt = last + 1
    return "".join(parts)


def _step(graph: Graph, step: Step, mark: str, detailed: bool) -> str:
    attempts = f" · {step.attempts} attempts" if step.attempts > 1 else ""
    failures = _failures(step.failures)
    body = _pre("Input", step.input) + _pre("Output", step.output) if detailed else ""
    return (
        f'<li class="step {mark}" data-state="{escape(step.state)}">'
        f'<div class="step-head"><span class="step-no">{step.number}</span><h3>{escape(step.state)}</h3>'
        f'<span class="meta">{escape(step.type)} · {_ms(step.duration_ms)}{attempts}</span></div>'
        f"{failures}{_via(graph, step)}{body}</li>"
    )


def _step_mark(trace: ExecutionTrace, step: Step) -> str:
    return "st-" + step_status(trace, step)


def render_execution(
    graph: Graph, trace: ExecutionTrace, index: int, shown: bool, detailed: bool, subscriber: str | None = None
) -> str:
    steps = "".join(_step(graph, s, _step_mark(trace, s), detailed) for s in trace.steps)
    duration = (trace.stopped - trace.started).total_seconds() * 1000 if trace.started and trace.stopped else None
    facts = [("Status", f'<b class="status-{escape(trace.status)}">{escape(trace.status)}</b>')]
    if "event_id" in trace.result.input:
        facts.append(("event_id", escape(str(trace.result.input["event_id"]))))
    if subscriber:
        facts.append(("Subscriber", escape(subscriber)))
    facts += [
        ("Started", _time(trace.started)),
        ("Duration", _ms(duration)),
        ("Steps", f"{len(trace.steps)} states, {trace.retries} retries, {trace.failures} failed attempts"),
    ]
    if trace.error:
        facts.append(("Error", f'<span class="failure">{escape(trace.error)}: {escape(trace.cause or "")}</span>'))
    facts.append(("ARN", f"<code>{escape(trace.result.arn)}</code>"))
    note = "" if detailed else '<p class="empty">Inputs and outputs are left out for this execution (page size).</p>'
    execution_io = (
        (_pre("Execution input", json.dumps(trace.result.input)) + _pre("Execution output", trace.output))
        if detailed
        else ""
    )
    return (
        f'<section class="execution" data-index="{index}" data-name="{escape(trace.name)}"{"" if shown else " hidden"}>'
        f"<h3>{escape(trace.name)}</h3><dl>"
        + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
        + f'</dl>{execution_io}{note}<ol class="steps">{steps}</ol></section>'
    )


def _status_chips(stats: RunStats) -> str:
    chips = [f'<span class="chip">{stats.total} executions</span>']
    chips += [
        f'<span class="chip status-{escape(s)}" data-status="{escape(s)}" data-count="{n}">{n} {escape(s)}</span>'
        for s, n in sorted(stats.statuses.items())
    ]
    chips.append(f'<span class="chip">{len(stats.paths)} distinct paths</span>')
    return '<div class="chips">' + "".join(chips) + "</div>"


def _executions_table(traces: list[ExecutionTrace], paths: list[tuple[str, ...]]) -> str:
    """Filter controls and an empty table: the page's script fills it from the data (fast at 5,000)."""
    statuses = sorted({t.status for t in traces})
    status_options = "".join(f'<option value="{escape(s)}">{escape(s)}</option>' for s in statuses)
    path_options = "".join(
        f'<option value="{i}">path {i + 1}: {escape(_path_label(path))}</option>' for i, path in enumerate(paths)
    )
    head = (
        "<tr><th>Started</th><th>Execution</th><th>event_id</th><th>Status</th><th>Path</th>"
        '<th class="num">Retries</th><th>Error</th></tr>'
    )
    return (
        '<div class="filters">'
        '<input id="search" type="search" placeholder="Search name or event_id" aria-label="Search name or event_id">'
        f'<select id="status-filter" aria-label="Status"><option value="">every status</option>{status_options}</select>'
        f'<select id="path-filter" aria-label="Path"><option value="">every path</option>{path_options}</select>'
        '<span id="match-count" class="meta"></span></div>'
        f'<div class="scroll"><table id="executions"><thead>{head}</thead><tbody></tbody></table></div>'
    )


def _path_label(path: tuple[str, ...]) -> str:
    if len(path) <= 3:
        return " → ".join(path)
    return f"{path[0]} → … → {path[-2]} → {path[-1]} ({len(path)} states)"


def _paths_table(stats: RunStats, traces: list[ExecutionTrace]) -> str:
    first = {}
    for i, t in enumerate(traces):
        first.setdefault(tuple(t.path), i)
    rows = []
    for path, count in stats.paths.most_common():
        statuses = ", ".join(f"{n} {s}" for s, n in sorted(stats.path_statuses[path].items()))
        rows.append(
            f'<tr class="pick" tabindex="0" data-index="{first[path]}" title="Show an execution that took this path">'
            f'<td class="num">{count}</td><td>{escape(statuses)}</td><td>{escape(" → ".join(path))}</td></tr>'
        )
    head = '<tr><th class="num">Executions</th><th>Status</th><th>Path (click: show one)</th></tr>'
    return f'<div class="scroll"><table id="paths"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'


def _transitions_table(graph: Graph, stats: RunStats) -> str:
    rows = []
    for e in graph.edges:
        counted = stats.edges[e.id]
        source = "Start" if e.source == START_ID else e.source
        rows.append(
            f'<tr class="transition" data-source="{escape(e.source)}" data-target="{escape(e.target)}" '
            f'data-kind="{e.kind}" data-executions="{counted.executions}" data-traversals="{counted.traversals}">'
            f"<td>{escape(source)}</td><td>{escape(e.target)}</td><td>{_KIND_NAMES[e.kind]}</td>"
            f'<td>{escape(e.label)}</td><td class="num">{counted.executions}</td><td class="num">{counted.traversals}</td></tr>'
        )
    head = (
        '<tr><th>From</th><th>To</th><th>Kind</th><th>Condition / errors</th><th class="num">Executions</th>'
        '<th class="num">Times</th></tr>'
    )
    return (
        f'<div class="scroll"><table id="transitions"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


def _states_table(graph: Graph, stats: RunStats) -> str:
    rows = []
    for name, state in graph.states.items():
        if name == START_ID:
            continue
        s = stats.states[name]
        errors = ", ".join(f"{e} ×{n}" for e, n in s.errors.most_common())
        ended = ", ".join(f"{n} {status}" for status, n in sorted(s.ended.items()))
        rows.append(
            f'<tr class="state-row" data-state="{escape(name)}"><td>{escape(name)}</td><td>{escape(state.subtitle)}</td>'
            f'<td class="num">{s.executions}</td><td class="num">{s.visits}</td><td class="num">{s.retries}</td>'
            f"<td>{escape(errors)}</td><td>{escape(ended)}</td></tr>"
        )
    head = (
        '<tr><th>State</th><th>Type</th><th class="num">Executions</th><th class="num">Entries</th>'
        '<th class="num">Retries</th><th>Errors</th><th>Ended here</th></tr>'
    )
    return f'<div class="scroll"><table id="states"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'


def _legend() -> str:
    items = [
        ("Next", "#4b5563", ""),
        ("Choice rule", "#2563eb", ""),
        ("Default", "#2563eb", "7 4"),
        ("Catch", "#dc2626", "5 3"),
        ("Retry loop", "#d97706", "4 3"),
    ]
    parts = [
        f'<span><svg width="34" height="10"><line x1="0" y1="5" x2="34" y2="5" stroke="{c}" stroke-width="2.5" '
        f'stroke-dasharray="{d}"/></svg> {n}</span>'
        for n, c, d in items
    ]
    parts += [
        f'<span class="swatch-item" data-status="{status}"><i class="swatch st-{status}"></i> {escape(text)}</span>'
        for status, text in STATUS_LEGEND.items()
    ]
    parts.append(
        '<span class="swatch-item"><i class="swatch unentered"></i> not entered by the selected execution</span>'
    )
    parts.append("<span>numbers on arrows: executions (times, when looped); thickness follows executions</span>")
    parts.append("<span>dark badge: executions that entered the state</span>")
    parts.append("<span>click a state: its input, output, errors and retries in the selected execution</span>")
    return '<div class="legend">' + "".join(parts) + "</div>"


def _script_json(value: object) -> str:
    """JSON safe inside <script>: no `<`, `>` or `&` left to end the element early."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_page(
    title: str,
    graph: Graph,
    traces: list[ExecutionTrace],
    stats: RunStats,
    selected: int | None,
    detailed: set[int],
    subscriber: Mapping[str, str] | None = None,
) -> str:
    """`subscriber`: the example subscriber's outcome per event_id (onceflow/ops/subscriber.py), if deployed."""
    subscriber = subscriber or {}
    chosen = traces[selected] if selected is not None else None
    marks = path_marks(graph, chosen) if chosen else PathMarks()
    svg = draw_graph(graph, stats, marks)
    paths = [path for path, _ in stats.paths.most_common()]
    path_index = {path: i for i, path in enumerate(paths)}
    # Only the selected execution is written as HTML; the script draws any other from the data.
    chosen_event = str(chosen.result.input.get("event_id", "")) if chosen else ""
    section = (
        render_execution(graph, chosen, selected, True, selected in detailed, subscriber.get(chosen_event))
        if chosen
        else ""
    )
    data = {
        "states": list(graph.states),
        "paths": [list(path) for path in paths],
        "selected": selected,
        "executions": [
            execution_json(graph, t, path_index[tuple(t.path)], i in detailed) for i, t in enumerate(traces)
        ],
    }
    for execution in data["executions"]:  # type: ignore[attr-defined]
        if execution["event_id"] in subscriber:
            execution["subscriber"] = subscriber[execution["event_id"]]
    selected_name = escape(chosen.name) if chosen else "none"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{CSS}</style></head>
<body><header><h1>{escape(title)}</h1>
<p class="sub">The state machine drawn from its definition, with the run laid over it. Pick an execution in the list;
click a state in the graph for its details.</p>
{_status_chips(stats)}</header>
<main>
<div class="card"><h2>Graph</h2>{_legend()}<div class="graph-scroll">{svg}</div></div>
<div class="top">
<div class="stack">
<div class="card" id="state-details"><h2>State details</h2><p class="empty">Click a state in the graph.</p></div>
<div class="card" id="selected"><h2>Selected execution: <span id="selected-name">{selected_name}</span></h2>
<div id="execution-view">{section or '<p class="empty">No executions.</p>'}</div></div>
</div>
<div class="stack">
<div class="card"><h2>Executions</h2>{_executions_table(traces, paths)}</div>
<div class="card"><h2>Paths taken</h2>{_paths_table(stats, traces)}</div>
</div>
</div>
<div class="card"><h2>Transitions</h2>{_transitions_table(graph, stats)}</div>
<div class="card"><h2>States</h2>{_states_table(graph, stats)}</div>
</main>
<script type="application/json" id="trace-data">{_script_json(data)}</script>
<script>{JS}</script>
</body></html>
"""

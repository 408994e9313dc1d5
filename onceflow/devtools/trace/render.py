"""The HTML around the graph: status summary, the chosen execution step by step, and tables."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from html import escape

from onceflow.devtools.trace.aggregate import RunStats
from onceflow.devtools.trace.assets import CSS, JS
from onceflow.devtools.trace.graph import START_ID, Graph
from onceflow.devtools.trace.svg import PathMarks, draw_graph
from onceflow.devtools.trace.walk import ExecutionTrace, Failure, Step, event_details, pretty_json

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


def _errors_met(trace: ExecutionTrace) -> list[str]:
    names = {failure.error for step in trace.steps for failure in step.failures}
    if trace.error:
        names.add(trace.error)
    return sorted(names)


def _failed_at(graph: Graph, trace: ExecutionTrace) -> list[int]:
    """States where an attempt failed or where the execution ended badly."""
    index = graph.index
    failed = {index[s.state] for s in trace.steps if s.failures}
    if trace.steps and trace.status not in ("SUCCEEDED", "RUNNING"):
        failed.add(index[trace.steps[-1].state])
    return sorted(failed)


def _event_summary(details: dict[str, object]) -> str:
    """What the events table shows beside a failure; other events' summary is their step's state."""
    if "error" in details or "cause" in details:
        return _shorten(f"{details.get('error', '')}: {details.get('cause', '')}", 200)
    return ""


def events_json(graph: Graph, trace: ExecutionTrace, event_types: dict[str, int], detailed: bool) -> list[list[object]]:
    """[type index, ms since the execution started, step number (0: none)(, failure summary(, details JSON))];
    the event's id is its position (+1), as Step Functions numbers them."""
    rows: list[list[object]] = []
    step = 0
    for event in trace.result.history:
        kind = str(event["type"])
        details = event_details(event)
        if "stateEnteredEventDetails" in event and details.get("name") in graph.states:
            step += 1
        when = event.get("timestamp")
        elapsed = (
            round((when - trace.started).total_seconds() * 1000)
            if isinstance(when, datetime) and trace.started
            else None
        )
        row: list[object] = [event_types.setdefault(kind, len(event_types)), elapsed, step]
        summary = _event_summary(details)
        if summary or (detailed and details):
            row.append(summary)
        if detailed and details:
            row.append(pretty_json(json.dumps(details, default=str), limit=4000))
        rows.append(row)
    return rows


def execution_json(
    graph: Graph, trace: ExecutionTrace, path_index: int, detailed: bool, event_types: dict[str, int]
) -> dict[str, object]:
    """Everything the page needs to show one execution; inputs and outputs only when `detailed`."""
    marks = path_marks(graph, trace)
    index = graph.index
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
    output = trace.output if detailed else None
    return {
        "name": trace.name,
        "arn": trace.result.arn,  # without the run's common prefix (the page's data.arnPrefix)
        "status": trace.status,
        "event_id": str(trace.result.input.get("event_id", "")),
        "started": _time(trace.started),
        "ms": None if duration is None else round(duration),  # the page adds it to `started` for the stop
        "error": trace.error,
        "cause": trace.cause,
        "pruned": trace.pruned,
        "path": path_index,
        "retries": trace.retries,
        "failures": trace.failures,
        "errors": _errors_met(trace),
        "entered": sorted({index[s.state] for s in trace.steps}),
        "failed": _failed_at(graph, trace),
        "detailed": detailed,
        "input": pretty_json(json.dumps(trace.result.input)) if detailed else None,
        "output": pretty_json(output) if output is not None else None,
        "states": {graph.index[name]: mark for name, mark in marks.states.items()},  # node-<index>
        "edges": sorted(int(e[1:]) for e in marks.edges),  # edge-e<number>
        "steps": steps,
        "events": events_json(graph, trace, event_types, detailed),
    }


# An execution's fields left out of the page's data when they have these values (the script puts them back).
EXECUTION_DEFAULTS: dict[str, object] = {
    "event_id": "",
    "ms": None,
    "error": None,
    "cause": None,
    "pruned": False,
    "retries": 0,
    "failures": 0,
    "errors": [],
    "entered": [],
    "failed": [],
    "detailed": False,
    "input": None,
    "output": None,
    "states": {},
    "edges": [],
    "steps": [],
    "events": [],
}


def _time(value: datetime | None) -> str:
    """UTC, so that the page's time filter compares like with like."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds") if value else "—"


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


PRUNED_NOTE = (
    "No history: the endpoint's history budget pruned it, so there are no steps or events; "
    "what DescribeExecution still knows is shown."
)


def left_out_note(name: str) -> str:
    return (
        "Inputs and outputs are left out for this execution (page size); "
        f"`onceflow trace --execution {name}` writes a page that shows them."
    )


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
        ("Stopped", _time(trace.stopped) if trace.stopped else "—"),
        ("Duration", _ms(duration)),
        ("Steps", f"{len(trace.steps)} states, {trace.retries} retries, {trace.failures} failed attempts"),
    ]
    if trace.error:
        facts.append(("Error", f'<span class="failure">{escape(trace.error)}: {escape(trace.cause or "")}</span>'))
    facts.append(("ARN", f"<code>{escape(trace.result.arn)}</code>"))
    note = "" if detailed else f'<p class="empty">{escape(left_out_note(trace.name))}</p>'
    if trace.pruned:
        note += f'<p class="empty pruned">{escape(PRUNED_NOTE)}</p>'
    execution_io = (
        (_pre("Execution input", json.dumps(trace.result.input)) + _pre("Execution output", trace.output))
        if detailed
        else ""
    )
    return (
        f'<section class="execution" data-index="{index}" data-name="{escape(trace.name)}"{"" if shown else " hidden"}>'
        f'<div class="execution-top"><div class="facts-column"><h3>{escape(trace.name)}</h3><dl>'
        + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
        + f'</dl>{execution_io}{note}</div><ol class="steps">{steps}</ol></div></section>'
    )


def _status_chips(stats: RunStats) -> str:
    chips = [f'<span class="chip" id="total-chip">{stats.total} executions</span>']
    chips += [
        f'<span class="chip status-{escape(s)}" data-status="{escape(s)}" data-count="{n}">{n} {escape(s)}</span>'
        for s, n in sorted(stats.statuses.items())
    ]
    chips.append(f'<span class="chip">{len(stats.paths)} distinct paths</span>')
    if stats.pruned:
        chips.append(f'<span class="chip chip-pruned" id="pruned-chip">{stats.pruned} without history</span>')
    return '<div class="chips">' + "".join(chips) + "</div>"


def pruned_notice(stats: RunStats, history_budget: int | None) -> str:
    """Says how many executions lost their history and why; empty when none did."""
    if not stats.pruned:
        return ""
    budget = (
        f"keeps the histories of {history_budget} finished executions, failed, timed-out and aborted ones first, "
        "then the newest"
        if history_budget is not None
        else "did not keep them"
    )
    return (
        f'<p class="notice" id="pruned-note"><b>{stats.pruned} of {stats.total} executions have no history</b>: '
        f"the endpoint {budget} (the embedded AWS's history budget: <code>onceflow start --history-budget N</code>). "
        "They are listed with what DescribeExecution still knows (dates, status, input, output, error) and are "
        f"counted in no path, state or arrow: the graph counts the {stats.traced} executions whose history was read.</p>"
    )


_COLUMNS = [  # (key the script sorts by, heading, css class)
    ("started", "Started (UTC)", ""),
    ("name", "Execution", ""),
    ("event_id", "event_id", ""),
    ("status", "Status", ""),
    ("error", "Error", ""),  # before path and numbers: seen without scrolling sideways
    ("path", "Path", ""),
    ("ms", "Duration", "num"),
    ("retries", "Retries", "num"),
]


def _executions_table(graph: Graph, traces: list[ExecutionTrace], paths: list[tuple[str, ...]]) -> str:
    """Filter controls, a pager and an empty table: the page's script fills it from the data."""
    statuses = sorted({t.status for t in traces})
    status_options = "".join(f'<option value="{escape(s)}">{escape(s)}</option>' for s in statuses)
    path_options = "".join(
        f'<option value="{i}">path {i + 1}: {escape(_path_label(path))}</option>' for i, path in enumerate(paths)
    )
    if any(t.pruned for t in traces):
        path_options += '<option value="-1">no history (pruned)</option>'
    errors = sorted({e for t in traces for e in _errors_met(t)})
    error_options = "".join(f'<option value="{escape(e)}">{escape(e)}</option>' for e in errors)
    state_options = "".join(
        f'<option value="{i}">{escape(name)}</option>' for i, name in enumerate(graph.states) if name != START_ID
    )
    head = "".join(
        f'<th data-sort="{key}" class="sortable {css}" tabindex="0" aria-sort="none">{title}</th>'
        for key, title, css in _COLUMNS
    )
    # The time filter's examples: the run's first and last start, to the second, as the list writes them.
    starts = sorted(_time(t.started)[:19].replace("T", " ") for t in traces if t.started)
    first, last = (starts[0], starts[-1]) if starts else ("2026-01-01 00:00:00", "2026-12-31 23:59:59")
    return (
        '<div class="filters">'
        '<input id="search" type="search" placeholder="Search name or event_id" aria-label="Search name or event_id">'
        f'<select id="status-filter" aria-label="Status"><option value="">every status</option>{status_options}</select>'
        f'<select id="path-filter" aria-label="Path"><option value="">every path</option>{path_options}</select>'
        f'<select id="error-filter" aria-label="Error"><option value="">any error or none</option>'
        f'<option value="*">any error</option>{error_options}</select>'
        f'<select id="state-filter" aria-label="State"><option value="">any state</option>{state_options}</select>'
        '<select id="state-how" aria-label="Entered or failed there">'
        '<option value="entered">entered it</option><option value="failed">failed there</option></select>'
        f'<label class="meta">from <input id="time-from" type="text" placeholder="{first}" size="19" '
        'aria-label="Started at or after (UTC), as the list shows it"></label>'
        f'<label class="meta">to <input id="time-to" type="text" placeholder="{last}" size="19" '
        'aria-label="Started before (UTC), as the list shows it"></label>'
        '<button type="button" id="clear-filters">clear</button></div>'
        '<div class="pager"><button type="button" id="page-newer">← newer</button>'
        '<span id="match-count" class="meta"></span>'
        '<button type="button" id="page-older">older →</button></div>'
        f'<div class="scroll"><table id="executions"><thead><tr>{head}</tr></thead><tbody></tbody></table></div>'
    )


def _path_label(path: tuple[str, ...]) -> str:
    if len(path) <= 3:
        return " → ".join(path)
    return f"{path[0]} → … → {path[-2]} → {path[-1]} ({len(path)} states)"


def _paths_table(stats: RunStats, traces: list[ExecutionTrace]) -> str:
    first = {}
    for i, t in enumerate(traces):
        if not t.pruned:
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
    run = [
        f'<span><svg width="34" height="10"><line x1="0" y1="5" x2="34" y2="5" stroke="{c}" stroke-width="2.5" '
        f'stroke-dasharray="{d}"/></svg> {n}</span>'
        for n, c, d in items
    ]
    run.append("<span>numbers on arrows: executions (times, when looped); thickness follows them</span>")
    run.append('<span><i class="badge-sample">42</i> executions that entered the state</span>')
    run.append(
        '<span id="legend-notes">beside a state, in text: <i class="note-sample warn">↻ retries</i>, '
        '<i class="note-sample bad">✖ errors met there ×N</i>, <i class="note-sample ok">■ N SUCCEEDED here</i> '
        "(executions that ended there)</span>"
    )
    selected = [
        f'<span class="swatch-item" data-status="{status}"><i class="swatch st-{status}"></i> {escape(text)}</span>'
        for status, text in STATUS_LEGEND.items()
    ]
    selected.append(
        '<span class="swatch-item"><i class="swatch unentered"></i> not entered by the selected execution</span>'
    )
    selected.append("<span>click a state: its details in the selected execution, and the run's executions there</span>")
    return (
        '<details class="legend-box" id="legend"><summary>Legend</summary><div class="legend-panel">'
        '<div class="legend"><b class="legend-head">Whole run (grey, numbers):</b>' + "".join(run) + "</div>"
        '<div class="legend"><b class="legend-head">Selected execution (fill and outline):</b>'
        + "".join(selected)
        + "</div></div></details>"
    )


def _graph_bar() -> str:
    """Above the graph: the execution shown, a step through the list, the zoom, the folded legend."""
    zoom = "".join(
        f'<button type="button" id="{key}" title="{escape(title)}">{text}</button>'
        for key, text, title in (
            ("zoom-out", "−", "Zoom out (−, or the wheel)"),
            ("zoom-in", "+", "Zoom in (+, or the wheel)"),
            ("zoom-fit", "Fit", "Fit the whole graph (0)"),
            ("zoom-actual", "100%", "Actual size (1)"),
            ("zoom-path", "Path", "The selected execution's path (p)"),
        )
    )
    return (
        '<div class="graph-bar"><h2>Graph</h2>'
        '<div class="stepper"><button type="button" id="select-newer" title="The newer execution in the list ([)">'
        '← newer</button><span class="meta" id="graph-showing"></span>'
        '<button type="button" id="select-older" title="The older execution in the list (])">older →</button></div>'
        f'<div class="zoom" role="group" aria-label="Zoom">{zoom}<span class="meta" id="zoom-level"></span></div>'
        f"{_legend()}</div>"
    )


LIVE_NOTE = (
    "Live: `onceflow trace --watch` rewrites this page every {every} s and it reloads itself "
    "(selection, filters and zoom kept); last written {written} UTC. Stop the command (Ctrl-C) for a page to share."
)


def _live_note(live: Mapping[str, object] | None) -> str:
    if not live:
        return ""
    text = LIVE_NOTE.format(every=live["every"], written=str(live["written"])[11:19])
    return (
        f'<p class="notice live" id="live-note">{escape(text)} '
        '<button type="button" id="live-pause">pause reloading</button></p>'
    )


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
    history_budget: int | None = None,
    subscriber: Mapping[str, str] | None = None,
    live: Mapping[str, object] | None = None,
) -> str:
    """`subscriber`: the example subscriber's outcome per event_id (onceflow/ops/subscriber.py), if deployed.
    `live`: {"every": seconds, "written": ISO time} while `onceflow trace --watch` rewrites the page."""
    subscriber = subscriber or {}
    chosen = traces[selected] if selected is not None else None
    marks = path_marks(graph, chosen) if chosen else PathMarks()
    svg = draw_graph(graph, stats, marks)
    paths = [path for path, _ in stats.paths.most_common()]
    path_index = {path: i for i, path in enumerate(paths)}
    # The selected execution is written as HTML too (read without a script); the script draws any other.
    chosen_event = str(chosen.result.input.get("event_id", "")) if chosen else ""
    section = (
        render_execution(graph, chosen, selected, True, selected in detailed, subscriber.get(chosen_event))
        if chosen
        else ""
    )
    event_types: dict[str, int] = {}
    executions = [
        execution_json(graph, t, -1 if t.pruned else path_index[tuple(t.path)], i in detailed, event_types)
        for i, t in enumerate(traces)
    ]
    # Execution ARNs are <state machine's execution prefix>:<name>: the prefix is written once.
    prefix = traces[0].result.arn.rsplit(":", 1)[0] + ":" if traces else ""
    if not all(t.result.arn.startswith(prefix) for t in traces):
        prefix = ""
    for execution in executions:
        execution["arn"] = str(execution["arn"])[len(prefix) :]
        if execution["event_id"] in subscriber:
            execution["subscriber"] = subscriber[execution["event_id"]]
        for key, default in EXECUTION_DEFAULTS.items():  # 19,000 pruned executions are mostly defaults
            if execution.get(key) == default:
                del execution[key]
    data = {
        "arnPrefix": prefix,
        "defaults": EXECUTION_DEFAULTS,
        "states": list(graph.states),
        "paths": [list(path) for path in paths],
        "eventTypes": list(event_types),
        "selected": selected,
        "executions": executions,
        "live": dict(live) if live else None,
    }
    selected_name = escape(chosen.name) if chosen else "none"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{CSS}</style></head>
<body><header><h1>{escape(title)}</h1>
<p class="sub">The state machine drawn from its definition, with the run laid over it. Pick an execution in the list
below the graph; click a state for its details. Drag to pan, wheel or + / − to zoom, 0 to fit.</p>
{_status_chips(stats)}{pruned_notice(stats, history_budget)}{_live_note(live)}</header>
<main>
<section class="view">
<div class="card graph-card" id="graph-card">{_graph_bar()}
<div class="graph-viewport" id="graph-viewport" tabindex="0"
 aria-label="State machine graph: drag to pan, wheel or + and − to zoom, 0 to fit, arrows to move">{svg}</div></div>
<div class="card" id="state-details"><h2>State details</h2><p class="empty">Click a state in the graph.</p></div>
</section>
<div class="card" id="selected"><h2>Selected execution: <span id="selected-name">{selected_name}</span></h2>
<div id="execution-view">{section or '<p class="empty">No executions.</p>'}</div></div>
<div class="card" id="list-card"><h2>Executions <span class="meta">newest first; click a heading to sort, a row to show it</span></h2>
{_executions_table(graph, traces, paths)}</div>
<div class="card"><h2>Paths taken</h2>{_paths_table(stats, traces)}</div>
<div class="card"><h2>Transitions</h2>{_transitions_table(graph, stats)}</div>
<div class="card"><h2>States</h2>{_states_table(graph, stats)}</div>
</main>
<script type="application/json" id="trace-data">{_script_json(data)}</script>
<script>{JS}</script>
</body></html>
"""

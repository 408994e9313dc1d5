"""The graph as inline SVG: state boxes with badges, edges styled by kind, counts on the edges."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from html import escape

from onceflow.devtools.trace.aggregate import RunStats, StateStats
from onceflow.devtools.trace.graph import START_ID, Edge, Graph, State
from onceflow.devtools.trace.layout import Box, Layout, Point, layout

BOX_HEIGHT = 46.0
LOOP_ROOM = 30.0
LINE = 14.0
NAME_LINE, SUBTITLE_LINE = 16.0, 14.0
# Long names and resources wrap (between words, after a ':' or a '.'), so a layer of long-named
# states stays narrow enough to read at a zoom that shows most of the graph.
NAME_CHARS, SUBTITLE_CHARS, NOTE_CHARS = 20, 30, 26
_NARROW = set("iljtfrI.,:;'!| ()[]-")
_COLOURS = {
    "start": "#4b5563",
    "next": "#4b5563",
    "choice": "#2563eb",
    "default": "#2563eb",
    "catch": "#dc2626",
    "retry": "#d97706",
    "other": "#7c3aed",
}


@dataclass
class PathMarks:
    """One execution on the graph: the states it entered (with a mark) and the edges it took."""

    states: dict[str, str] = field(default_factory=dict)  # name -> status (render.STATUS_LEGEND)
    edges: set[str] = field(default_factory=set)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """An estimate for a sans-serif font: no font metrics are available when the page is written."""
    units = sum(0.36 if c in _NARROW else 0.78 if c.isupper() or c in "mw" else 0.62 for c in text)
    return units * size * (1.1 if bold else 1.0)


def wrap(text: str, limit: int) -> list[str]:
    """Lines of at most about `limit` characters, broken after a space, ':' or '.'; a longer piece stays whole."""
    pieces, piece = [], ""
    for character in text:
        piece += character
        if character in " :.":
            pieces.append(piece)
            piece = ""
    if piece:
        pieces.append(piece)
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + len(piece.rstrip()) <= limit:
            lines[-1] += piece
        else:
            lines.append(piece)
    return [line.rstrip() for line in lines] or [""]


def node_id(graph: Graph, name: str) -> str:
    return f"node-{graph.index[name]}"


def edge_dom_id(edge: Edge) -> str:
    return f"edge-{edge.id}"


def annotations(stats: StateStats) -> list[tuple[str, str]]:
    """(css class, text) lines shown beside a state: retries, errors by name, where executions ended."""
    lines = []
    if stats.retries:
        plural = "s" if stats.executions_retried != 1 else ""
        lines.append(("note-retry", f"↻ {stats.retries} retries in {stats.executions_retried} execution{plural}"))
    errors = stats.errors.most_common()
    lines += [("note-error", f"✖ {name} ×{count}") for name, count in errors[:3]]
    if len(errors) > 3:
        lines.append(("note-error", f"✖ {len(errors) - 3} more error names (see table)"))
    for status, count in sorted(stats.ended.items()):
        css = "note-ok" if status == "SUCCEEDED" else "note-failed"
        lines.append((css, f"■ {count} {status} here"))
    return lines


def note_lines(notes: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(css, line) for css, text in notes for line in wrap(text, NOTE_CHARS)]


def _box(state: State, notes: list[tuple[str, str]]) -> Box:
    if state.name == START_ID:
        return Box(width=76, height=30)
    names, subtitles = wrap(state.name, NAME_CHARS), wrap(state.subtitle, SUBTITLE_CHARS)
    width = max(max(text_width(line, 13, bold=True) for line in names), max(text_width(line, 11) for line in subtitles))
    lines = note_lines(notes)
    right = 10 + max((text_width(text, 11, bold=True) for _, text in lines), default=0) if lines else 0
    return Box(
        width=max(width + 34, 120),
        height=BOX_HEIGHT + NAME_LINE * (len(names) - 1) + SUBTITLE_LINE * (len(subtitles) - 1),
        left=LOOP_ROOM if state.retriers else 0.0,
        right=right,
        tall=len(lines) * LINE + 4,
    )


def _curve(points: list[Point]) -> str:
    d = f"M{points[0][0]:.1f},{points[0][1]:.1f}"
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if abs(x0 - x1) < 0.5:
            d += f" L{x1:.1f},{y1:.1f}"
        else:
            middle = (y0 + y1) / 2
            d += f" C{x0:.1f},{middle:.1f} {x1:.1f},{middle:.1f} {x1:.1f},{y1:.1f}"
    return d


def _edge_title(graph: Graph, edge: Edge, executions: int, traversals: int) -> str:
    source = "Start" if edge.source == START_ID else edge.source
    text = f"{source} → {edge.target} ({edge.kind})"
    if edge.label:
        text += f": {edge.label}"
    return text + f"\n{executions} executions, {traversals} times"


def _stroke(count: int, most: int) -> float:
    return 1.5 if count == 0 or most == 0 else 2.0 + 5.0 * count / most


def _markers() -> str:
    parts = []
    for kind, colour in _COLOURS.items():
        parts.append(
            f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
            f'markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        )
    return "<defs>" + "".join(parts) + "</defs>"


def _draw_edge(graph: Graph, edge: Edge, points: list[Point], label_at: Point, stats: RunStats, on: bool) -> str:
    counted = stats.edges[edge.id]
    width = _stroke(counted.executions, stats.max_edge_executions())
    used = "used" if counted.executions else "unused"
    classes = f"edge kind-{edge.kind} {used}" + (" onpath" if on else "")
    d = _curve(points)
    parts = [
        f'<g class="{classes}" id="{edge_dom_id(edge)}" data-source="{escape(edge.source)}" '
        f'data-target="{escape(edge.target)}" data-kind="{edge.kind}" '
        f'data-executions="{counted.executions}" data-traversals="{counted.traversals}">',
        f"<title>{escape(_edge_title(graph, edge, counted.executions, counted.traversals))}</title>",
        f'<path class="halo" d="{d}" stroke-width="{width + 8:.1f}"/>',
        f'<path class="line" d="{d}" stroke="{_COLOURS[edge.kind]}" stroke-width="{width:.1f}" '
        f'marker-end="url(#arrow-{edge.kind})"/>',
    ]
    if counted.executions:
        text = str(counted.executions)
        if counted.traversals != counted.executions:
            text += f" ({counted.traversals}×)"
        w = text_width(text, 11, bold=True) + 12
        x, y = label_at
        parts.append(
            f'<rect class="count" x="{x - w / 2:.1f}" y="{y - 9:.1f}" width="{w:.1f}" height="18" rx="9" '
            f'stroke="{_COLOURS[edge.kind]}"/><text class="count" x="{x:.1f}" y="{y + 4:.1f}" '
            f'fill="{_COLOURS[edge.kind]}">{escape(text)}</text>'
        )
    return "".join(parts) + "</g>"


def _draw_loop(edge: Edge, x: float, top: float, box: Box, stats: RunStats, on: bool) -> str:
    counted = stats.edges[edge.id]
    left = x - box.width / 2
    d = (
        f"M{left:.1f},{top + 12:.1f} C{left - 34:.1f},{top + 2:.1f} "
        f"{left - 34:.1f},{top + box.height - 2:.1f} {left:.1f},{top + box.height - 12:.1f}"
    )
    width = 1.5 if counted.traversals == 0 else 3.0
    classes = "edge kind-retry " + ("used" if counted.traversals else "unused") + (" onpath" if on else "")
    title = f"Retry: {edge.label}\n{counted.traversals} retries in {counted.executions} executions"
    return (
        f'<g class="{classes}" id="{edge_dom_id(edge)}" data-source="{escape(edge.source)}" '
        f'data-target="{escape(edge.target)}" data-kind="retry" data-executions="{counted.executions}" '
        f'data-traversals="{counted.traversals}"><title>{escape(title)}</title>'
        f'<path class="halo" d="{d}" stroke-width="{width + 8}"/>'
        f'<path class="line" d="{d}" stroke="{_COLOURS["retry"]}" stroke-width="{width}" stroke-dasharray="4 3" '
        f'marker-end="url(#arrow-retry)"/></g>'
    )


def _state_title(state: State, stats: StateStats) -> str:
    lines = [state.name, state.subtitle]
    if state.comment:
        lines.append(state.comment)
    lines.append(f"entered by {stats.executions} executions, {stats.visits} times")
    lines += [f"Retry {r}" for r in state.retriers]
    return "\n".join(lines)


def _draw_state(graph: Graph, state: State, x: float, top: float, box: Box, stats: RunStats, mark: str | None) -> str:
    counted = stats.states[state.name]
    classes = f"state type-{state.type.lower()} " + ("visited" if counted.executions else "unvisited")
    if mark is not None:
        classes += " onpath" + (f" st-{mark}" if mark else "")
    left = x - box.width / 2
    head = (
        f'<g class="{classes}" id="{node_id(graph, state.name)}" data-state="{escape(state.name)}" '
        f'data-type="{escape(state.type)}" data-executions="{counted.executions}" data-visits="{counted.visits}" '
        f'data-retries="{counted.retries}" data-errors="{escape(json.dumps(dict(counted.errors)))}">'
        f"<title>{escape(_state_title(state, counted))}</title>"
    )
    if state.name == START_ID:
        return (
            head + f'<rect class="box" x="{left:.1f}" y="{top:.1f}" width="{box.width}" height="{box.height}" rx="15"/>'
            f'<text class="start" x="{x:.1f}" y="{top + 19:.1f}">Start</text></g>'
        )
    names = wrap(state.name, NAME_CHARS)
    below = top + 20 + NAME_LINE * (len(names) - 1)
    parts = [
        head,
        f'<rect class="box" x="{left:.1f}" y="{top:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" rx="8"/>',
        _lines("name", x, top + 20, NAME_LINE, names),
        _lines("subtitle", x, below + 16, SUBTITLE_LINE, wrap(state.subtitle, SUBTITLE_CHARS)),
    ]
    if counted.executions:
        badge = str(counted.executions)
        w = max(text_width(badge, 11, bold=True) + 10, 20)
        right = left + box.width
        parts.append(
            f'<rect class="visits" x="{right - w + 6:.1f}" y="{top - 9:.1f}" width="{w:.1f}" height="18" rx="9"/>'
            f'<text class="visits" x="{right - w / 2 + 6:.1f}" y="{top + 4:.1f}">{badge}</text>'
        )
    for i, (css, text) in enumerate(note_lines(annotations(counted))):
        parts.append(
            f'<text class="note {css}" x="{left + box.width + 10:.1f}" y="{top + 12 + i * LINE:.1f}">{escape(text)}</text>'
        )
    return "".join(parts) + "</g>"


def _lines(css: str, x: float, first: float, step: float, lines: list[str]) -> str:
    """One <text> of one or more lines (tspans), so that the state's name reads as one text."""
    if len(lines) == 1:
        return f'<text class="{css}" x="{x:.1f}" y="{first:.1f}">{escape(lines[0])}</text>'
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{first + i * step:.1f}">{escape(line)}</tspan>' for i, line in enumerate(lines)
    )
    return f'<text class="{css}">{spans}</text>'


def draw_graph(graph: Graph, stats: RunStats, marks: PathMarks) -> str:
    """Call after aggregate(): the graph then has every edge the histories used."""
    notes = {name: annotations(stats.states[name]) for name in graph.states}
    boxes = {name: _box(state, notes[name]) for name, state in graph.states.items()}
    plain = [(e.id, e.source, e.target) for e in graph.edges if e.kind != "retry"]
    placed: Layout = layout(list(graph.states), boxes, plain)
    parts = [
        # Sized by its viewport (CSS), zoomed and panned by the page's script through the viewBox; without
        # the script the whole graph fits the viewport.
        f'<svg class="graph" data-width="{placed.width:.0f}" data-height="{placed.height:.0f}" '
        f'viewBox="0 0 {placed.width:.0f} {placed.height:.0f}" role="img" aria-label="State machine graph">',
        _markers(),
    ]
    for edge in graph.edges:
        on = edge.id in marks.edges
        if edge.kind == "retry":
            x, top = placed.centers[edge.source], placed.tops[edge.source]
            parts.append(_draw_loop(edge, x, top, boxes[edge.source], stats, on))
        else:
            route = placed.routes[edge.id]
            parts.append(_draw_edge(graph, edge, route.points, route.label_at, stats, on))
    for name, state in graph.states.items():
        x, top = placed.centers[name], placed.tops[name]
        parts.append(_draw_state(graph, state, x, top, boxes[name], stats, marks.states.get(name)))
    return "".join(parts) + "</svg>"

"""The state machine as a graph read from its ASL: states, and transitions of every kind.

Edge kinds: `start` (into StartAt), `next`, `choice` (one per Choice rule), `default`,
`catch` (one per Catch entry), `retry` (a task's loop onto itself), and `other` for a
transition seen in a history that the definition does not have (a changed definition).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from onceflow.devtools.trace.conditions import describe_retrier, describe_rule, error_matches

START = "Start"
START_ID = "__start__"
EDGE_KINDS = ("start", "next", "choice", "default", "catch", "retry", "other")
_PREFERENCE = {kind: rank for rank, kind in enumerate(("next", "choice", "default", "catch", "start", "other"))}


@dataclass(frozen=True)
class State:
    name: str
    type: str
    comment: str = ""
    resource: str = ""
    retriers: tuple[str, ...] = ()
    terminal: bool = False

    @property
    def subtitle(self) -> str:
        return f"{self.type} · {self.resource}" if self.resource else self.type


@dataclass(frozen=True)
class Edge:
    id: str
    source: str
    target: str
    kind: str
    label: str = ""
    errors: tuple[str, ...] = ()


@dataclass
class Graph:
    start_at: str
    states: dict[str, State]
    edges: list[Edge] = field(default_factory=list)
    # (source, target, error) -> the edge transition() chose: thousands of histories take few pairs
    _transitions: dict[tuple[str, str, str | None], Edge] = field(default_factory=dict, repr=False)

    def add_edge(self, source: str, target: str, kind: str, label: str = "", errors: tuple[str, ...] = ()) -> Edge:
        edge = Edge(f"e{len(self.edges)}", source, target, kind, label, errors)
        self.edges.append(edge)
        self._transitions.clear()  # a new edge may be a better candidate
        return edge

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """Each state's position (the page's data names states by it)."""
        return {name: i for i, name in enumerate(self.states)}

    def edge(self, edge_id: str) -> Edge:
        return self.edges[int(edge_id[1:])]

    def retry_edge(self, state: str) -> Edge | None:
        return next((e for e in self.edges if e.source == state and e.kind == "retry"), None)

    def transition(self, source: str, target: str, error: str | None = None) -> Edge:
        """The edge a history's step from `source` to `target` took; `error` when the state failed.

        A Choice records no rule in the history: two rules with the same target count on the first.
        A step the definition does not allow is added as an `other` edge, so it still shows.
        """
        key = (source, target, error)
        if key not in self._transitions:
            self._transitions[key] = self._transition(source, target, error)
        return self._transitions[key]

    def _transition(self, source: str, target: str, error: str | None) -> Edge:
        candidates = [e for e in self.edges if e.source == source and e.target == target and e.kind != "retry"]
        if error is not None:
            caught = [e for e in candidates if e.kind == "catch" and error_matches(list(e.errors), error)]
            candidates = caught or candidates
        if candidates:
            return min(candidates, key=lambda e: _PREFERENCE[e.kind])
        return self.add_edge(source, target, "other", "not in the definition")


def short_resource(resource: str) -> str:
    """`arn:aws:states:::sns:publish` -> `sns:publish`; a Lambda ARN -> `lambda:<name>`."""
    if resource.startswith("arn:aws:states:::"):
        return resource[len("arn:aws:states:::") :]
    if ":function:" in resource:
        return "lambda:" + resource.split(":function:", 1)[1]
    return resource.rsplit(":", 1)[-1]


def build_graph(definition: dict[str, Any]) -> Graph:
    """Top-level states only: a Parallel or Map state is one node (its branches are not drawn)."""
    states: dict[str, State] = {START_ID: State(START_ID, START)}
    for name, body in definition["States"].items():
        states[name] = State(
            name=name,
            type=body.get("Type", "?"),
            comment=body.get("Comment", ""),
            resource=short_resource(body.get("Resource", "")),
            retriers=tuple(describe_retrier(r) for r in body.get("Retry", [])),
            terminal=body.get("Type") in ("Succeed", "Fail") or bool(body.get("End")),
        )
    graph = Graph(definition["StartAt"], states)
    graph.add_edge(START_ID, definition["StartAt"], "start")
    for name, body in definition["States"].items():
        if body.get("Retry"):
            graph.add_edge(name, name, "retry", "; ".join(graph.states[name].retriers))
        if "Next" in body:
            graph.add_edge(name, body["Next"], "next")
        for number, rule in enumerate(body.get("Choices", []), start=1):
            graph.add_edge(name, rule["Next"], "choice", f"#{number} {describe_rule(rule)}")
        if "Default" in body:
            graph.add_edge(name, body["Default"], "default", "no rule matched")
        for catcher in body.get("Catch", []):
            errors = tuple(catcher.get("ErrorEquals", []))
            graph.add_edge(name, catcher["Next"], "catch", ", ".join(errors), errors)
    return graph

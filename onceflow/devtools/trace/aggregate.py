"""Many executions summed onto the graph: per state, per transition, per final status, per path."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from onceflow.devtools.trace.graph import START_ID, Graph
from onceflow.devtools.trace.walk import ExecutionTrace


@dataclass
class EdgeStats:
    executions: int = 0  # executions that took the edge at least once
    traversals: int = 0  # times it was taken, over all executions (loops count each time)


@dataclass
class StateStats:
    executions: int = 0  # executions that entered the state
    visits: int = 0  # entries, over all executions
    retries: int = 0  # task attempts after the first, over all entries
    executions_retried: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # failed attempts, and execution failures here, by error
    ended: Counter[str] = field(default_factory=Counter)  # executions whose last state this was, by status


@dataclass
class RunStats:
    total: int  # every execution listed, pruned ones included
    statuses: Counter[str]  # of every execution listed
    edges: dict[str, EdgeStats]
    states: dict[str, StateStats]
    paths: Counter[tuple[str, ...]]
    path_statuses: dict[tuple[str, ...], Counter[str]]
    pruned: int = 0  # executions without a history: in `statuses`, in no path, state or edge count

    @property
    def traced(self) -> int:
        """Executions whose history was read: what the graph's numbers count."""
        return self.total - self.pruned

    def max_edge_executions(self) -> int:
        return max((s.executions for s in self.edges.values()), default=0)


def aggregate(graph: Graph, traces: list[ExecutionTrace]) -> RunStats:
    """Call after every trace is built: tracing may add `other` edges to the graph."""
    edges = {edge.id: EdgeStats() for edge in graph.edges}
    states = {name: StateStats() for name in graph.states}
    statuses: Counter[str] = Counter()
    paths: Counter[tuple[str, ...]] = Counter()
    path_statuses: dict[tuple[str, ...], Counter[str]] = {}
    pruned = 0
    for trace in traces:
        statuses[trace.status] += 1
        if trace.pruned:
            pruned += 1
            continue
        path = tuple(trace.path)
        paths[path] += 1
        path_statuses.setdefault(path, Counter())[trace.status] += 1
        for edge_id, taken in Counter(trace.edges).items():
            edges[edge_id].executions += 1
            edges[edge_id].traversals += taken
        retried: dict[str, int] = Counter()
        for step in trace.steps:
            stats = states[step.state]
            stats.visits += 1
            stats.retries += step.retries
            retried[step.state] += step.retries
            stats.errors.update(failure.error for failure in step.failures)
        for name in set(path) | ({START_ID} if path else set()):
            states[name].executions += 1
        for name, count in retried.items():
            if count:
                states[name].executions_retried += 1
                retry_edge = graph.retry_edge(name)
                if retry_edge is not None:
                    edges[retry_edge.id].executions += 1
                    edges[retry_edge.id].traversals += count
        if trace.steps and trace.status != "RUNNING":
            last = states[trace.steps[-1].state]
            last.ended[trace.status] += 1
            if trace.error and not trace.steps[-1].failed:  # an uncaught task error is counted already
                last.errors[trace.error] += 1
    return RunStats(len(traces), statuses, edges, states, paths, path_statuses, pruned)

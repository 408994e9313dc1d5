"""Reading statemachine/pipeline.asl.json as a graph: where each state can go, and what a path costs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from onceflow.local.template import PROJECT_ROOT

ASL_FILE = PROJECT_ROOT / "statemachine" / "pipeline.asl.json"
Document = dict[str, Any]


def load(path: Path = ASL_FILE) -> Document:
    return json.loads(path.read_text())


def successors(state: Document) -> Iterator[str]:
    if "Next" in state:
        yield state["Next"]
    for rule in state.get("Choices", []):
        yield rule["Next"]
    if "Default" in state:
        yield state["Default"]
    for catcher in state.get("Catch", []):
        yield catcher["Next"]


def retrier_worst_delay(retrier: Document) -> float:
    """The longest a retrier can wait in total: every retry at its ceiling (full jitter's worst case).
    AWS: https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html (defaults:
    IntervalSeconds 1, MaxAttempts 3, BackoffRate 2.0; MaxDelaySeconds caps each delay)."""
    interval = retrier.get("IntervalSeconds", 1)
    rate = retrier.get("BackoffRate", 2.0)
    cap = retrier.get("MaxDelaySeconds", float("inf"))
    return sum(min(interval * rate**n, cap) for n in range(retrier.get("MaxAttempts", 3)))


def task_worst_delay(state: Document) -> float:
    """Each retrier counts its own attempts, so a state can use up every one of them on one entry."""
    return sum(retrier_worst_delay(r) for r in state.get("Retry", []))


def task_worst_attempts(state: Document) -> int:
    return 1 + sum(r.get("MaxAttempts", 3) for r in state.get("Retry", [])) if state["Type"] == "Task" else 0


def longest(
    definition: Document,
    start: str,
    cost: Callable[[str, Document], float],
    skip: frozenset[tuple[str, str]] = frozenset(),
    end: str | None = None,
) -> float:
    """The costliest path from `start` to `end` (or to any end of the execution), both counted, never
    taking an edge in `skip`. What is left must be acyclic: a cycle raises instead of being guessed."""
    states = definition["States"]
    memo: dict[str, float] = {}
    on_path: set[str] = set()

    def from_state(name: str) -> float:
        if name in memo:
            return memo[name]
        if name in on_path:
            raise AssertionError(f"a loop through {name!r} that the budget does not model")
        on_path.add(name)
        if name == end:
            total = cost(name, states[name])
        else:
            onward = [from_state(n) for n in successors(states[name]) if (name, n) not in skip]
            reachable = [value for value in onward if value != float("-inf")]
            if end is not None and not reachable:
                total = float("-inf")  # `end` cannot be reached this way
            else:
                total = cost(name, states[name]) + max(reachable, default=0)
        on_path.discard(name)
        memo[name] = total
        return total

    return from_state(start)

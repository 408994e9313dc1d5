"""The embedded engine under racing executions, and its guard against an unexpected moto."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from itertools import pairwise
from typing import Any

import moto
import pytest
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField

from onceflow.devtools.schedules.hooks import execution_of
from onceflow.engine import EmbeddedAws, EmbeddedAwsError
from onceflow.ops.executions import ExecutionResult, wait_for
from onceflow.ops.observe import scan
from onceflow.ops.workflow import RECORD as RECORD_STATE
from tests.support import execution_input, order

DISTINCT_EVENTS = 40
DUPLICATES_PER_EVENT = 2


@pytest.mark.embedded_only(reason="proves the embedded engine's request lock; plain moto is not thread-safe")
def test_racing_executions_never_lose_or_undo_a_write(stack, inbox):
    """120 executions: 40 events, each started three times back to back, and each event's copies
    held at the door of Record until all three are there, so they race for its record whatever
    the engine's speed, and cancelled transactions (and their rollbacks) interleave with other
    events' successful ones. Every write must survive."""
    sfn = stack.client("stepfunctions")
    arns = []
    with _copies_meet_before(RECORD_STATE, 1 + DUPLICATES_PER_EVENT):
        for i in range(DISTINCT_EVENTS):
            for copy in range(1 + DUPLICATES_PER_EVENT):
                body = order(f"race-{i:03d}")
                arns.append(
                    sfn.start_execution(
                        stateMachineArn=stack.state_machine_arn,
                        name=f"race-{i:03d}-{copy}",
                        input=execution_input(body, message_id=f"m-{i}-{copy}"),
                    )["executionArn"]
                )
        results = [wait_for(sfn, arn, timeout=120) for arn in arns]
    raced = [e for e, runs in _runs_by_event(results).items() if _overlapping(runs)]
    at_once = _most_at_once(results)
    print(f"\n{len(raced)} of {DISTINCT_EVENTS} events' copies overlapped; at most {at_once} executions at once")

    assert [r.arn for r in results if r.status != "SUCCEEDED"] == []
    dynamodb = stack.client("dynamodb")
    rows = {r["order_id"]: r for r in scan(dynamodb, stack.business_table)}
    states = {s["event_id"]: s for s in scan(dynamodb, stack.processed_events_table)}
    expected = {f"race-{i:03d}" for i in range(DISTINCT_EVENTS)}
    assert set(rows) == expected and set(states) == expected
    assert {s["status"] for s in states.values()} == {"sent"}
    recorded_by = {r.arn for r in results if "Look up earlier record" not in r.path}
    assert len(recorded_by) == DISTINCT_EVENTS  # exactly one execution per event recorded it
    assert {rows[e]["execution_arn"] for e in expected} == recorded_by  # no write was undone or redone
    assert set(inbox.by_event_id()) == expected
    assert len(raced) == DISTINCT_EVENTS, "some event's copies ran one after another: they did not race"


@contextmanager
def _copies_meet_before(state_name: str, copies: int) -> Iterator[None]:
    """Each event's executions wait on entering `state_name` until `copies` of them are there (or
    10 s passed: then the overlap assertion says so)."""
    original = CommonStateField._eval_body
    barriers: dict[str | None, threading.Barrier] = {}
    guard = threading.Lock()

    def _eval_body(state: CommonStateField, env: Any) -> None:
        if state.name == state_name and not env.is_frame():
            _, event_id = execution_of(env)
            with guard:
                barrier = barriers.setdefault(event_id, threading.Barrier(copies))
            with suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=10)
        original(state, env)

    CommonStateField._eval_body = _eval_body  # type: ignore[method-assign]
    try:
        yield
    finally:
        CommonStateField._eval_body = original  # type: ignore[method-assign]


def _span(result: ExecutionResult) -> tuple[datetime, datetime]:
    return result.history[0]["timestamp"], result.history[-1]["timestamp"]


def _runs_by_event(results: list[ExecutionResult]) -> dict[str, list[tuple[datetime, datetime]]]:
    runs: dict[str, list[tuple[datetime, datetime]]] = {}
    for result in results:
        runs.setdefault(result.input["event_id"], []).append(_span(result))
    return runs


def _overlapping(spans: list[tuple[datetime, datetime]]) -> bool:
    ordered = sorted(spans)
    return any(later[0] < earlier[1] for earlier, later in pairwise(ordered))


def _most_at_once(results: list[ExecutionResult]) -> int:
    changes = sorted((moment, step) for r in results for moment, step in zip(_span(r), (1, -1), strict=True))
    running = most = 0
    for _, step in changes:
        running += step
        most = max(most, running)
    return most


def test_refuses_a_moto_version_it_was_not_checked_against(monkeypatch):
    monkeypatch.setattr(moto, "__version__", "0.0.1")
    with pytest.raises(EmbeddedAwsError, match="patches moto"):
        EmbeddedAws()

"""The embedded engine under racing executions, and its guard against an unexpected moto."""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise

import moto
import pytest

from onceflow.local.embedded import EmbeddedAws, EmbeddedAwsError
from onceflow.ops.executions import ExecutionResult, wait_for
from onceflow.ops.observe import scan
from tests.support import execution_input, order

DISTINCT_EVENTS = 40
DUPLICATES_PER_EVENT = 2


@pytest.mark.embedded_only(reason="proves the embedded engine's request lock; plain moto is not thread-safe")
def test_racing_executions_never_lose_or_undo_a_write(stack, inbox):
    """120 executions at once: 40 events, each started three times back to back, so an event's
    copies race for its record and cancelled transactions (and their rollbacks) interleave with
    other events' successful ones. Every write must survive."""
    sfn = stack.client("stepfunctions")
    arns = []
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
    rows = {r["order_id"]: r for r in scan(dynamodb, stack.order_records_table)}
    states = {s["event_id"]: s for s in scan(dynamodb, stack.processed_events_table)}
    expected = {f"race-{i:03d}" for i in range(DISTINCT_EVENTS)}
    assert set(rows) == expected and set(states) == expected
    assert {s["status"] for s in states.values()} == {"sent"}
    recorded_by = {r.arn for r in results if "Look up earlier record" not in r.path}
    assert len(recorded_by) == DISTINCT_EVENTS  # exactly one execution per event recorded it
    assert {rows[e]["execution_arn"] for e in expected} == recorded_by  # no write was undone or redone
    assert set(inbox.by_event_id()) == expected
    assert len(raced) > DISTINCT_EVENTS // 2, "an event's copies mostly ran one after another: too little raced"


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

"""The embedded engine under racing executions, and its guard against an unexpected moto."""

from __future__ import annotations

import moto
import pytest

from onceflow.local.embedded import EmbeddedAws, EmbeddedAwsError
from onceflow.ops.executions import wait_for
from onceflow.ops.observe import scan
from tests.support import execution_input, order

DISTINCT_EVENTS = 80
DUPLICATES_PER_EVENT = 2


@pytest.mark.embedded_only(reason="proves the embedded engine's request lock; plain moto is not thread-safe")
def test_racing_executions_never_lose_or_undo_a_write(stack, inbox):
    """240 executions at once: 80 events, each also delivered twice more, so cancelled transactions
    (and their rollbacks) interleave with other events' successful ones. Every write must survive."""
    sfn = stack.client("stepfunctions")
    arns = []
    for copy in range(1 + DUPLICATES_PER_EVENT):
        for i in range(DISTINCT_EVENTS):
            body = order(f"race-{i:03d}")
            arns.append(
                sfn.start_execution(
                    stateMachineArn=stack.state_machine_arn,
                    name=f"race-{i:03d}-{copy}",
                    input=execution_input(body, message_id=f"m-{i}-{copy}"),
                )["executionArn"]
            )
    results = [wait_for(sfn, arn, timeout=120) for arn in arns]

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


def test_refuses_a_moto_version_it_was_not_checked_against(monkeypatch):
    monkeypatch.setattr(moto, "__version__", "0.0.1")
    with pytest.raises(EmbeddedAwsError, match="patches moto"):
        EmbeddedAws()

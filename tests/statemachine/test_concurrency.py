"""Many executions of one event at once (redeliveries racing each other): one business write, all succeed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import Any

from onceflow.ops.executions import wait_for
from tests.statemachine.pipeline import (
    ALREADY_SENT_PATH,
    LOOK_UP,
    MARK_SENT,
    NEW_EVENT_PATH,
    PENDING_PATH,
    RECORD,
    dead_letters,
    order_rows,
    state_rows,
)
from tests.support import execution_input, order

RACING_EXECUTIONS = 12


def test_concurrent_executions_of_one_event_write_the_business_row_once(stack, inbox):
    sfn = stack.client("stepfunctions")
    body = order("order-13")
    # Distinct deliveries of one event: each message id gives its own execution name, the body is the same.
    deliveries = {f"order-13-delivery-{n}": execution_input(body, f"delivery-{n}") for n in range(RACING_EXECUTIONS)}

    arns = _start_at_once(sfn, stack.state_machine_arn, deliveries)
    results = [wait_for(sfn, arn, timeout=60) for arn in arns]

    assert [r.status for r in results] == ["SUCCEEDED"] * RACING_EXECUTIONS
    assert _overlapping(sfn, arns), "the executions really ran at the same time"
    winners = [r for r in results if LOOK_UP not in r.path]
    assert len(winners) == 1, "exactly one transaction commits"
    [winner] = winners
    assert winner.path == NEW_EVENT_PATH
    for loser in (r for r in results if r is not winner):
        assert loser.path in (PENDING_PATH, ALREADY_SENT_PATH), loser.path
        [cancelled] = loser.task_failures(RECORD)
        assert "ConditionalCheckFailed" in cancelled["cause"]
    [business] = order_rows(stack)
    assert business["execution_arn"] == winner.arn
    [state] = state_rows(stack)
    assert state["status"] == "sent"
    assert state["execution_arn"] == winner.arn
    published = sum(1 for r in results if r.path[-1] == MARK_SENT)
    assert inbox.by_event_id() == {"order-13": published}
    assert published >= 1
    assert dead_letters(stack) == []


def _start_at_once(sfn: Any, state_machine_arn: str, inputs_by_name: dict[str, str]) -> list[str]:
    def start(name: str) -> str:
        return sfn.start_execution(stateMachineArn=state_machine_arn, name=name, input=inputs_by_name[name])

    with ThreadPoolExecutor(max_workers=len(inputs_by_name)) as pool:
        return [started["executionArn"] for started in pool.map(start, inputs_by_name)]


def _overlapping(sfn: Any, arns: list[str]) -> bool:
    """Some execution started before another one had stopped."""
    windows = sorted(
        (described["startDate"], described["stopDate"])
        for described in (sfn.describe_execution(executionArn=arn) for arn in arns)
    )
    return any(later_start < stop for (_, stop), (later_start, _) in pairwise(windows))

"""Billed state transitions per path, counted from execution histories (issue 10).

Standard workflows bill every state transition, retries included
(https://aws.amazon.com/step-functions/pricing/): here, every state entered plus every retry of a
Task. Before the rework the happy path and the already-sent path were 5 each (a Pass state built the
business item, a Succeed state ended the happy path); now the business item is built in Record's
parameters and Mark as sent ends the execution.
"""

from __future__ import annotations

from onceflow.engine.dynamodb.ttl import TtlClock
from onceflow.ops.executions import ExecutionResult
from tests.statemachine.pipeline import ALREADY_SENT_PATH, EXPIRED_PATH, NEW_EVENT_PATH, PENDING_PATH, set_status
from tests.support import order, run_execution


def billed_transitions(result: ExecutionResult) -> int:
    entered = sum(1 for event in result.history if "stateEnteredEventDetails" in event)
    tasks_entered = sum(1 for event in result.history if event["type"] == "TaskStateEntered")
    retries = sum(1 for event in result.history if event["type"] == "TaskScheduled") - tasks_entered
    return entered + retries


def test_happy_path_and_already_sent_path_cost_three_and_four_transitions(stack):
    first = run_execution(stack, order("order-24"), name="order-24-first")
    again = run_execution(stack, order("order-24"), name="order-24-again")

    assert (first.path, again.path) == (NEW_EVENT_PATH, ALREADY_SENT_PATH)
    assert billed_transitions(first) == 3
    assert billed_transitions(again) == 4


def test_resumed_and_expired_paths_cost_five_transitions(stack):
    run_execution(stack, order("order-25"), name="order-25-first")
    set_status(stack, "order-25", "pending")
    resumed = run_execution(stack, order("order-25"), name="order-25-resumed")
    TtlClock(stack.client("dynamodb"), now=resumed.input["ttl"] + 1).expire()
    expired = run_execution(stack, order("order-25"), name="order-25-expired")

    assert (resumed.path, expired.path) == (PENDING_PATH, EXPIRED_PATH)
    assert billed_transitions(resumed) == 5
    assert billed_transitions(expired) == 5

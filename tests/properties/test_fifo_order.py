"""R5's invariant (onceflow/devtools/schedules/effects.py): what it calls a violation, on logs
written by hand, and that it catches a starter that lets records of a group run side by side
(deterministically: the schedule does not depend on thread timing)."""

from __future__ import annotations

import sys

import pytest

from onceflow.devtools.schedules import Process, Schedule, Send, run_schedule
from onceflow.devtools.schedules.effects import Effect, order_violations
from onceflow.devtools.schedules.model import event_id
from onceflow.devtools.schedules.runner import ScheduleOutcome
from onceflow.local.faults import start_execution_failures
from tests.properties.test_schedules import FIFO, INJECTED_SQS_ERROR


def log(*steps: tuple[str, str] | tuple[str, str, str]) -> list[Effect]:
    """(kind, event[, group]) in the order they happened; sends default to group G."""
    return [
        Effect(i, step[0], step[1], (step[2] if len(step) > 2 else "G") if step[0] == "sent" else None)  # type: ignore[arg-type]
        for i, step in enumerate(steps)
    ]


def test_a_group_applied_in_order_has_no_violation():
    effects = log(
        ("sent", "a"), ("sent", "b"), ("written", "a"), ("notified", "a"), ("written", "b"), ("notified", "b")
    )
    assert order_violations(effects) == []


def test_a_later_event_written_first_is_a_violation():
    effects = log(("sent", "a"), ("sent", "b"), ("written", "b"), ("written", "a"))
    [problem] = order_violations(effects)
    assert problem.startswith("R5: group G: b written") and "before a" in problem


def test_a_later_first_notification_first_is_a_violation_even_when_writes_were_in_order():
    effects = log(
        ("sent", "a"), ("sent", "b"), ("written", "a"), ("written", "b"), ("notified", "b"), ("notified", "a")
    )
    [problem] = order_violations(effects)
    assert "b notified" in problem


def test_an_earlier_event_that_was_dead_lettered_has_left_the_group():
    """a is written, its publish fails, it is dead-lettered pending; b goes on; a's redrive publishes last."""
    effects = log(
        ("sent", "a"),
        ("sent", "b"),
        ("written", "a"),
        ("dead_lettered", "a"),
        ("written", "b"),
        ("notified", "b"),
        ("sent", "a"),
        ("notified", "a"),
    )
    assert order_violations(effects) == []


def test_a_redriven_event_is_at_the_end_of_its_group_and_nothing_sent_after_may_overtake_it():
    effects = [
        Effect(0, "sent", "a", "G"),
        Effect(1, "dead_lettered", "a"),
        Effect(2, "sent", "a", "G"),  # the redrive
        Effect(3, "sent", "c", "G"),
        Effect(4, "written", "c"),
        Effect(5, "written", "a"),
    ]
    [problem] = order_violations(effects)
    assert "c written" in problem and "before a" in problem


def test_groups_are_not_compared_and_copies_keep_their_first_place():
    effects = [
        Effect(0, "sent", "a", "G"),
        Effect(1, "sent", "x", "H"),
        Effect(2, "sent", "a", "G"),  # a producer's resend of a
        Effect(3, "written", "x"),
        Effect(4, "written", "a"),
    ]
    assert order_violations(effects) == []


# A group's first event (event-0) in trouble for one whole invocation: its StartExecution is denied
# once, so its record fails while the starter still holds the batch with the group's second event
# (event-2, same group) and event-1 (the other group). No thread timing decides what follows: the
# correct starter reports event-2 failed unattempted behind it; a starter that runs a group's
# records side by side starts event-2, waits for its execution to end (FIFO STANDARD) and only
# then returns, so event-2 is written before event-0's redelivery is even received.
FIRST_OF_GROUP_DENIED = Schedule((Send(0), Send(2), Send(1), Process()))


def _run_with_order_0_denied_once(aws) -> tuple[ScheduleOutcome, int]:
    with start_execution_failures(times=1, event_id=event_id(0)) as denied:
        outcome = run_schedule(aws, FIRST_OF_GROUP_DENIED, FIFO)
    return outcome, denied.injected


# About 5 s run alone: most of it deploys the FIFO stack (the session's later FIFO schedules reuse it); then
# two schedule runs of under a second each.
@pytest.mark.filterwarnings(INJECTED_SQS_ERROR)
@pytest.mark.filterwarnings("ignore:No application metrics to publish")
def test_the_invariant_catches_a_starter_that_runs_a_groups_records_side_by_side(embedded_aws, monkeypatch):
    """The mutation: every record its own unit of work (as for a standard queue), so a group's
    records are handed over at once and each waits only for its own execution."""
    outcome, denied = _run_with_order_0_denied_once(embedded_aws)  # unmutated first: it holds
    assert denied == 1
    assert outcome.passed, outcome.violations
    starter = sys.modules["onceflow_function_starter_app"]
    monkeypatch.setattr(starter, "by_message_group", lambda deliveries: [[d] for d in deliveries])
    outcome, denied = _run_with_order_0_denied_once(embedded_aws)
    assert denied == 1
    assert any(v.startswith("R5: group group-0: event-2 written") for v in outcome.violations), outcome.violations
    assert all(v.startswith("R5:") for v in outcome.violations), "only the order breaks: R1-R4 still hold"

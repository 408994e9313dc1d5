"""R5's invariant (onceflow/devtools/schedules/effects.py): what it calls a violation, on logs
written by hand, and that it catches a starter that lets records of a group run side by side."""

from __future__ import annotations

import sys

import pytest

from onceflow.devtools.schedules import run_schedule
from onceflow.devtools.schedules.effects import Effect, order_violations
from tests.properties.test_schedules import FIFO, FIFO_EXPLICIT, INJECTED_SQS_ERROR


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


@pytest.mark.xfail(
    reason="open (issue 17): timing-dependent: whether the mutated starter's second event of a group overtakes "
    "the first in these two schedules depends on thread timing (caught in one run, not in the next); to be made "
    "deterministic",
    strict=False,
)
@pytest.mark.filterwarnings(INJECTED_SQS_ERROR)
@pytest.mark.filterwarnings("ignore:No application metrics to publish")
def test_the_invariant_catches_a_starter_that_runs_a_groups_records_side_by_side(embedded_aws, monkeypatch):
    """The mutation: every record its own unit of work (as for a standard queue), so a group's
    records are handed over at once and each waits only for its own execution. The schedules that
    put a group's first event in trouble (a throttled or conflicting Record) then let the second
    overtake it; the same schedules pass unmutated (test_schedules.py's FIFO examples)."""
    names = [
        "a group's first event throttled at Record, the second waits",
        "a group's first event conflicts at Record and loops, the second waits",
    ]
    for name in names:  # unmutated first: they hold
        assert run_schedule(embedded_aws, FIFO_EXPLICIT[name], FIFO).passed, name
    starter = sys.modules["onceflow_function_starter_app"]
    monkeypatch.setattr(starter, "by_message_group", lambda deliveries: [[d] for d in deliveries])
    found = [v for name in names for v in run_schedule(embedded_aws, FIFO_EXPLICIT[name], FIFO).violations]
    assert any(v.startswith("R5: group group-0: order-2") for v in found), found
    assert all(v.startswith("R5:") for v in found), "only the order breaks: R1-R3 still hold"

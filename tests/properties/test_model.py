"""The schedule model without AWS: JSON form, validation, digests."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from onceflow.devtools.schedules import Interrupt, Open, Schedule, Send
from onceflow.devtools.schedules.model import step_from_json
from tests.properties.strategies import schedules


@settings(max_examples=50, deadline=None)
@given(schedule=schedules())
def test_schedules_round_trip_through_json(schedule: Schedule) -> None:
    text = json.dumps(schedule.to_json())
    assert Schedule.from_json(json.loads(text)) == schedule
    assert Schedule.from_json(json.loads(text)).digest() == schedule.digest()


def test_a_step_reads_as_its_json() -> None:
    assert Send(2, copies=3).to_json() == {"step": "send", "event": 2, "copies": 3}
    assert (
        Interrupt(0, "Mark as sent", "timeout").describe() == "interrupt(event=0, state='Mark as sent', how='timeout')"
    )


@pytest.mark.parametrize(
    "document, message",
    [
        ({"step": "explode"}, "unknown step"),
        ({"step": "send", "event": 0, "colour": "red"}, "no field"),
        ({"step": "interrupt", "event": 0, "state": "Nowhere"}, "cannot interrupt"),
        ({"step": "interrupt", "event": 0, "state": "Mark as sent", "how": "pause"}, "how must be"),
        ({"step": "open", "fault": "meteor"}, "unknown fault"),
        ({"step": "open", "fault": "sns_publish", "times": 0}, "at least one"),
        ({"step": "expire", "days": 0}, "at least one day"),
    ],
)
def test_malformed_steps_are_errors(document: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        step_from_json(document)


def test_open_defaults_to_an_outage_for_one_step() -> None:
    assert Open("sns_publish") == Open("sns_publish", times=None, steps=1)

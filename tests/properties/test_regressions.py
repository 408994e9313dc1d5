"""Replays every shrunk failing schedule saved in tests/properties/regressions/."""

from __future__ import annotations

import pytest

from onceflow.devtools.schedules import Schedule, run_schedule
from tests.properties import saved_schedules
from tests.properties.tally import TALLY
from tests.properties.test_schedules import INJECTED_SQS_ERROR

SAVED = saved_schedules.load_all()


if SAVED:  # no saved regressions yet: no replay test rather than a skipped one

    @pytest.mark.filterwarnings("ignore:No application metrics to publish")
    @pytest.mark.filterwarnings(INJECTED_SQS_ERROR)
    @pytest.mark.parametrize("schedule", [s for _, s in SAVED], ids=[name for name, _ in SAVED])
    def test_saved_schedule_keeps_the_invariants(embedded_aws, schedule: Schedule) -> None:
        outcome = run_schedule(embedded_aws, schedule)
        TALLY.add("regression", outcome)
        assert outcome.passed, f"{schedule.describe()}\n" + "\n".join(outcome.violations)


def test_saved_schedules_round_trip() -> None:
    for name, schedule in SAVED:
        assert Schedule.from_json(schedule.to_json()) == schedule, name

"""The invariants catch a broken pipeline: zero violations elsewhere means something.

Each case breaks one guarantee on purpose and runs an explicit schedule that depends on it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from onceflow.devtools.schedules import run_schedule, runner
from onceflow.devtools.schedules.runner import RunOptions
from onceflow.local.safety_net import SafetyNet, ScheduledRuns, SweepReport
from onceflow.local.stack import LocalStack
from tests.properties.test_schedules import EXPLICIT


def _deploy_with(change):
    original = runner.deploy

    def deploy(endpoint_url: str, **kwargs: Any) -> LocalStack:
        stack = original(endpoint_url, **kwargs)
        sfn = stack.client("stepfunctions")
        definition = json.loads(sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"])
        change(definition["States"])
        sfn.update_state_machine(stateMachineArn=stack.state_machine_arn, definition=json.dumps(definition))
        return stack

    return deploy


def _pending_taken_for_sent(states: dict) -> None:
    for choice in states["What is left to do?"]["Choices"]:
        if choice.get("StringEquals") == "pending":
            choice["Next"] = "Already sent"


def _record_without_condition(states: dict) -> None:
    """Neither the state record's condition nor the business row's own (issue 8: R2 after expiry)."""
    for item in states["Record event and business item"]["Parameters"]["TransactItems"]:
        item["Put"].pop("ConditionExpression")


@pytest.mark.filterwarnings("ignore:No application metrics to publish")
@pytest.mark.parametrize(
    "broken, example, expected",
    [
        ("no safety net", "stop after Record", "state record 'pending'"),
        ("status events lost and no reconciler schedule", "stop after Record", "state record 'pending'"),
        ("pending taken for sent", "time out after Record", "never notified"),
        (
            "Record without its conditions",
            "redelivery, resend, conflict, poison",
            "R2 database written exactly once: event-0: recorded",
        ),
    ],
)
def test_a_broken_guarantee_is_reported(embedded_aws, monkeypatch, broken: str, example: str, expected: str) -> None:
    options = RunOptions()
    if broken == "no safety net":  # neither the status change rule nor the reconciler's schedule
        monkeypatch.setattr(SafetyNet, "sweep", lambda self: SweepReport())
        monkeypatch.setattr(ScheduledRuns, "run", lambda self, at=None: 0)
    elif broken == "status events lost and no reconciler schedule":  # the event alone is not enough
        monkeypatch.setattr(ScheduledRuns, "run", lambda self, at=None: 0)
        options = RunOptions(status_events_lost=1.0)
    elif broken == "pending taken for sent":
        monkeypatch.setattr(runner, "deploy", _deploy_with(_pending_taken_for_sent))
    else:
        monkeypatch.setattr(runner, "deploy", _deploy_with(_record_without_condition))

    outcome = run_schedule(embedded_aws, EXPLICIT[example], options)

    assert any(expected in violation for violation in outcome.violations), outcome.violations

"""The invariants catch a broken pipeline: zero violations elsewhere means something.

Each case breaks one guarantee on purpose and runs an explicit schedule that depends on it.
"""

from __future__ import annotations

import json

import pytest

from onceflow.devtools.schedules import run_schedule, runner
from onceflow.local.safety_net import SafetyNet, SweepReport
from onceflow.local.stack import LocalStack
from tests.properties.test_schedules import EXPLICIT


def _deploy_with(change):
    original = runner.deploy

    def deploy(endpoint_url: str) -> LocalStack:
        stack = original(endpoint_url)
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
    states["Record event and order"]["Parameters"]["TransactItems"][0]["Put"].pop("ConditionExpression")


@pytest.mark.filterwarnings("ignore:No application metrics to publish")
@pytest.mark.parametrize(
    "broken, example, expected",
    [
        ("no safety net", "stop after Record", "state record 'pending'"),
        ("pending taken for sent", "time out after Record", "never notified"),
        ("Record without its condition", "redelivery, resend, conflict, poison", "recorded 3 times"),
    ],
)
def test_a_broken_guarantee_is_reported(embedded_aws, monkeypatch, broken: str, example: str, expected: str) -> None:
    if broken == "no safety net":
        monkeypatch.setattr(SafetyNet, "sweep", lambda self: SweepReport())
    elif broken == "pending taken for sent":
        monkeypatch.setattr(runner, "deploy", _deploy_with(_pending_taken_for_sent))
    else:
        monkeypatch.setattr(runner, "deploy", _deploy_with(_record_without_condition))

    outcome = run_schedule(embedded_aws, EXPLICIT[example])

    assert any(expected in violation for violation in outcome.violations), outcome.violations

"""The starter's timeouts, sized together in template.yaml with the workflow's TimeoutSeconds
(statemachine/pipeline.asl.json), for each StateMachineType.

- Lambda: an SQS event source's queue needs a visibility timeout of at least six times the
  function's timeout (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
- EXPRESS: the starter waits for each execution, so the call's read timeout outlasts the workflow's
  TimeoutSeconds and the function outlasts the call (with the margin executions.py keeps); an
  Express execution runs at most five minutes (Step Functions quotas).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from samtranslator.yaml_helper import yaml_parse

from starter.executions import SAFETY_MARGIN_SECONDS

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = yaml_parse((ROOT / "template.yaml").read_text())
RESOURCES = TEMPLATE["Resources"]
WORKFLOW_TIMEOUT = json.loads((ROOT / "statemachine" / "pipeline.asl.json").read_text())["TimeoutSeconds"]
EXPRESS_MAX_SECONDS = 300


def in_mode(value: Any, mode: str) -> Any:
    """A property's value for one StateMachineType (only the IsExpress condition is used here)."""
    if isinstance(value, dict) and set(value) == {"Fn::If"}:
        condition, when_true, when_false = value["Fn::If"]
        assert condition == "IsExpress"
        return in_mode(when_true if mode == "EXPRESS" else when_false, mode)
    return value


def starter(mode: str) -> dict[str, Any]:
    properties = RESOURCES["StarterFunction"]["Properties"]
    variables = properties["Environment"]["Variables"]
    return {
        "timeout": in_mode(properties["Timeout"], mode),
        "sync_read": in_mode(variables["SYNC_EXECUTION_TIMEOUT_SECONDS"], mode),
        "type": variables["STATE_MACHINE_TYPE"],
        "visibility": in_mode(RESOURCES["SourceQueue"]["Properties"]["VisibilityTimeout"], mode),
    }


def test_the_condition_is_the_state_machine_type():
    assert TEMPLATE["Conditions"]["IsExpress"] == {"Fn::Equals": [{"Ref": "StateMachineType"}, "EXPRESS"]}
    assert starter("STANDARD")["type"] == {"Ref": "StateMachineType"}


@pytest.mark.parametrize("mode", ["STANDARD", "EXPRESS"])
def test_the_visibility_timeout_is_at_least_six_function_timeouts(mode):
    sizes = starter(mode)
    assert sizes["visibility"] >= 6 * sizes["timeout"]


def test_express_sizes_nest_inside_each_other():
    sizes = starter("EXPRESS")
    assert WORKFLOW_TIMEOUT <= EXPRESS_MAX_SECONDS
    read = int(sizes["sync_read"])
    assert read > WORKFLOW_TIMEOUT  # the execution ends (TIMED_OUT at worst) before the call gives up
    assert read + SAFETY_MARGIN_SECONDS < sizes["timeout"] <= 900  # and the function after the call
    assert (sizes["timeout"], read, sizes["visibility"]) == (330, 315, 1980)


def test_standard_keeps_a_short_function_and_needs_no_sync_timeout():
    sizes = starter("STANDARD")
    assert sizes["sync_read"] == {"Ref": "AWS::NoValue"}
    assert (sizes["timeout"], sizes["visibility"]) == (30, 180)


def test_the_role_allows_the_call_of_each_mode_and_the_already_sent_lookup():
    statements = RESOURCES["StarterRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    by_sid = {statement["Sid"]: statement for statement in statements}
    start = by_sid["StartExecutions"]["Action"]
    assert (in_mode(start, "STANDARD"), in_mode(start, "EXPRESS")) == (
        "states:StartExecution",
        "states:StartSyncExecution",
    )
    lookup = by_sid["SkipEventsAlreadySent"]
    assert lookup["Action"] == "dynamodb:BatchGetItem"
    assert lookup["Resource"] == {"Fn::GetAtt": ["ProcessedEventsTable", "Arn"]}
    variables = RESOURCES["StarterFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["PROCESSED_EVENTS_TABLE"] == {"Ref": "ProcessedEventsTable"}


def test_the_starter_uses_the_shared_layer_and_active_tracing_without_the_sdk():
    properties = RESOURCES["StarterFunction"]["Properties"]
    assert properties["Layers"] == [{"Ref": "OnceflowLayer"}]
    assert RESOURCES["OnceflowLayer"]["Properties"]["ContentUri"] == "functions/common/"
    assert RESOURCES["OnceflowLayer"]["Metadata"]["BuildMethod"] == "python3.13"
    assert TEMPLATE["Globals"]["Function"]["Tracing"] == "Active"

"""The starter's timeouts, sized together in template.yaml with the workflow's TimeoutSeconds
(statemachine/pipeline.asl.json), for each StateMachineType.

- Lambda: an SQS event source's queue needs a visibility timeout of at least six times the
  function's timeout (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
- EXPRESS: the starter waits for each execution, so the call's read timeout outlasts the workflow's
  TimeoutSeconds and the function outlasts the call (with the margin executions.py keeps); an
  Express execution runs at most five minutes (Step Functions quotas).
- FIFO source (either type): the starter waits for each execution as well (STANDARD: by polling
  DescribeExecution for at most SYNC_EXECUTION_TIMEOUT_SECONDS), so the same sizes apply.
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


MODES = [("STANDARD", "STANDARD"), ("EXPRESS", "STANDARD"), ("STANDARD", "FIFO"), ("EXPRESS", "FIFO")]


def condition(name: str, mode: tuple[str, str]) -> bool:
    """A condition of template.yaml for (StateMachineType, SourceQueueType), evaluated from its definition."""
    parameters = {"StateMachineType": mode[0], "SourceQueueType": mode[1]}

    def evaluate(node: Any) -> Any:
        if isinstance(node, dict) and len(node) == 1:
            ((key, value),) = node.items()
            if key == "Fn::Equals":
                return evaluate(value[0]) == evaluate(value[1])
            if key == "Fn::And":
                return all(evaluate(v) for v in value)
            if key == "Fn::Or":
                return any(evaluate(v) for v in value)
            if key == "Fn::Not":
                return not evaluate(value[0])
            if key == "Condition":
                return evaluate(TEMPLATE["Conditions"][value])
            if key == "Ref":
                return parameters[value]
        return node

    return bool(evaluate(TEMPLATE["Conditions"][name]))


def in_mode(value: Any, mode: str | tuple[str, str]) -> Any:
    """A property's value for a StateMachineType (standard source) or (StateMachineType, SourceQueueType)."""
    mode = (mode, "STANDARD") if isinstance(mode, str) else mode
    if isinstance(value, dict) and set(value) == {"Fn::If"}:
        name, when_true, when_false = value["Fn::If"]
        return in_mode(when_true if condition(name, mode) else when_false, mode)
    return value


def starter(mode: str | tuple[str, str]) -> dict[str, Any]:
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
    assert TEMPLATE["Conditions"]["IsFifo"] == {"Fn::Equals": [{"Ref": "SourceQueueType"}, "FIFO"]}
    waits = {mode: condition("StarterWaits", mode) for mode in MODES}
    assert waits == {mode: mode != ("STANDARD", "STANDARD") for mode in MODES}


def test_the_visibility_timeout_is_at_least_six_function_timeouts(mode):
    sizes = starter(mode)
    assert sizes["visibility"] >= 6 * sizes["timeout"]


@pytest.mark.parametrize("mode", MODES[1:])
def test_sizes_of_a_starter_that_waits_nest_inside_each_other(mode):
    """EXPRESS, and a FIFO source with either type: the starter waits for each execution."""
    sizes = starter(mode)
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
    by_sid = {statement["Sid"]: statement for statement in statements if "Sid" in statement}
    start = by_sid["StartExecutions"]["Action"]
    assert (in_mode(start, "STANDARD"), in_mode(start, "EXPRESS")) == (
        "states:StartExecution",
        "states:StartSyncExecution",
    )
    # FIFO STANDARD waits with DescribeExecution, on this state machine's executions only.
    conditional = {s["Fn::If"][0]: s["Fn::If"] for s in statements if isinstance(s, dict) and "Fn::If" in s}
    wait = conditional["IsFifoStandard"]
    assert wait[2] == {"Ref": "AWS::NoValue"}
    assert wait[1]["Action"] == "states:DescribeExecution"
    assert ":execution:${PipelineStateMachine.Name}:*" in wait[1]["Resource"]["Fn::Sub"]
    assert [m for m in MODES if condition("IsFifoStandard", m)] == [("STANDARD", "FIFO")]
    # FIFO: throttled records kept in flight (ChangeMessageVisibilityBatch), on the source queue only.
    hold = conditional["IsFifo"]
    assert hold[2] == {"Ref": "AWS::NoValue"}
    assert (hold[1]["Action"], hold[1]["Resource"]) == (
        "sqs:ChangeMessageVisibility",
        {"Fn::GetAtt": ["SourceQueue", "Arn"]},
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

"""State data is handed from state to state as independent copies whether the interpreter copies it as
JSON (the `json_copies` speed-up) or with `copy.deepcopy` as moto does: `json_deepcopy` compared with
`copy.deepcopy` value by value, and executions whose states change data that other states, a Map's
iterations or a Parallel's branches hold, run on the embedded engine with the speed-up on (the suite's)
and off (`ONCEFLOW_SPEEDUPS_OFF=json_copies` runs this file the other way).

AWS: a state's output is built from its input, result and paths; a later state never sees a change
another state made to data it did not pass on
(https://docs.aws.amazon.com/step-functions/latest/dg/concepts-input-output-filtering.html).
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

import pytest
from moto.stepfunctions.parser.asl.eval import states as moto_states

from onceflow.engine.speedups import JSON_COPIES
from onceflow.engine.speedups.json_copies import COPYING_STATE_DATA, PLAIN_OBJECTS, json_deepcopy
from tests.engine.harness import Account

JSON_VALUES: list[Any] = [
    {"event_id": "e-1", "payload": {"n": 1, "items": [1, 2.5, "three", None, True, False]}, "empty": {}, "none": []},
    [{"a": [{"b": {"c": "deep"}}]}, [], [[[]]], "ünïcödé ✓", 10**30],
    "text",
    0,
    -1.5,
    True,
    None,
]


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside `value`, itself included."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


@pytest.mark.parametrize("value", JSON_VALUES)
def test_a_json_value_is_copied_equal_to_deepcopy_s_and_shares_no_container(value: Any) -> None:
    copied = json_deepcopy(value)
    assert copied == copy.deepcopy(value)
    assert type(copied) is type(value)
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}


def test_a_change_to_the_copy_leaves_the_original_as_it_was() -> None:
    original = {"payload": {"items": [{"n": 1}]}, "tags": ["a"]}
    copied = json_deepcopy(original)
    copied["payload"]["items"][0]["n"] = 2
    copied["payload"]["items"].append({"n": 3})
    copied["tags"].clear()
    assert original == {"payload": {"items": [{"n": 1}]}, "tags": ["a"]}


def test_what_is_not_json_is_copied_by_deepcopy() -> None:
    copied_by_hook: list[Any] = []

    class Hooked:
        def __deepcopy__(self, memo: dict[int, Any]) -> str:
            copied_by_hook.append(self)
            return "copied by its hook"

    hooked = Hooked()
    when = datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
    ordered = OrderedDict(a=[1], b={"c": 2})
    value = {"at": when, "ordered": ordered, "pair": ([1], {"x": 1}), "hooked": hooked}
    copied = json_deepcopy(value)
    assert copied["at"] == when
    assert type(copied["ordered"]) is OrderedDict and copied["ordered"] == ordered
    assert copied["ordered"]["a"] is not ordered["a"]
    assert copied["pair"] == ([1], {"x": 1}) and copied["pair"][0] is not value["pair"][0]
    assert copied["hooked"] == "copied by its hook" and copied_by_hook == [hooked]


def test_a_copy_under_way_with_a_memo_is_deepcopy_s() -> None:
    """Called by copy.deepcopy with its memo (a value inside another object), the memo decides: an
    object met twice in one value is copied once."""
    shared = {"x": [1]}
    memo: dict[int, Any] = {}
    first = json_deepcopy(shared, memo)
    assert json_deepcopy(shared, memo) is first


def test_the_interpreter_copies_with_json_deepcopy_when_the_speed_up_is_on(embedded_aws: Any) -> None:
    on = JSON_COPIES in embedded_aws.speedups
    for module in COPYING_STATE_DATA:
        assert (module.copy.deepcopy is json_deepcopy) is on, module.__name__
        assert module.copy.copy is copy.copy  # the rest of the copy module as it was
    assert (moto_states.copy is copy) is not on


CHANGES_SHARED_DATA: dict[str, Any] = {
    "StartAt": "Keep a copy",
    "States": {
        # the input placed inside itself: without a copy this makes a value that contains itself
        "Keep a copy": {"Type": "Pass", "Parameters": {"whole.$": "$"}, "ResultPath": "$.kept", "Next": "Change"},
        "Change": {"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.nested.added", "Next": "Each item"},
        "Each item": {
            "Type": "Map",
            "ItemsPath": "$.items",
            "ItemProcessor": {
                "StartAt": "Mark",
                "States": {"Mark": {"Type": "Pass", "Result": "marked", "ResultPath": "$.mark", "End": True}},
            },
            "ResultPath": "$.marked",
            "Next": "Both ways",
        },
        "Both ways": {
            "Type": "Parallel",
            "Branches": [
                {
                    "StartAt": "Left",
                    "States": {"Left": {"Type": "Pass", "Result": "left", "ResultPath": "$.nested.side", "End": True}},
                },
                {
                    "StartAt": "Right",
                    "States": {
                        "Right": {"Type": "Pass", "Result": "right", "ResultPath": "$.nested.side", "End": True}
                    },
                },
            ],
            "ResultPath": "$.branches",
            "Next": "Read the execution's input",
        },
        "Read the execution's input": {
            "Type": "Pass",
            "Parameters": {"original.$": "$$.Execution.Input", "now.$": "$"},
            "End": True,
        },
    },
}


def test_states_that_change_data_others_hold_change_only_their_own_copy(account: Account) -> None:
    execution_input = {"nested": {"kept": True}, "items": [{"id": 1}, {"id": 2}]}
    result = account.run(CHANGES_SHARED_DATA, execution_input)
    assert result.status == "SUCCEEDED", result.history[-1]
    output = json.loads(account.describe(result.arn)["output"])
    assert output["original"] == execution_input
    now = output["now"]
    assert now["kept"] == {"whole": execution_input}
    assert now["nested"] == {"kept": True, "added": {"x": 1}}
    assert now["items"] == [{"id": 1}, {"id": 2}]
    assert now["marked"] == [{"id": 1, "mark": "marked"}, {"id": 2, "mark": "marked"}]
    assert [branch["nested"]["side"] for branch in now["branches"]] == ["left", "right"]
    assert all("side" not in branch["kept"]["whole"]["nested"] for branch in now["branches"])


@pytest.mark.parametrize("kind", sorted(PLAIN_OBJECTS, key=lambda k: k.__name__))
def test_the_interpreter_s_program_states_are_copied_as_deepcopy_copies_them(kind: type) -> None:
    for hook in ("__deepcopy__", "__reduce__", "__getstate__", "__setstate__", "__slots__"):
        assert hook not in vars(kind), f"{kind.__name__} has its own {hook}: copy.deepcopy would use it"
    arguments = {
        "ProgramStopped": (datetime(2026, 12, 7, tzinfo=UTC), "States.Stopped", "stopped"),
        "ProgramError": ({"error": "E", "cause": "why"},),
    }.get(kind.__name__, ())
    value = kind(*arguments)
    if kind.__name__ == "ProgramRunning":
        value.next_state_name = "Next"
        value.next_field_name = "Field"
    copied = json_deepcopy(value)
    expected = copy.deepcopy(value)
    assert type(copied) is kind and copied is not value
    assert vars(copied) == vars(expected)
    for name, attribute in vars(value).items():
        if isinstance(attribute, dict):
            assert vars(copied)[name] is not attribute

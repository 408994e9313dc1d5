"""A JSONPath of plain field names reads what moto's extract_json reads whether it is read from the dicts
directly (the `jsonpath_cache` speed-up) or through jsonpath_ng as moto does: compared path by path and
value by value with moto's own function, and through executions on the embedded engine with the
speed-up on (the suite's) and off (`ONCEFLOW_SPEEDUPS_OFF=jsonpath_cache` runs this file the other way).

AWS: a reference path selects one node of the JSON; a path that selects nothing fails the state with
States.Runtime
(https://docs.aws.amazon.com/step-functions/latest/dg/amazon-states-language-paths.html).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from moto.stepfunctions.parser.asl.utils import json_path

from onceflow.engine.speedups import JSONPATH_CACHE
from onceflow.engine.speedups.jsonpath_cache import EXTRACTING, fields_read_directly, plain_fields
from tests.engine.harness import Account, single_state

# This module is imported before any engine starts: moto's own functions.
MOTO_EXTRACT = json_path.extract_json
MOTO_PARSE = json_path.parse

DATA: list[Any] = [
    {"event_id": "e-1", "payload": {"n": 1, "items": [{"id": 1}], "empty": {}}, "none": None, "id": "top"},
    {"event_id": ["a", "b"], "payload": "text"},
    {"payload": {"items": {"0": "zero"}}},
    [{"event_id": "in a list"}],
    "text",
    None,
]
PATHS = [
    "$",
    "$.event_id",
    "$.payload",
    "$.payload.n",
    "$.payload.items",
    "$.payload.empty",
    "$.payload.missing",
    "$.none",
    "$.none.deeper",
    "$.id",
    "$['payload']",
    "$.payload.items[0]",
    "$.payload.items[*].id",
    "$..id",
    "$.event_id[1]",
    "$.*",
]


def _outcome(extract: Any, path: str, data: Any) -> tuple[str, Any]:
    try:
        return "value", extract(path, data)
    except Exception as error:  # moto's error for a path that selects nothing, or does not parse
        return type(error).__name__, str(error)


@pytest.mark.parametrize("path", PATHS)
def test_a_path_reads_what_moto_s_extract_json_reads(path: str) -> None:
    read = fields_read_directly(functools.lru_cache(maxsize=None)(MOTO_PARSE), MOTO_EXTRACT)
    for data in DATA:
        ours, moto_s = _outcome(read, path, data), _outcome(MOTO_EXTRACT, path, data)
        assert ours == moto_s, (path, data)
        if ours[0] == "value" and plain_fields(MOTO_PARSE, path) is not None:
            assert ours[1] is moto_s[1]  # the object in the data itself, as jsonpath_ng finds it


def test_only_plain_field_paths_skip_jsonpath_ng() -> None:
    calls: list[str] = []

    def counted(path: str, data: Any) -> Any:
        calls.append(path)
        return MOTO_EXTRACT(path, data)

    read = fields_read_directly(functools.lru_cache(maxsize=None)(MOTO_PARSE), counted)
    data = DATA[0]
    assert read("$.payload.n", data) == 1
    assert read("$.event_id", data) == "e-1"
    assert read("$.payload.items[0]", data) == {"id": 1}
    with pytest.raises(json_path.NoSuchJsonPathError):
        read("$.payload.missing", data)
    assert calls == ["$.payload.items[0]", "$.payload.missing"]


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("$.a", ("a",)),
        ("$.State.EnteredTime", ("State", "EnteredTime")),
        ("$['a']", ("a",)),
        ("$.a-b", ("a-b",)),
        ("$", None),
        ("$.a[0]", None),
        ("$.a.*", None),
        ("$..a", None),
        ("$.`this`", None),
        ("$.a b", None),  # does not parse: moto's extract_json raises its error
    ],
)
def test_plain_fields_are_read_from_jsonpath_ng_s_own_parse(path: str, fields: tuple[str, ...] | None) -> None:
    assert plain_fields(MOTO_PARSE, path) == fields


def test_every_module_that_extracts_reads_fields_directly_when_the_speed_up_is_on(embedded_aws: Any) -> None:
    on = JSONPATH_CACHE in embedded_aws.speedups
    for module in EXTRACTING:
        assert (module.extract_json is not MOTO_EXTRACT) is on, module.__name__


BINDINGS = {
    "StartAt": "Bind",
    "States": {
        "Bind": {
            "Type": "Pass",
            "Parameters": {
                "event_id.$": "$.event_id",
                "n.$": "$.payload.n",
                "first.$": "$.payload.items[0]",
                "entered.$": "$$.State.Name",
                "whole.$": "$.payload",
            },
            "End": True,
        }
    },
}


def test_bindings_read_the_input_and_the_context(account: Account) -> None:
    execution_input = {"event_id": "e-1", "payload": {"n": 2, "items": [{"id": 7}]}}
    result = account.run(BINDINGS, execution_input)
    assert result.status == "SUCCEEDED", result.history[-1]
    output = json.loads(account.describe(result.arn)["output"])
    assert output == {
        "event_id": "e-1",
        "n": 2,
        "first": {"id": 7},
        "entered": "Bind",
        "whole": {"n": 2, "items": [{"id": 7}]},
    }


@pytest.mark.parametrize("execution_input", [{"event_id": "e-1"}, {"event_id": "e-1", "payload": ["n"]}])
def test_a_field_path_that_selects_nothing_fails_the_state(account: Account, execution_input: Any) -> None:
    result = account.run(single_state({"Type": "Pass", "Parameters": {"n.$": "$.payload.n"}}), execution_input)
    assert result.status == "FAILED"
    [failed] = [e for e in result.history if e["type"] == "ExecutionFailed"]
    details = failed["executionFailedEventDetails"]
    assert details["error"] == "States.Runtime"
    assert "$.payload.n" in details["cause"]

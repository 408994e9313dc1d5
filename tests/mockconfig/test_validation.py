"""A malformed mock configuration is an error naming the file, the test case, the state and the rule it broke."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from onceflow.engine.stepfunctions.mocking import (
    MockConfigError,
    Return,
    Throw,
    load_mock_config,
    load_test_case,
    validate_mock_config_file,
)
from onceflow.engine.stepfunctions.mocking.__main__ import main

MACHINE = "pipeline"

DEFINITION: dict[str, Any] = {
    "StartAt": "Record",
    "States": {
        "Record": {
            "Type": "Task",
            "Resource": "arn:aws:states:::aws-sdk:dynamodb:transactWriteItems",
            "Next": "Branch",
        },
        "Branch": {"Type": "Choice", "Choices": [], "Default": "Fan out"},
        "Fan out": {
            "Type": "Parallel",
            "Branches": [{"StartAt": "Publish", "States": {"Publish": {"Type": "Task", "Resource": "x", "End": True}}}],
            "Next": "Each",
        },
        "Each": {
            "Type": "Map",
            "ItemProcessor": {"StartAt": "Mark", "States": {"Mark": {"Type": "Task", "Resource": "x", "End": True}}},
            "End": True,
        },
    },
}

VALID: dict[str, Any] = {
    "StateMachines": {
        MACHINE: {
            "TestCases": {
                "HappyPath": {"Record": "Written", "Publish": "Accepted", "Mark": "Written"},
                "Throttled": {"Publish": "ThrottledThenAccepted"},
            }
        }
    },
    "MockedResponses": {
        "Written": {"0": {"Return": {}}},
        "Accepted": {"0": {"Return": {"MessageId": "m-1"}}},
        "ThrottledThenAccepted": {
            "0": {"Throw": {"Error": "SNS.ThrottledException", "Cause": "Rate exceeded"}},
            "1-2": {"Throw": {"Error": "SNS.ThrottledException", "Cause": "Rate exceeded"}},
            "3": {"Return": "any JSON value"},
        },
    },
}


def write(tmp_path: Path, config: Any) -> Path:
    path = tmp_path / "MockConfigFile.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path


def problems_of(tmp_path: Path, config: Any, state_machine: str | None = MACHINE) -> list[str]:
    """Each problem's text; asserts that loading fails."""
    with pytest.raises(MockConfigError) as raised:
        load_mock_config(write(tmp_path, config), DEFINITION, state_machine)
    for problem in raised.value.problems:
        assert str(problem).startswith(str(tmp_path / "MockConfigFile.json") + ": "), "every problem names the file"
        assert problem.rule in str(problem)
    return [str(p) for p in raised.value.problems]


def edited(**responses: Any) -> dict[str, Any]:
    config = copy.deepcopy(VALID)
    config["MockedResponses"].update(responses)
    return config


def test_valid_file_loads_with_nested_states_and_ranges(tmp_path):
    config = load_mock_config(write(tmp_path, VALID), DEFINITION, MACHINE)

    case = config.test_case(MACHINE, "Throttled")
    response = case.states["Publish"]
    assert response.invocations == 4
    assert [(r.key, r.first, r.last) for r in response.ranges] == [("0", 0, 0), ("1-2", 1, 2), ("3", 3, 3)]
    assert response.outcome_for(2) == Throw("SNS.ThrottledException", "Rate exceeded")
    assert response.outcome_for(3) == Return("any JSON value")
    assert response.outcome_for(4) is None
    assert set(config.test_case(MACHINE, "HappyPath").states) == {"Record", "Publish", "Mark"}


def test_unknown_state_names_the_test_case_state_and_a_suggestion(tmp_path):
    config = copy.deepcopy(VALID)
    config["StateMachines"][MACHINE]["TestCases"]["HappyPath"]["Pubilsh"] = "Accepted"

    [problem] = problems_of(tmp_path, config)

    assert "TestCases › HappyPath › state 'Pubilsh'" in problem
    assert "no state named 'Pubilsh'" in problem and "did you mean 'Publish'?" in problem
    assert "[rule: state-exists]" in problem


def test_a_state_that_is_not_a_task_cannot_be_mocked(tmp_path):
    config = copy.deepcopy(VALID)
    config["StateMachines"][MACHINE]["TestCases"]["HappyPath"]["Branch"] = "Written"

    [problem] = problems_of(tmp_path, config)

    assert "'Branch' is a Choice state" in problem and "[rule: task-state-only]" in problem


def test_unknown_mocked_response_name(tmp_path):
    config = copy.deepcopy(VALID)
    config["StateMachines"][MACHINE]["TestCases"]["Throttled"]["Publish"] = "ThrottledThenAccept"

    [problem] = problems_of(tmp_path, config)

    assert "TestCases › Throttled › state 'Publish'" in problem
    assert "'ThrottledThenAccept' is not defined in MockedResponses" in problem
    assert "did you mean 'ThrottledThenAccepted'?" in problem and "[rule: response-exists]" in problem


def test_response_name_must_be_a_string(tmp_path):
    config = copy.deepcopy(VALID)
    config["StateMachines"][MACHINE]["TestCases"]["Throttled"]["Publish"] = {"0": {"Return": {}}}

    [problem] = problems_of(tmp_path, config)

    assert "[rule: response-name-string]" in problem


@pytest.mark.parametrize(
    ("attempts", "rule", "text"),
    [
        ({"2-1": {"Return": {}}}, "attempt-range-order", 'range "2-1" ends before it starts'),
        ({"a": {"Return": {}}}, "attempt-key-format", 'attempt key "a" is neither'),
        ({"0": {"Return": {}}, "1-": {"Return": {}}}, "attempt-key-format", 'attempt key "1-"'),
        ({"-1": {"Return": {}}}, "attempt-key-format", 'attempt key "-1"'),
        ({" 0": {"Return": {}}}, "attempt-key-format", 'attempt key " 0"'),
        (
            {"0-2": {"Return": {}}, "2": {"Return": {}}},
            "attempt-ranges-overlap",
            '"0-2" and "2" both answer invocation 2',
        ),
        (
            {"0": {"Return": {}}, "3-4": {"Return": {}}},
            "attempt-ranges-gap",
            'nothing answers invocation 1-2 between "0" and "3-4"',
        ),
        (
            {"0": {"Return": {}}, "2": {"Return": {}}},
            "attempt-ranges-gap",
            'nothing answers invocation 1 between "0" and "2"',
        ),
        ({"1": {"Return": {}}}, "attempt-ranges-start-at-zero", 'the first attempt key is "1"'),
        ({}, "response-not-empty", "defines no attempts"),
        ({"0": {"Return": {}, "Throw": {"Error": "E", "Cause": "C"}}}, "return-xor-throw", "has both Return and Throw"),
        ({"0": {}}, "return-xor-throw", "has neither Return nor Throw"),
        ({"0": {"Throw": {"Cause": "no error name"}}}, "throw-fields", "Error must be a non-empty string"),
        ({"0": {"Throw": {"Error": "E"}}}, "throw-fields", "Cause must be a string"),
        ({"0": {"Throw": "SNS.ThrottledException"}}, "object-expected", "Throw must be a JSON object"),
        ({"0": {"Returns": {}}}, "known-fields", "unknown field 'Returns'"),
    ],
)
def test_malformed_mocked_responses(tmp_path, attempts, rule, text):
    problems = problems_of(tmp_path, edited(Accepted=attempts))

    matching = [p for p in problems if f"[rule: {rule}]" in p]
    assert matching, problems
    assert text in matching[0]
    assert "MockedResponses › Accepted" in matching[0]


def test_every_problem_is_reported_at_once(tmp_path):
    config = edited(Accepted={"2-1": {"Return": {}}}, Written={"0": {}})
    config["StateMachines"][MACHINE]["TestCases"]["HappyPath"]["Nope"] = "Missing"

    problems = problems_of(tmp_path, config)

    rules = sorted(p.rsplit("[rule: ", 1)[1].rstrip("]") for p in problems)
    assert rules == ["attempt-range-order", "response-exists", "return-xor-throw", "state-exists"]


def test_misspelt_top_level_field_is_not_silently_ignored(tmp_path):
    config = copy.deepcopy(VALID)
    config["MockedResponse"] = config.pop("MockedResponses")

    problems = problems_of(tmp_path, config)

    assert any("unknown field 'MockedResponse'" in p and "did you mean 'MockedResponses'?" in p for p in problems)
    assert any("MockedResponses is missing" in p and "[rule: required-field]" in p for p in problems)


def test_duplicate_keys_are_errors_not_last_one_wins(tmp_path):
    text = json.dumps(VALID).replace('"1-2": {', '"0": {"Return": {}}, "1-2": {', 1)

    [problem] = problems_of(tmp_path, text)

    assert "MockedResponses › ThrottledThenAccepted" in problem
    assert "key '0' appears more than once" in problem and "[rule: duplicate-key]" in problem


def test_state_machine_key_must_match_the_state_machine_name(tmp_path):
    [problem] = problems_of(tmp_path, VALID, state_machine="pipelines")

    assert "no entry for the state machine 'pipelines'" in problem and "did you mean 'pipeline'?" in problem
    assert "[rule: state-machine-exists]" in problem


def test_state_machine_entry_needs_test_cases(tmp_path):
    config = copy.deepcopy(VALID)
    config["StateMachines"][MACHINE] = {"Testcases": {}}

    problems = problems_of(tmp_path, config)

    assert any("unknown field 'Testcases'" in p and "did you mean 'TestCases'?" in p for p in problems)
    assert any("has no TestCases" in p for p in problems)


def test_not_json_and_unreadable_files(tmp_path):
    [problem] = problems_of(tmp_path, '{"StateMachines": {},\n "MockedResponses": }')
    assert "line 2 column" in problem and "[rule: json-syntax]" in problem

    with pytest.raises(MockConfigError) as raised:
        load_mock_config(tmp_path / "missing.json", DEFINITION)
    assert raised.value.rules == ["file-readable"]


def test_unknown_test_case_lists_the_known_ones(tmp_path):
    config = load_mock_config(write(tmp_path, VALID), DEFINITION, MACHINE)

    with pytest.raises(MockConfigError) as raised:
        config.test_case(MACHINE, "HapyPath")

    assert raised.value.rules == ["test-case-exists"]
    assert "'HappyPath', 'Throttled'" in str(raised.value)


def test_without_a_definition_only_the_format_is_checked(tmp_path):
    config = copy.deepcopy(VALID)
    config["StateMachines"][MACHINE]["TestCases"]["HappyPath"]["Anything"] = "Written"

    assert load_mock_config(write(tmp_path, config), None).test_case(MACHINE, "HappyPath").states["Anything"]


def test_validation_function_and_command_line(tmp_path, capsys):
    definition = tmp_path / "pipeline.asl.json"
    definition.write_text(json.dumps(DEFINITION))
    good = write(tmp_path, VALID)

    assert validate_mock_config_file(good, definition, MACHINE) == []
    assert main([str(good), "--definition", str(definition), "--state-machine", MACHINE]) == 0
    assert "valid; 2 test cases for pipeline" in capsys.readouterr().out

    bad = write(tmp_path, edited(Accepted={"a": {"Return": {}}}))
    [problem] = validate_mock_config_file(bad, definition)
    assert problem.rule == "attempt-key-format"
    assert main([str(bad), "--definition", str(definition)]) == 1
    assert "[rule: attempt-key-format]" in capsys.readouterr().err


def test_selected_test_case_must_be_valid_other_problems_are_warnings(tmp_path):
    """At start only the selected test case matters (Step Functions Local runs such a file)."""
    config = edited(Broken={"0": {"Return": {}}, "2": {"Return": {}}})  # a gap: invalid
    config["StateMachines"][MACHINE]["TestCases"]["Other"] = {"Publsh": "Broken"}
    path = write(tmp_path, config)

    case, warnings = load_test_case(path, DEFINITION, MACHINE, "Throttled")

    assert set(case.states) == {"Publish"}
    assert sorted(p.rule for p in warnings) == ["attempt-ranges-gap", "state-exists"]

    with pytest.raises(MockConfigError) as raised:
        load_test_case(path, DEFINITION, MACHINE, "Other")
    assert sorted(raised.value.rules) == ["attempt-ranges-gap", "state-exists"], "its state and its response"


def test_a_structural_problem_refuses_every_test_case(tmp_path):
    config = copy.deepcopy(VALID)
    config["MockedResponse"] = config.pop("MockedResponses")  # misspelt: nothing would be mocked

    with pytest.raises(MockConfigError) as raised:
        load_test_case(write(tmp_path, config), DEFINITION, MACHINE, "HappyPath")
    assert "known-fields" in raised.value.rules

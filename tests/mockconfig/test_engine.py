"""How the embedded engine treats `stateMachineArn#TestCase`: the repo's file, bad files, unknown cases."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from onceflow.engine import ACCOUNT_ID
from onceflow.engine.stepfunctions.mocking import SFN_MOCK_CONFIG, load_mock_config
from onceflow.local.stack import client
from onceflow.ops.executions import list_executions, wait_for
from tests.mockconfig.cases import (
    ASL_FILE,
    DEAD_LETTER,
    EVENT_ID,
    MOCK_CONFIG_FILE,
    PUBLISH,
    event_input,
    run_case,
    state_rows,
)


def start(endpoint_url: str, state_machine_arn: str, name: str = "mock-start") -> dict[str, Any]:
    return client(endpoint_url, "stepfunctions").start_execution(
        stateMachineArn=state_machine_arn, name=name, input=json.dumps(event_input())
    )


def refused(endpoint_url: str, state_machine_arn: str) -> tuple[str, str]:
    """Start it, expect a refusal that created no execution; return the error code and message."""
    with pytest.raises(ClientError) as raised:
        start(endpoint_url, state_machine_arn)
    base_arn = state_machine_arn.split("#")[0]
    assert list_executions(client(endpoint_url, "stepfunctions"), base_arn) == []
    return raised.value.response["Error"]["Code"], raised.value.response["Error"]["Message"]


def test_repo_file_is_valid_for_the_deployed_state_machine(mock_stack):
    """The StateMachines key is the name the state machine is created with, as Step Functions Local requires."""
    name = mock_stack.state_machine_arn.rsplit(":", 1)[1]
    definition = mock_stack.client("stepfunctions").describe_state_machine(
        stateMachineArn=mock_stack.state_machine_arn
    )["definition"]

    config = load_mock_config(MOCK_CONFIG_FILE, definition, state_machine=name)

    assert config.state_machines == [name]
    assert set(config.test_cases[name]) >= {
        "HappyPath",
        "PublishThrottledTwiceThenSucceeds",
        "PublishFailsBeyondRetries",
        "RecordCancelledAlreadySent",
        "RecordCancelledPending",
        "RecordCancelledDifferentPayload",
        "RecordCancelledNoRecordThenSucceeds",
    }
    load_mock_config(MOCK_CONFIG_FILE, ASL_FILE.read_text(), state_machine=name)  # the source file too


def test_mocked_lookups_describe_the_event_the_tests_send():
    """The mocked look-up answers (transactGetItems: the state record, then the order row) carry the
    starter's payload_hash for the test event; a change in how the starter hashes makes them stale, and
    this says so before the path assertions fail."""
    config = json.loads(MOCK_CONFIG_FILE.read_text())
    expected = event_input()["payload_hash"]
    for name in ("EarlierRecordSent", "EarlierRecordPending", "OnlyTheOrderRemains"):
        state, business = config["MockedResponses"][name]["0"]["Return"]["Responses"]
        for item, key in ((state.get("Item"), "event_id"), (business["Item"], "order_id")):
            if item is not None:
                assert item[key]["S"] == EVENT_ID
                assert item["payload_hash"]["S"] == expected, f"update {name} in {MOCK_CONFIG_FILE.name} to {expected}"


def test_plain_arn_runs_unmocked(mock_stack):
    execution_arn = start(mock_stack.endpoint_url, mock_stack.state_machine_arn, name="no-test-case")["executionArn"]

    result = wait_for(mock_stack.client("stepfunctions"), execution_arn, timeout=15)

    assert result.status == "SUCCEEDED"
    assert [row["status"] for row in state_rows(mock_stack)] == ["sent"]


def test_unknown_test_case_is_refused(mocking_engine, bare_state_machine):
    code, message = refused(mocking_engine.endpoint_url, bare_state_machine + "#HapyPath")

    assert code == "InvalidName"
    assert "no test case named 'HapyPath'" in message and "'HappyPath'" in message


def _broken_copy(tmp_path, monkeypatch) -> Any:
    """The repo's file with HappyPath mocking a state that does not exist; SFN_MOCK_CONFIG names it."""
    config = json.loads(MOCK_CONFIG_FILE.read_text())
    [cases] = config["StateMachines"].values()
    cases["TestCases"]["HappyPath"]["Publish notifications"] = cases["TestCases"]["HappyPath"].pop(PUBLISH)
    broken = tmp_path / "MockConfigFile.json"
    broken.write_text(json.dumps(config))
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(broken))
    return broken


def test_invalid_test_case_is_refused_naming_file_case_state_and_rule(
    mocking_engine, bare_state_machine, tmp_path, monkeypatch
):
    broken = _broken_copy(tmp_path, monkeypatch)

    code, message = refused(mocking_engine.endpoint_url, bare_state_machine + "#HappyPath")

    assert code == "ValidationException"
    assert str(broken) in message
    assert "TestCases › HappyPath › state 'Publish notifications'" in message
    assert "did you mean 'Publish notification'?" in message and "[rule: state-exists]" in message


def test_problems_in_other_test_cases_are_warnings_not_refusals(mock_stack, tmp_path, monkeypatch, caplog):
    """Step Functions Local and LocalStack run a file whose other test cases are broken: only the
    selected test case must be valid (https://docs.aws.amazon.com/step-functions/latest/dg/sfn-local-mock-cfg-file.html)."""
    _broken_copy(tmp_path, monkeypatch)
    config = json.loads(Path(os.environ[SFN_MOCK_CONFIG]).read_text())
    config["MockedResponses"]["NeverUsed"] = {"0": {"Return": {}}, "2": {"Return": {}}}  # a gap: invalid
    Path(os.environ[SFN_MOCK_CONFIG]).write_text(json.dumps(config))

    with caplog.at_level(logging.WARNING, logger="onceflow.engine.stepfunctions.mocking"):
        result = run_case(mock_stack, "PublishThrottledTwiceThenSucceeds")

    assert result.status == "SUCCEEDED", "the selected test case ran"
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "TestCases › HappyPath › state 'Publish notifications'" in warned
    assert "MockedResponses › NeverUsed" in warned


def test_test_case_without_a_mock_configuration_is_refused(mocking_engine, bare_state_machine, monkeypatch):
    monkeypatch.delenv(SFN_MOCK_CONFIG)

    code, message = refused(mocking_engine.endpoint_url, bare_state_machine + "#HappyPath")

    assert code == "ValidationException"
    assert f"{SFN_MOCK_CONFIG} does not name a mock configuration file" in message


def test_running_out_of_mocked_responses_fails_the_execution_unhandled(mock_stack, tmp_path, monkeypatch):
    """ "If a state is invoked more times than it has mocked responses, the execution fails" (Step
    Functions Local): neither Publish's Retry nor its States.ALL Catch (the dead-letter path) handles it."""
    config = json.loads(MOCK_CONFIG_FILE.read_text())
    [cases] = config["StateMachines"].values()
    cases["TestCases"]["TooFewAnswers"] = {PUBLISH: "OneThrottle"}
    config["MockedResponses"]["OneThrottle"] = {"0": {"Throw": {"Error": "SNS.ThrottledException", "Cause": "slow"}}}
    path = tmp_path / "MockConfigFile.json"
    path.write_text(json.dumps(config))
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(path))

    result = run_case(mock_stack, "TooFewAnswers")

    assert result.status == "FAILED"
    failures = result.task_failures(PUBLISH)
    assert [f["error"] for f in failures] == ["SNS.ThrottledException", "States.Runtime"]
    assert "state 'Publish notification' was invoked a 2nd time (invocation 1)" in failures[1]["cause"]
    assert "'OneThrottle' answers only invocations 0-0" in failures[1]["cause"]
    assert result.attempts(PUBLISH) == 2, "the exhausted invocation is not retried"
    assert DEAD_LETTER not in result.path, "nor caught by the States.ALL Catch"
    assert result.error == "States.Runtime"


def test_running_out_of_mocked_responses_of_a_bare_lambda_arn_is_a_runtime_error(mocking_engine, tmp_path, monkeypatch):
    """The same for a Task whose Resource is a bare Lambda function ARN (Step Functions Local: the
    execution fails): moto's Lambda integration named the exhausted-mock Python exception
    `Exception`, which a States.ALL Retry retried and a States.ALL Catch caught."""
    mocking_engine.reset()
    name = "bare-lambda-mocks"
    definition = {
        "StartAt": "Call",
        "States": {
            "Call": {
                "Type": "Task",
                "Resource": f"arn:aws:lambda:us-east-1:{ACCOUNT_ID}:function:anything",
                "Retry": [
                    {"ErrorEquals": ["Boom"], "MaxAttempts": 1, "IntervalSeconds": 1},
                    {"ErrorEquals": ["States.ALL"], "MaxAttempts": 3, "IntervalSeconds": 1},
                ],
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}],
                "End": True,
            },
            "Caught": {"Type": "Succeed"},
        },
    }
    config = {
        "StateMachines": {name: {"TestCases": {"OneAnswer": {"Call": "OneBoom"}}}},
        "MockedResponses": {"OneBoom": {"0": {"Throw": {"Error": "Boom", "Cause": "mocked"}}}},
    }
    path = tmp_path / "MockConfigFile.json"
    path.write_text(json.dumps(config))
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(path))
    sfn = client(mocking_engine.endpoint_url, "stepfunctions")
    arn = sfn.create_state_machine(
        name=name, definition=json.dumps(definition), roleArn=f"arn:aws:iam::{ACCOUNT_ID}:role/mocks"
    )["stateMachineArn"]

    execution = sfn.start_execution(stateMachineArn=f"{arn}#OneAnswer", name="exhausted", input="{}")
    result = wait_for(sfn, execution["executionArn"], timeout=30)

    assert result.status == "FAILED" and result.error == "States.Runtime"
    failed = [e["taskFailedEventDetails"]["error"] for e in result.history if e["type"] == "TaskFailed"]
    assert failed == ["Boom", "States.Runtime"], "the exhausted invocation is neither retried nor caught"

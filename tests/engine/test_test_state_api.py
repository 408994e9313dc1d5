"""TestState on the embedded endpoint, called with the plain boto3 `test_state`, answers as AWS does.

API: https://docs.aws.amazon.com/step-functions/latest/apireference/API_TestState.html (request and
response members as botocore's service model has them). Behaviour: the developer guide's "Testing
state machines with TestState API" (https://docs.aws.amazon.com/step-functions/latest/dg/test-state-isolation.html):
inspection levels, a whole definition with stateName, mocks (result / errorOutput,
fieldValidationMode), stateConfiguration.retrierRetryCount and the RETRIABLE / CAUGHT_ERROR
statuses. Validation messages are the ones LocalStack's parity tests recorded against AWS.
"""

from __future__ import annotations

import json
import re
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from onceflow.engine import ACCOUNT_ID, REGION
from tests.engine.harness import ROLE_ARN, Account

TOPIC_ARN = f"arn:aws:sns:{REGION}:{ACCOUNT_ID}:test-state-topic"


def sfn(account: Account, inject_host_prefix: bool = False) -> Any:
    """TestState goes to a `sync-` host prefix on AWS; a local endpoint has no such host."""
    return boto3.client(
        "stepfunctions",
        endpoint_url=account.aws.endpoint_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(inject_host_prefix=inject_host_prefix, retries={"total_max_attempts": 1}),
    )


def test_state(account: Account, state: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("input", "{}")
    response = sfn(account).test_state(definition=json.dumps(state), **kwargs)
    response.pop("ResponseMetadata")
    return response


test_state.__test__ = False  # type: ignore[attr-defined]


def error_of(call: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


PUBLISH = {
    "Type": "Task",
    "Resource": "arn:aws:states:::sns:publish",
    "Parameters": {"TopicArn": TOPIC_ARN, "Message.$": "$.message"},
    "ResultSelector": {"id.$": "$.MessageId"},
    "ResultPath": "$.published",
    "Retry": [
        {"ErrorEquals": ["SNS.InternalErrorException"], "MaxAttempts": 1, "IntervalSeconds": 1},
        {"ErrorEquals": ["SNS.ThrottledException"], "MaxAttempts": 3, "IntervalSeconds": 2, "BackoffRate": 2},
    ],
    "Catch": [{"ErrorEquals": ["SNS.ThrottledException"], "ResultPath": "$.error", "Next": "Dead-letter"}],
    "Next": "Mark as sent",
}


def test_plain_call_needs_inject_host_prefix_false_on_a_local_endpoint(account: Account) -> None:
    definition = json.dumps({"Type": "Pass", "End": True})
    with pytest.raises(EndpointConnectionError, match=re.escape("http://sync-127.0.0.1:")):
        sfn(account, inject_host_prefix=True).test_state(definition=definition)
    assert sfn(account).test_state(definition=definition)["status"] == "SUCCEEDED"


def test_info_level_returns_output_and_next_state_only(account: Account) -> None:
    response = test_state(
        account, {"Type": "Pass", "Result": {"b": 2}, "ResultPath": "$.r", "Next": "Later"}, input='{"a":1}'
    )
    assert response == {"status": "SUCCEEDED", "output": '{"a":1,"r":{"b":2}}', "nextState": "Later"}


def test_debug_level_shows_each_data_flow_step(account: Account) -> None:
    """A Pass without `Result` shows no `result` step (AWS's recording: LocalStack's
    test_test_state_scenarios.snapshot.json, test_base_inspection_level_debug[IO_PASS_STATE])."""
    state = {
        "Type": "Pass",
        "InputPath": "$.order",
        "Parameters": {"id.$": "$.id", "kind": "order"},
        "ResultPath": "$.shaped",
        "End": True,
    }
    response = test_state(account, state, input='{"order":{"id":"o-1"},"other":1}', inspectionLevel="DEBUG")
    assert response["status"] == "SUCCEEDED"
    assert "nextState" not in response
    assert response["inspectionData"] == {
        "input": '{"order":{"id":"o-1"},"other":1}',
        "afterInputPath": '{"id":"o-1"}',
        "afterParameters": '{"id":"o-1","kind":"order"}',
        "afterResultSelector": '{"id":"o-1","kind":"order"}',
        # ResultPath places the result into the state's input, not into what InputPath selected.
        "afterResultPath": '{"order":{"id":"o-1"},"other":1,"shaped":{"id":"o-1","kind":"order"}}',
    }
    assert response["output"] == '{"order":{"id":"o-1"},"other":1,"shaped":{"id":"o-1","kind":"order"}}'


def test_trace_level_is_debug_for_states_that_are_not_http_tasks(account: Account) -> None:
    state = {"Type": "Pass", "End": True}
    debug = test_state(account, state, input='{"a":1}', inspectionLevel="DEBUG")
    trace = test_state(account, state, input='{"a":1}', inspectionLevel="TRACE")
    assert trace == debug
    assert "request" not in trace["inspectionData"] and "response" not in trace["inspectionData"]


def test_whole_definition_with_state_name_tests_that_state(account: Account) -> None:
    """stateName picks the state out of the definition; its `$$.State.Name` is "StateName" all the
    same (AWS's recording: LocalStack's test_state/test_test_state_scenarios.snapshot.json,
    test_state_with_variables[base_expressions]: stateName "State0", State.Name "StateName")."""
    machine = {
        "StartAt": "First",
        "States": {
            "First": {"Type": "Pass", "Result": "first", "Next": "Second"},
            "Second": {"Type": "Pass", "Parameters": {"me.$": "$$.State.Name"}, "Next": "Third"},
            "Third": {"Type": "Succeed"},
        },
    }
    response = test_state(account, machine, stateName="Second")
    assert response == {"status": "SUCCEEDED", "output": '{"me":"StateName"}', "nextState": "Third"}


def test_state_name_not_in_the_definition_is_a_validation_error(account: Account) -> None:
    machine = {"StartAt": "Only", "States": {"Only": {"Type": "Succeed"}}}
    assert error_of(lambda: test_state(account, machine, stateName="Other")) == (
        "ValidationException",
        "State not found in definition",
    )


def test_variables_are_reported_in_inspection_data(account: Account) -> None:
    """Reading them in the state needs moto's JSONata evaluator, which moto 5.2.5 ships without."""
    state = {"Type": "Pass", "End": True}
    response = test_state(account, state, variables='{"greeting":"hello"}', inspectionLevel="DEBUG")
    assert response["status"] == "SUCCEEDED"
    assert response["inspectionData"]["variables"] == '{"greeting":"hello"}'


def test_variables_must_be_a_json_object(account: Account) -> None:
    code, _ = error_of(lambda: test_state(account, {"Type": "Pass", "End": True}, variables="[1]"))
    assert code == "ValidationException"


CHOICE = {
    "Type": "Choice",
    "Choices": [{"Variable": "$.status", "StringEquals": "sent", "Next": "Already sent"}],
}


def test_choice_reports_the_branch_taken(account: Account) -> None:
    taken = test_state(account, CHOICE, input='{"status":"sent"}')
    assert taken == {"status": "SUCCEEDED", "output": '{"status":"sent"}', "nextState": "Already sent"}


def test_choice_without_a_match_or_default_fails_with_no_choice_matched(account: Account) -> None:
    """AWS's error-handling page: States.NoChoiceMatched (engine/stepfunctions/strict.py; moto raised
    States.Runtime)."""
    unmatched = test_state(account, CHOICE, input='{"status":"other"}')
    assert (unmatched["status"], unmatched["error"]) == ("FAILED", "States.NoChoiceMatched")


def test_fail_state_returns_its_error_and_cause(account: Account) -> None:
    response = test_state(account, {"Type": "Fail", "Error": "Onceflow.DeadLettered", "Cause": "conflict"})
    assert response == {"status": "FAILED", "error": "Onceflow.DeadLettered", "cause": "conflict"}


def test_task_calls_the_real_service_without_a_mock(account: Account) -> None:
    account.client("sns").create_topic(Name="test-state-topic")
    response = test_state(account, PUBLISH, input='{"message":"hi"}', roleArn=ROLE_ARN, inspectionLevel="DEBUG")
    assert response["status"] == "SUCCEEDED"
    assert response["nextState"] == "Mark as sent"
    published = json.loads(response["output"])["published"]
    assert set(published) == {"id"} and published["id"]
    assert json.loads(response["inspectionData"]["afterParameters"]) == {"TopicArn": TOPIC_ARN, "Message": "hi"}


def test_task_without_role_or_mock_is_a_validation_error(account: Account) -> None:
    assert error_of(lambda: test_state(account, PUBLISH, input='{"message":"hi"}')) == (
        "ValidationException",
        "RoleArn must be specified when testing a Task state",
    )


def test_mocked_result_replaces_the_call_and_needs_no_role(account: Account) -> None:
    response = test_state(
        account,
        PUBLISH,
        input='{"message":"hi"}',
        inspectionLevel="DEBUG",
        mock={"result": '{"MessageId":"m-1"}'},
    )
    assert response["status"] == "SUCCEEDED"
    assert response["output"] == '{"message":"hi","published":{"id":"m-1"}}'
    assert response["inspectionData"]["result"] == '{"MessageId":"m-1"}'
    assert response["inspectionData"]["afterResultSelector"] == '{"id":"m-1"}'


def test_a_jsonata_task_shows_its_result_between_arguments_and_output(account: Account) -> None:
    """As AWS recorded it (LocalStack's test_state/test_test_state_scenarios.snapshot.json,
    test_localstack_blogpost_scenario, large_purchase_ask_for_approval_response: a mocked JSONata
    Task at TRACE shows input, afterArguments and result; Output makes the output from it)."""
    state = {
        "Type": "Task",
        "QueryLanguage": "JSONata",
        "Resource": "arn:aws:states:::sns:publish",
        "Arguments": {"TopicArn": TOPIC_ARN, "Message": "{% $states.input.message %}"},
        "Output": {"id": "{% $states.result.MessageId %}", "by": "Mary"},
        "End": True,
    }
    response = test_state(
        account, state, input='{"message":"hi"}', inspectionLevel="TRACE", mock={"result": '{"MessageId":"m-1"}'}
    )
    assert response["status"] == "SUCCEEDED"
    assert response["output"] == '{"id":"m-1","by":"Mary"}'
    assert response["inspectionData"] == {
        "input": '{"message":"hi"}',
        "afterArguments": json.dumps({"TopicArn": TOPIC_ARN, "Message": "hi"}, separators=(",", ":")),
        "result": '{"MessageId":"m-1"}',
    }


def test_context_object_of_the_request_is_the_one_the_state_sees(account: Account) -> None:
    context = {
        "Execution": {"Id": "arn:aws:states:us-east-1:123456789012:execution:m:given"},
        "State": {"RetryCount": 2},
    }
    state = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sns:publish",
        "Parameters": {
            "TopicArn": TOPIC_ARN,
            "Message.$": "$$.Execution.Id",
            "Subject.$": "States.Format('{}', $$.State.RetryCount)",
        },
        "End": True,
    }
    response = test_state(
        account, state, inspectionLevel="DEBUG", mock={"result": '{"MessageId":"m"}'}, context=json.dumps(context)
    )
    assert json.loads(response["inspectionData"]["afterParameters"]) == {
        "TopicArn": TOPIC_ARN,
        "Message": "arn:aws:states:us-east-1:123456789012:execution:m:given",
        "Subject": "2",
    }


@pytest.mark.parametrize(
    "context", [{"Execution": {}, "State": {}, "StateMachine": {}}, {}], ids=["empty-sections", "empty"]
)
def test_a_given_context_object_is_dollar_dollar_as_given(account: Account, context: dict) -> None:
    """AWS's recording (LocalStack's test_state/test_state_context_object.snapshot.json,
    test_state_context_object_edge_cases[EMPTY_OBJECTS] and [EMPTY]): with a request's `context`,
    `$$` is that object as given, empty sections and all; the engine filled in its own Execution,
    State and StateMachine fields (Id, Name, StartTime, RetryCount, ...)."""
    state = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName.$": "$.FunctionName", "Payload": {"Input.$": "$"}},
        "ResultSelector": {"LambdaOutput.$": "$", "ContextObjectValue.$": "$$"},
        "End": True,
    }
    response = test_state(
        account,
        state,
        input=json.dumps({"FunctionName": "f", "Payload": {"input-value": 0}}),
        inspectionLevel="TRACE",
        mock={"result": json.dumps({"pokemon": "pikachu"})},
        context=json.dumps(context),
    )
    assert response["status"] == "SUCCEEDED", response
    assert json.loads(response["output"]) == {"LambdaOutput": {"pokemon": "pikachu"}, "ContextObjectValue": context}


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"Execution": {"Id": 1}}, "Execution.Id must be a string"),
        ({"Execution": {"pokemon": "squirtle"}}, "Field 'pokemon' is not allowed"),
        ({"Pokedex": {}}, "Field 'Pokedex' is not allowed"),
    ],
)
def test_context_object_fields_are_validated(account: Account, context: dict, message: str) -> None:
    """AWS's recording (LocalStack's test_state/test_state_context_object.snapshot.json,
    test_state_context_object_validation_failures): ValidationException "Invalid Context object
    provided: <message>" for a field TestState does not know or of the wrong type (moto ran the state)."""
    state = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sns:publish",
        "Parameters": {"TopicArn": TOPIC_ARN},
        "End": True,
    }

    code, text = error_of(
        lambda: test_state(account, state, mock={"result": '{"MessageId":"m"}'}, context=json.dumps(context))
    )

    assert (code, text) == ("ValidationException", f"Invalid Context object provided: {message}")


def test_context_without_a_mock_is_a_validation_error(account: Account) -> None:
    code, _ = error_of(lambda: test_state(account, {"Type": "Pass", "End": True}, context="{}"))
    assert code == "ValidationException"


def test_mocked_error_a_retrier_retries_is_retriable(account: Account) -> None:
    """retrierRetryCount is the number of retries already made by the Retrier that matches."""
    mock = {"errorOutput": {"error": "SNS.ThrottledException", "cause": "Rate exceeded"}}
    for retries_made, backoff in ((0, 2), (1, 4), (2, 8)):
        response = test_state(
            account,
            PUBLISH,
            input='{"message":"hi"}',
            inspectionLevel="DEBUG",
            mock=mock,
            stateConfiguration={"retrierRetryCount": retries_made},
        )
        assert response["status"] == "RETRIABLE"
        assert (response["error"], response["cause"]) == ("SNS.ThrottledException", "Rate exceeded")
        assert "nextState" not in response and "output" not in response
        assert response["inspectionData"]["errorDetails"] == {
            "retryIndex": 1,
            "retryBackoffIntervalSeconds": backoff,
        }


def test_mocked_error_past_the_retries_of_its_retrier_names_that_retrier(account: Account) -> None:
    """AWS's recording (LocalStack's test_state/test_state_configuration.snapshot.json,
    test_state_configuration_retrier_retry_count, exceeds_tolerated_retry_count): status FAILED,
    errorDetails {"retryIndex": 0} (the retrier whose attempts are used up; moto: no errorDetails)."""
    state = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sns:publish",
        "Parameters": {"TopicArn": TOPIC_ARN, "Message": "m"},
        "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2}],
        "End": True,
    }
    response = test_state(
        account,
        state,
        inspectionLevel="DEBUG",
        mock={"errorOutput": {"error": "SNS.ThrottledException", "cause": "Rate exceeded"}},
        stateConfiguration={"retrierRetryCount": 2},
    )
    assert response["status"] == "FAILED"
    assert response["inspectionData"]["errorDetails"] == {"retryIndex": 0}


def test_mocked_error_past_the_retries_is_caught(account: Account) -> None:
    response = test_state(
        account,
        PUBLISH,
        input='{"message":"hi"}',
        inspectionLevel="DEBUG",
        mock={"errorOutput": {"error": "SNS.ThrottledException", "cause": "Rate exceeded"}},
        stateConfiguration={"retrierRetryCount": 3},
    )
    assert response["status"] == "CAUGHT_ERROR"
    assert response["nextState"] == "Dead-letter"
    assert (response["error"], response["cause"]) == ("SNS.ThrottledException", "Rate exceeded")
    assert json.loads(response["output"]) == {
        "message": "hi",
        "error": {"Error": "SNS.ThrottledException", "Cause": "Rate exceeded"},
    }
    assert response["inspectionData"]["errorDetails"] == {"catchIndex": 0}


def test_mocked_error_nothing_handles_fails(account: Account) -> None:
    response = test_state(
        account,
        PUBLISH,
        input='{"message":"hi"}',
        mock={"errorOutput": {"error": "SNS.InternalErrorException", "cause": "boom"}},
        stateConfiguration={"retrierRetryCount": 1},
    )
    assert response == {"status": "FAILED", "error": "SNS.InternalErrorException", "cause": "boom"}


def test_states_all_does_not_catch_a_runtime_error(account: Account) -> None:
    """AWS's error-handling page: States.ALL matches any error name except States.Runtime, which fails."""
    task = {**PUBLISH, "Retry": [], "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Dead-letter"}]}
    mock = {"errorOutput": {"error": "States.Runtime", "cause": "a broken path"}}
    response = test_state(account, task, input='{"message":"hi"}', mock=mock)
    assert (response["status"], response["error"]) == ("FAILED", "States.Runtime")


def test_a_mocked_error_of_an_optimized_dynamodb_task_keeps_its_name(account: Account) -> None:
    update = {
        "Type": "Task",
        "Resource": "arn:aws:states:::dynamodb:updateItem",
        "Parameters": {"TableName": "t", "Key": {"id": {"S": "1"}}, "UpdateExpression": "SET a = :a"},
        "Retry": [{"ErrorEquals": ["DynamoDB.ThrottlingException"], "MaxAttempts": 2}],
        "End": True,
    }
    mock = {"errorOutput": {"error": "DynamoDB.ThrottlingException", "cause": "slow down"}}
    response = test_state(account, update, mock=mock)
    assert (response["status"], response["error"], response["cause"]) == (
        "RETRIABLE",
        "DynamoDB.ThrottlingException",
        "slow down",
    )


WAIT_FOR_CALLBACK = {
    "Type": "Task",
    "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
    "Parameters": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q", "MessageBody.$": "$$.Task.Token"},
    "End": True,
}


def test_a_callback_task_runs_only_with_a_mock(account: Account) -> None:
    """The API reference: TestState supports .sync / .waitForTaskToken and Activity tasks only when mocked."""
    code, _ = error_of(lambda: test_state(account, WAIT_FOR_CALLBACK, roleArn=ROLE_ARN))
    assert code == "InvalidDefinition"
    mocked = test_state(account, WAIT_FOR_CALLBACK, mock={"result": '{"approved":true}', "fieldValidationMode": "NONE"})
    assert (mocked["status"], mocked["output"]) == ("SUCCEEDED", '{"approved":true}')


START_EXECUTION = {
    "Type": "Task",
    "Resource": "arn:aws:states:::aws-sdk:sfn:startExecution",
    "Parameters": {"StateMachineArn": f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:child"},
    "End": True,
}


@pytest.mark.parametrize(
    ("mode", "result", "expected"),
    [
        # StartExecutionOutput requires executionArn and startDate (SFN-cased for the aws-sdk integration).
        (
            "STRICT",
            {"ExecutionArn": "arn"},
            "Mock result schema validation error: Required field 'StartDate' is missing",
        ),
        ("STRICT", {"ExecutionArn": "arn", "StartDate": "2025-01-01T00:00:00Z"}, None),
        ("PRESENT", {"ExecutionArn": "arn"}, None),
        ("PRESENT", {"ExecutionArn": 7}, "Mock result schema validation error: Field 'ExecutionArn' must be a string"),
        ("NONE", {"ExecutionArn": 7}, None),
    ],
)
def test_field_validation_mode_checks_the_mock_against_the_api_output(
    account: Account, mode: str, result: dict[str, Any], expected: str | None
) -> None:
    mock = {"result": json.dumps(result), "fieldValidationMode": mode}
    if expected is None:
        assert test_state(account, START_EXECUTION, mock=mock)["status"] == "SUCCEEDED"
    else:
        assert error_of(lambda: test_state(account, START_EXECUTION, mock=mock)) == ("ValidationException", expected)


def test_field_validation_defaults_to_strict(account: Account) -> None:
    code, message = error_of(lambda: test_state(account, START_EXECUTION, mock={"result": "{}"}))
    assert code == "ValidationException" and "Required field" in message


_BRANCH = {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": True}}}
PARALLEL = {"Type": "Parallel", "Branches": [_BRANCH, _BRANCH], "End": True}
MAP = {"Type": "Map", "ItemProcessor": _BRANCH, "End": True}


@pytest.mark.parametrize(
    ("state", "kwargs", "expected"),
    [
        (
            {**PARALLEL, "Branches": []},
            {"mock": {"result": "[]"}},
            (
                "InvalidDefinition",
                "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Value cannot be empty at "
                "/States/StateName/Branches'",
            ),
        ),
        (PARALLEL, {"mock": {"result": '{"a": 1}'}}, ("ValidationException", "Mocked result must be an array.")),
        (
            PARALLEL,
            {"mock": {"result": "[1]"}},
            (
                "ValidationException",
                "Mocked result must contain the same number of items as number of Parallel branches.",
            ),
        ),
        (MAP, {"mock": {"result": '{"a": 1}'}}, ("ValidationException", "Mocked result must be an array.")),
        (
            {**MAP, "ResultWriter": {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "b"}}},
            {"mock": {"result": "[1]"}},
            ("ValidationException", "Mocked result must be a JSON object."),
        ),
        (
            MAP,
            {"stateConfiguration": {"mapIterationFailureCount": 1}},
            (
                "ValidationException",
                "TestState does not support MapIterationFailureCount when a mock is not specified.",
            ),
        ),
        (
            MAP,
            {"mock": {"result": "[1]"}, "stateConfiguration": {"mapIterationFailureCount": 2}},
            (
                "ValidationException",
                "Map iteration failure count must be less than or equal to the number of Map iterations",
            ),
        ),
    ],
)
def test_map_and_parallel_mocks_are_checked_as_aws_checks_them(
    account: Account, state: dict[str, Any], kwargs: dict[str, Any], expected: tuple[str, str]
) -> None:
    """AWS's messages, as recorded (LocalStack's test_state_mock_validation.snapshot.json)."""
    assert error_of(lambda: test_state(account, state, **kwargs)) == expected


def test_parallel_with_a_mocked_result_runs_its_result_path_on_it(account: Account) -> None:
    """The mocked result stands for the branches' results; InputPath, ResultSelector, ResultPath and
    OutputPath apply as in an execution; inspectionData shows the input and the result's steps only,
    the mock in the caller's own text (AWS's recording: test_io_parallel_state_mock_success[DEBUG],
    test_base_parallel_state_mock_success[DEBUG])."""
    state = {**PARALLEL, "InputPath": "$.parallelInput", "ResultPath": "$.parallelResult"}
    mocked = '[{"branch1": "result"}, {"branch2": "result"}]'  # spaced as the caller wrote it

    response = test_state(
        account, state, input='{"parallelInput":{"data":1}}', inspectionLevel="DEBUG", mock={"result": mocked}
    )

    assert response["status"] == "SUCCEEDED"
    assert json.loads(response["output"]) == {"parallelInput": {"data": 1}, "parallelResult": json.loads(mocked)}
    assert response["inspectionData"] == {
        "input": '{"parallelInput":{"data":1}}',
        "afterResultSelector": mocked,
        "afterResultPath": response["output"],
    }
    bare = test_state(account, PARALLEL, inspectionLevel="DEBUG", mock={"result": mocked})
    assert bare["output"] == mocked


def test_map_with_a_mocked_result_reports_max_concurrency_and_its_tolerance(account: Account) -> None:
    """inspectionData of a Map: maxConcurrency (0 when not declared) and the declared tolerance as
    numbers; failed iterations (stateConfiguration.mapIterationFailureCount) over the tolerated count
    fail the Map with States.ExceedToleratedFailureThreshold, which its Catch handles (AWS's
    recording: test_state_configuration.snapshot.json, test_map_state_failure_count[DEBUG-*])."""
    state = {
        **MAP,
        "ToleratedFailureCount": 1,
        "Catch": [{"ErrorEquals": ["States.ExceedToleratedFailureThreshold"], "Next": "Threshold"}],
    }
    ok = test_state(account, state, inspectionLevel="DEBUG", mock={"result": "[1, 1, 1]"})
    assert ok["status"] == "SUCCEEDED" and ok["output"] == "[1, 1, 1]"
    assert ok["inspectionData"]["maxConcurrency"] == 0 and ok["inspectionData"]["toleratedFailureCount"] == 1

    over = test_state(
        account,
        state,
        inspectionLevel="DEBUG",
        mock={"result": "[0, 0, 1]"},
        stateConfiguration={"mapIterationFailureCount": 2},
    )

    assert over["status"] == "CAUGHT_ERROR" and over["nextState"] == "Threshold"
    assert over["error"] == "States.ExceedToleratedFailureThreshold"
    assert over["cause"] == "The specified tolerated failure threshold was exceeded"
    assert over["inspectionData"]["errorDetails"] == {"catchIndex": 0}


@pytest.mark.parametrize("failures", [0, 2])
def test_a_jsonpath_map_shows_its_input_and_items_before_an_iteration_error(account: Account, failures: int) -> None:
    """AWS's recording (LocalStack's test_state/test_state_configuration.snapshot.json,
    test_state_machine_with_state_error[DEBUG] and [TRACE], 2025): TestState of a JSONPath Map
    (`ItemsPath: $.Values`) whose iteration state fails (stateConfiguration.errorCausedByState, a
    mocked error) answers FAILED with that error, and inspectionData shows afterInputPath and
    afterItemsPath (the items written `["first", "second", "third"]`) beside maxConcurrency and
    toleratedFailureCount, whatever mapIterationFailureCount says."""
    definition = {
        "StartAt": "State0",
        "States": {"State0": {**MAP, "ItemsPath": "$.Values", "ToleratedFailureCount": 2}},
    }
    response = sfn(account).test_state(
        stateName="State0",
        definition=json.dumps(definition),
        input=json.dumps({"Values": ["first", "second", "third"]}),
        inspectionLevel="DEBUG",
        mock={"errorOutput": {"error": "MockException", "cause": "Mock the error cause."}},
        stateConfiguration={"mapIterationFailureCount": failures, "errorCausedByState": "B"},
    )

    assert (response["status"], response["error"], response["cause"]) == (
        "FAILED",
        "MockException",
        "Mock the error cause.",
    )
    inspection = response["inspectionData"]
    assert json.loads(inspection.pop("afterInputPath")) == {"Values": ["first", "second", "third"]}
    assert json.loads(inspection.pop("input")) == {"Values": ["first", "second", "third"]}
    assert inspection == {
        "afterItemsPath": '["first", "second", "third"]',
        "maxConcurrency": 0,
        "toleratedFailureCount": 2,
    }


def test_state_name_finds_a_state_nested_in_a_map_or_a_parallel(account: Account) -> None:
    """stateName may name a state of a Map's ItemProcessor or a Parallel's branch (AWS's recording:
    test_test_state_machine_scenarios.snapshot.json, test_base_state_name[*-BASE_MAP_STATE_MACHINE])."""
    inner = {"StartAt": "Inner", "States": {"Inner": {"Type": "Pass", "Result": {"inner": True}, "End": True}}}
    definition = {
        "StartAt": "Fan",
        "States": {
            "Fan": {"Type": "Map", "ItemProcessor": inner, "Next": "Both"},
            "Both": {
                "Type": "Parallel",
                "Branches": [
                    {
                        **inner,
                        "StartAt": "Deep",
                        "States": {"Deep": {"Type": "Pass", "Parameters": {"deep.$": "$.v"}, "End": True}},
                    }
                ],
                "End": True,
            },
        },
    }

    nested_in_map = sfn(account).test_state(definition=json.dumps(definition), stateName="Inner", input="{}")
    nested_in_parallel = sfn(account).test_state(definition=json.dumps(definition), stateName="Deep", input='{"v":1}')

    assert json.loads(nested_in_map["output"]) == {"inner": True}
    assert json.loads(nested_in_parallel["output"]) == {"deep": 1}


@pytest.mark.parametrize(
    ("state", "kwargs", "expected"),
    [
        (
            {"Type": "Pass", "End": True},
            {"mock": {"result": "{}"}},
            ("ValidationException", "State type 'Pass' is not supported when a mock is specified"),
        ),
        (
            PUBLISH,
            {"mock": {"result": "{}", "errorOutput": {"error": "E"}}},
            ("ValidationException", "A test mock should have only one of the following fields: [result, errorOutput]."),
        ),
        (
            PUBLISH,
            {"mock": {"result": "{}"}, "revealSecrets": True},
            ("ValidationException", "TestState does not support RevealSecrets when a mock is specified."),
        ),
        (
            PARALLEL,
            {},
            (
                "InvalidDefinition",
                "TestState API does not support Map or Parallel states. "
                "Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]",
            ),
        ),
    ],
)
def test_requests_aws_rejects_are_rejected(
    account: Account, state: dict[str, Any], kwargs: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert error_of(lambda: test_state(account, state, **kwargs)) == expected


def test_input_that_is_not_json_is_invalid_execution_input(account: Account) -> None:
    code, _ = error_of(lambda: test_state(account, {"Type": "Pass", "End": True}, input="{not json"))
    assert code == "InvalidExecutionInput"


def test_broken_definition_is_invalid_definition(account: Account) -> None:
    code, _ = error_of(lambda: test_state(account, {"Type": "Pass", "Next": 5}))
    assert code == "InvalidDefinition"


def test_a_jsonata_tolerated_failure_count_is_reported_as_a_count(account: Account) -> None:
    """AWS's recording (test_test_state_scenarios.snapshot.json,
    test_base_map_state_inspect[TOLERATED_FAILURE_COUNT-DEBUG]): ToleratedFailureCount
    "{% $variable := 1 %}" is inspectionData.toleratedFailureCount 1 (moto's parser made a JSONata
    count a percentage declaration: 0)."""
    state = {
        "Type": "Map",
        "QueryLanguage": "JSONata",
        "Items": "{% $states.input.Values %}",
        "ToleratedFailureCount": "{% $variable := 1 %}",
        "ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}},
        "End": True,
    }

    answer = test_state(account, state, input='{"Values": [1, 2, 3]}', inspectionLevel="DEBUG", mock={"result": "[1]"})

    assert answer["inspectionData"]["toleratedFailureCount"] == 1


def test_a_definition_with_an_unknown_state_type_is_refused_in_aws_words(account: Account) -> None:
    """AWS's recording (test_test_state_machine_scenarios.snapshot.json,
    test_state_name_invalid_state_definition): InvalidDefinition "Invalid State Machine Definition:
    'SCHEMA_VALIDATION_FAILED: The field 'Type' should have one of these values: [Task, Wait, Pass,
    Succeed, Fail, Choice, Parallel, Map] at /States/<state>/Type'" (moto: an ASLParserException text)."""
    definition = {
        "StartAt": "Ok",
        "States": {"Ok": {"Type": "Pass", "Next": "Odd"}, "Odd": {"Type": "NoSuchType", "End": True}},
    }

    code, message = error_of(
        lambda: sfn(account).test_state(definition=json.dumps(definition), stateName="Ok", input="{}")
    )

    assert code == "InvalidDefinition"
    assert message == (
        "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: The field 'Type' should have one of these "
        "values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/Odd/Type'"
    )


def test_a_mocked_result_that_is_not_json_is_refused_in_aws_words(account: Account) -> None:
    """AWS's recording (test_test_state_mock_scenarios.snapshot.json,
    test_base_lambda_service_task_mock_is_not_json_string): ValidationException "Mocked result must
    be valid JSON" (no parser detail)."""
    assert error_of(lambda: test_state(account, PUBLISH, mock={"result": "not json"})) == (
        "ValidationException",
        "Mocked result must be valid JSON",
    )

"""The embedded Step Functions against AWS's documented behaviour, one test per behaviour.

BEHAVIOURS lists each behaviour with the AWS page it follows and the test that checks it; every
test here is named in it (checked below), so the list is the module's table of contents. Where moto
alone behaves otherwise, the patch that fixes it is in onceflow/engine/stepfunctions/strict.py.
"""

from __future__ import annotations

import json
import uuid

import pytest
from botocore.exceptions import ClientError

from onceflow.engine.stepfunctions.mocking import SFN_MOCK_CONFIG
from onceflow.ops.executions import list_executions, wait_for
from tests.engine.behaviours import check_behaviours
from tests.engine.harness import ROLE_ARN, Account, failed_event, single_state

ERRORS = "https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html"
CHOICE = "https://docs.aws.amazon.com/step-functions/latest/dg/state-choice.html"
PATHS = "https://docs.aws.amazon.com/step-functions/latest/dg/input-output-inputpath-params.html"
START = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html"
QUOTAS = "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html"
DESCRIBE = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html"
STOP = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html"
HISTORY = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetExecutionHistory.html"
TRANSACT = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html"
MOCKS = "https://docs.aws.amazon.com/step-functions/latest/dg/sfn-local-mock-cfg-file.html"
CREATE = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html"
ENTERED = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_StateEnteredEventDetails.html"

# behaviour -> (AWS page, test that checks it). Mock-config and fault behaviours are tested in
# their own modules (named with the module).
BEHAVIOURS: dict[str, tuple[str, str]] = {
    "States.ALL and States.TaskFailed in Retry do not match States.Runtime": (
        ERRORS,
        "test_retry_on_catch_alls_does_not_retry_a_runtime_error",
    ),
    "States.ALL in Catch does not catch States.Runtime": (ERRORS, "test_catch_all_does_not_catch_a_runtime_error"),
    "Not even a Catch naming States.Runtime catches it (LocalStack's snapshot, recorded against AWS)": (
        ERRORS,
        "test_catch_naming_states_runtime_does_not_catch_it",
    ),
    "States.ALL does not catch the terminal States.DataLimitExceeded": (
        ERRORS,
        "test_catch_all_does_not_catch_data_limit_exceeded",
    ),
    "A Choice rule on an absent variable raises States.Runtime (not Default)": (
        CHOICE,
        "test_choice_rule_on_an_absent_variable_fails_the_execution",
    ),
    "IsPresent tests absence; And stops at the first false rule, Or at the first true one": (
        CHOICE,
        "test_is_present_guards_the_rules_after_it",
    ),
    "Not of a rule on an absent variable raises States.Runtime": (CHOICE, "test_not_does_not_hide_an_absent_variable"),
    "A Choice with no rule true and no Default fails with States.NoChoiceMatched": (
        ERRORS,
        "test_choice_without_a_match_or_default_fails_with_no_choice_matched",
    ),
    "A path in InputPath, Parameters or ResultSelector that selects nothing raises States.Runtime": (
        PATHS,
        "test_path_that_selects_nothing_fails_the_execution",
    ),
    "StartExecution refuses input that is not JSON with InvalidExecutionInput": (
        START,
        "test_start_execution_refuses_input_that_is_not_json",
    ),
    "StartExecution refuses input over 256 KiB": (START, "test_start_execution_refuses_input_over_256_kib"),
    "StartExecution refuses a name with a forbidden character (InvalidName) or over 80 characters": (
        START,
        "test_start_execution_refuses_names_aws_refuses",
    ),
    "A state's output, or a task's input after Parameters, over 256 KiB fails with States.DataLimitExceeded": (
        QUOTAS,
        "test_payload_over_256_kib_fails_with_data_limit_exceeded",
    ),
    "A task result over 256 KiB fails with States.DataLimitExceeded, even with ResultPath null": (
        QUOTAS,
        "test_task_result_over_256_kib_fails_uncaught",
    ),
    "A payload of exactly 256 KiB fits": (QUOTAS, "test_payload_of_exactly_256_kib_fits"),
    "DescribeExecution.output is the compact JSON text of the result (a string comes back quoted)": (
        DESCRIBE,
        "test_describe_execution_output_is_compact_json_text",
    ),
    "History: aws-sdk tasks record resource (the API action) and resourceType, compact JSON parameters": (
        HISTORY,
        "test_history_of_an_aws_sdk_task_names_the_action_and_service",
    ),
    "StopExecution keeps its error and cause": (STOP, "test_stop_execution_keeps_error_and_cause"),
    "A Distributed Map's MapStateExited links to its MapRunStarted": (
        HISTORY,
        "test_a_distributed_maps_exit_links_to_its_map_run_started",
    ),
    "A state's StateEntered input is compact JSON, the caller's input text only in ExecutionStarted": (
        ENTERED,
        "test_states_carry_compact_json_and_execution_started_the_callers_text",
    ),
    "CreateStateMachine refuses a definition that does not parse with InvalidDefinition": (
        CREATE,
        "test_create_state_machine_refuses_an_invalid_definition_with_its_code",
    ),
    "StartExecution without a name names the execution with a UUID; $$.Execution.Name is that name": (
        START,
        "test_start_execution_without_a_name_names_it_with_a_uuid",
    ),
    "sqs:sendMessage with an empty MessageBody fails with SQS.AmazonSQSException, which a Catch handles": (
        ERRORS,
        "test_sqs_send_message_with_an_empty_body_is_a_catchable_sqs_error",
    ),
    "TransactWriteItems cancellations carry their reasons per item (fault injector)": (
        TRANSACT,
        "tests/engine/test_faults.py",
    ),
    "A mocked state out of mocked responses fails the execution; no Retry or Catch handles it": (
        MOCKS,
        "tests/mockconfig/test_engine.py::test_running_out_of_mocked_responses_fails_the_execution_unhandled",
    ),
    "Only the selected test case is validated at start; other test cases' problems are warnings": (
        MOCKS,
        "tests/mockconfig/test_engine.py::test_problems_in_other_test_cases_are_warnings_not_refusals",
    ),
}

KIB = 1024
LIMIT = 256 * KIB
QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/conformance"
# A second copy of `$.half` in a task's Parameters: the input fits, the input after Parameters does not.
_COPY = {"copy": {"DataType": "String", "StringValue.$": "$.half"}}


def _failing_task(**handlers: object) -> dict:
    """A Task whose Parameters path selects nothing: States.Runtime before any service is called."""
    return {
        "StartAt": "Send",
        "States": {
            "Send": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage",
                "Parameters": {"QueueUrl": QUEUE_URL, "MessageBody.$": "$.no_such_field"},
                **handlers,
                "End": True,
            },
            "Handled": {"Type": "Succeed"},
        },
    }


def test_every_behaviour_names_an_aws_page_and_a_test():
    check_behaviours(BEHAVIOURS, globals())


@pytest.mark.parametrize("matcher", ["States.ALL", "States.TaskFailed", "States.Runtime"])
def test_retry_on_catch_alls_does_not_retry_a_runtime_error(account: Account, matcher: str):
    """AWS: "A States.Runtime error isn't retriable, and will always cause the execution to fail.
    A retry or catch on States.ALL won't catch States.Runtime errors." """
    result = account.run(_failing_task(Retry=[{"ErrorEquals": [matcher], "MaxAttempts": 3}]), {"x": 1})

    assert result.status == "FAILED"
    assert failed_event(result)["error"] == "States.Runtime"
    assert account.aws.clock.retry_delays == [], "no retry was scheduled"


def test_catch_all_does_not_catch_a_runtime_error(account: Account):
    result = account.run(_failing_task(Catch=[{"ErrorEquals": ["States.ALL"], "Next": "Handled"}]), {"x": 1})

    assert result.status == "FAILED"
    assert "Handled" not in result.path
    assert failed_event(result)["error"] == "States.Runtime"


def test_catch_naming_states_runtime_does_not_catch_it(account: Account):
    """LocalStack's `test_catch_states_runtime` snapshot, recorded against AWS: an OutputPath that
    selects nothing under `Catch: [States.Runtime]` ends in ExecutionFailed, right after the task
    succeeded."""
    definition = {
        "StartAt": "RaiseRuntime",
        "States": {
            "RaiseRuntime": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:sqs:listQueues",
                "Parameters": {},
                "OutputPath": "$.no.such.result.path",
                "Catch": [{"ErrorEquals": ["States.Runtime"], "Next": "CaughtRuntime"}],
                "Next": "Final",
            },
            "CaughtRuntime": {"Type": "Pass", "End": True},
            "Final": {"Type": "Pass", "End": True},
        },
    }

    result = account.run(definition, {})

    assert result.status == "FAILED"
    assert [e["type"] for e in result.history][-2:] == ["TaskSucceeded", "ExecutionFailed"]
    details = failed_event(result)
    assert details["error"] == "States.Runtime"
    assert "Invalid path '$.no.such.result.path'" in details["cause"]


def test_catch_all_does_not_catch_data_limit_exceeded(account: Account):
    """AWS: States.DataLimitExceeded is "a terminal error that can't be caught by the States.ALL error
    type" (here: a task's input after Parameters over the quota)."""
    definition = {
        "StartAt": "Send",
        "States": {
            "Send": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage",
                "Parameters": {"QueueUrl": QUEUE_URL, "MessageBody.$": "$.half", "MessageAttributes": _COPY},
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Handled"}],
                "End": True,
            },
            "Handled": {"Type": "Succeed"},
        },
    }
    result = account.run(definition, {"half": "x" * (130 * KIB)})

    assert result.status == "FAILED"
    assert "Handled" not in result.path
    assert failed_event(result)["error"] == "States.DataLimitExceeded"


def _choice(rule: dict) -> dict:
    return {
        "StartAt": "Decide",
        "States": {
            "Decide": {"Type": "Choice", "Choices": [{**rule, "Next": "Matched"}], "Default": "Otherwise"},
            "Matched": {"Type": "Succeed"},
            "Otherwise": {"Type": "Succeed"},
        },
    }


@pytest.mark.parametrize(
    "rule",
    [
        {"Variable": "$.status", "StringEquals": "sent"},
        {"Variable": "$.record.Item.status.S", "StringEquals": "sent"},
        {"Variable": "$.count", "NumericGreaterThan": 1},
        {"Variable": "$.flag", "BooleanEquals": True},
        {"Variable": "$.flag", "IsNull": True},
    ],
)
def test_choice_rule_on_an_absent_variable_fails_the_execution(account: Account, rule: dict):
    result = account.run(_choice(rule), {"other": 1})

    assert result.status == "FAILED"
    assert "Otherwise" not in result.path, "moto alone takes Default"
    details = failed_event(result)
    assert details["error"] == "States.Runtime"
    assert f"Invalid path '{rule['Variable']}'" in details["cause"]


@pytest.mark.parametrize(
    ("rule", "execution_input", "branch"),
    [
        ({"Variable": "$.status", "IsPresent": False}, {}, "Matched"),
        ({"Variable": "$.status", "IsPresent": True}, {}, "Otherwise"),
        (
            {"And": [{"Variable": "$.status", "IsPresent": True}, {"Variable": "$.status", "StringEquals": "sent"}]},
            {},
            "Otherwise",
        ),
        (
            {"And": [{"Variable": "$.status", "IsPresent": True}, {"Variable": "$.status", "StringEquals": "sent"}]},
            {"status": "sent"},
            "Matched",
        ),
        (
            {"Or": [{"Variable": "$.status", "IsPresent": False}, {"Variable": "$.status", "StringEquals": "sent"}]},
            {},
            "Matched",
        ),
    ],
)
def test_is_present_guards_the_rules_after_it(account: Account, rule: dict, execution_input: dict, branch: str):
    """AWS's own example: "the StringEquals rule is only evaluated when $.keyThatMightNotExist exists
    because of the preceding IsPresent Choice Rule"."""
    result = account.run(_choice(rule), execution_input)

    assert result.status == "SUCCEEDED"
    assert result.path[-1] == branch


def test_not_does_not_hide_an_absent_variable(account: Account):
    result = account.run(_choice({"Not": {"Variable": "$.status", "StringEquals": "sent"}}), {})

    assert result.status == "FAILED"
    assert failed_event(result)["error"] == "States.Runtime"


def test_choice_without_a_match_or_default_fails_with_no_choice_matched(account: Account):
    """AWS: "States.NoChoiceMatched: A Choice state failed to find a match for the condition field
    extracted from its input"."""
    definition = {
        "StartAt": "Decide",
        "States": {
            "Decide": {"Type": "Choice", "Choices": [{"Variable": "$.status", "StringEquals": "sent", "Next": "Done"}]},
            "Done": {"Type": "Succeed"},
        },
    }

    result = account.run(definition, {"status": "other"})

    assert result.status == "FAILED"
    assert failed_event(result)["error"] == "States.NoChoiceMatched"


@pytest.mark.parametrize(
    "state",
    [
        {"Type": "Pass", "InputPath": "$.missing"},
        {"Type": "Pass", "Parameters": {"value.$": "$.missing"}},
        {
            "Type": "Task",
            "Resource": "arn:aws:states:::aws-sdk:sqs:listQueues",
            "ResultSelector": {"urls.$": "$.NoSuchField"},
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Handled"}],
        },
    ],
)
def test_path_that_selects_nothing_fails_the_execution(account: Account, state: dict):
    definition = {"StartAt": "Only", "States": {"Only": {**state, "End": True}, "Handled": {"Type": "Succeed"}}}

    result = account.run(definition, {"present": 1})

    assert result.status == "FAILED"
    assert "Handled" not in result.path
    assert failed_event(result)["error"] == "States.Runtime"


@pytest.mark.parametrize(
    "text", ["NaN", "Infinity", "-Infinity", '{"amount": NaN}', '{"a": 1} trailing', "not json", ""]
)
def test_start_execution_refuses_input_that_is_not_json(account: Account, text: str):
    arn = account.state_machine(single_state({"Type": "Pass"}))

    with pytest.raises(ClientError) as raised:
        account.start(arn, raw_input=text)

    assert raised.value.response["Error"]["Code"] == "InvalidExecutionInput"
    assert raised.value.response["Error"]["Message"].startswith("Invalid State Machine Execution Input: '")
    assert list_executions(account.sfn, arn) == []


def test_start_execution_refuses_input_over_256_kib(account: Account):
    arn = account.state_machine(single_state({"Type": "Pass"}))
    wrapper = len(json.dumps({"p": ""}, separators=(",", ":")))

    with pytest.raises(ClientError) as raised:
        account.start(arn, {"p": "x" * (LIMIT - wrapper + 1)})

    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert list_executions(account.sfn, arn) == []


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("a" * 81, "ValidationException"),
        ("order 1", "InvalidName"),
        ("order\t1", "InvalidName"),
        ("order[1]", "InvalidName"),
        ("order:1", "InvalidName"),
        ("order/1", "InvalidName"),
        ("order#1", "InvalidName"),
        ("order\u00851", "InvalidName"),
    ],
)
def test_start_execution_refuses_names_aws_refuses(account: Account, name: str, code: str):
    arn = account.state_machine(single_state({"Type": "Pass"}))

    with pytest.raises(ClientError) as raised:
        account.sfn.start_execution(stateMachineArn=arn, name=name, input="{}")

    assert raised.value.response["Error"]["Code"] == code
    assert list_executions(account.sfn, arn) == []
    account.sfn.start_execution(stateMachineArn=arn, name="order-1_" + "a" * 72, input="{}")  # 80: fine


@pytest.mark.parametrize(
    "state",
    [
        {"Type": "Pass", "Parameters": {"a.$": "$.half", "b.$": "$.half"}},
        {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage",
            "Parameters": {"QueueUrl": QUEUE_URL, "MessageBody.$": "$.half", "MessageAttributes": _COPY},
        },
    ],
)
def test_payload_over_256_kib_fails_with_data_limit_exceeded(account: Account, state: dict):
    result = account.run(single_state(state), {"half": "x" * (130 * KIB)})

    assert result.status == "FAILED"
    assert failed_event(result)["error"] == "States.DataLimitExceeded"


def test_task_result_over_256_kib_fails_uncaught(account: Account, tmp_path, monkeypatch):
    """ "The output of a task (connector)" is bound too, whatever ResultPath keeps of it; the result
    comes from a mocked Lambda (Step Functions Local's mock configuration)."""
    config = {
        "StateMachines": {"BigResult": {"TestCases": {"Big": {"Call": "Big"}}}},
        "MockedResponses": {"Big": {"0": {"Return": {"p": "x" * (LIMIT + 1)}}}},
    }
    (tmp_path / "MockConfigFile.json").write_text(json.dumps(config))
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(tmp_path / "MockConfigFile.json"))
    definition = {
        "StartAt": "Call",
        "States": {
            "Call": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": "big"},
                "ResultPath": None,
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Handled"}],
                "End": True,
            },
            "Handled": {"Type": "Succeed"},
        },
    }
    arn = account.sfn.create_state_machine(name="BigResult", definition=json.dumps(definition), roleArn=ROLE_ARN)[
        "stateMachineArn"
    ]

    result = wait_for(account.sfn, account.start(f"{arn}#Big", {}))

    assert result.status == "FAILED"
    assert "Handled" not in result.path
    assert failed_event(result)["error"] == "States.DataLimitExceeded"


def test_payload_of_exactly_256_kib_fits(account: Account):
    """The quota is "256 KiB of data as a UTF-8 encoded string": a payload of exactly that size fits."""
    wrapper = len(json.dumps({"p": ""}, separators=(",", ":")))
    execution_input = {"p": "x" * (LIMIT - wrapper)}
    assert len(json.dumps(execution_input, separators=(",", ":")).encode()) == LIMIT

    result = account.run(single_state({"Type": "Pass"}), execution_input)

    assert result.status == "SUCCEEDED"


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ("hello", '"hello"'),
        ({"a": [1, 2], "b": "c"}, '{"a":[1,2],"b":"c"}'),
        (42, "42"),
        (None, "null"),
    ],
)
def test_describe_execution_output_is_compact_json_text(account: Account, result: object, text: str):
    execution = account.run(single_state({"Type": "Pass", "Result": result}), {})

    described = account.describe(execution.arn)

    assert described["output"] == text
    [succeeded] = [e for e in execution.history if e["type"] == "ExecutionSucceeded"]
    assert succeeded["executionSucceededEventDetails"]["output"] == text


@pytest.mark.parametrize(
    ("resource_arn", "parameters", "resource", "resource_type"),
    [
        ("arn:aws:states:::aws-sdk:sqs:getQueueUrl", {"QueueName": "conformance"}, "getQueueUrl", "aws-sdk:sqs"),
        ("arn:aws:states:::sqs:sendMessage", {"QueueUrl": "<queue>", "MessageBody": "hello"}, "sendMessage", "sqs"),
    ],
)
def test_history_of_an_aws_sdk_task_names_the_action_and_service(
    account: Account, resource_arn: str, parameters: dict, resource: str, resource_type: str
):
    """As AWS records it (LocalStack's snapshot tests, recorded against AWS): resource is the API
    action, resourceType the service (`aws-sdk:<service>` for SDK integrations); parameters and
    output are compact JSON text."""
    queue_url = account.client("sqs").create_queue(QueueName="conformance")["QueueUrl"]
    parameters = {k: (queue_url if v == "<queue>" else v) for k, v in parameters.items()}
    definition = single_state({"Type": "Task", "Resource": resource_arn, "Parameters": parameters})

    result = account.run(definition, {})

    assert result.status == "SUCCEEDED"
    [scheduled] = [e["taskScheduledEventDetails"] for e in result.history if e["type"] == "TaskScheduled"]
    assert (scheduled["resource"], scheduled["resourceType"]) == (resource, resource_type)
    assert scheduled["parameters"] == json.dumps(parameters, separators=(",", ":"))
    [succeeded] = [e["taskSucceededEventDetails"] for e in result.history if e["type"] == "TaskSucceeded"]
    assert (succeeded["resource"], succeeded["resourceType"]) == (resource, resource_type)
    assert succeeded["output"] == json.dumps(json.loads(succeeded["output"]), separators=(",", ":"))


def test_states_carry_compact_json_and_execution_started_the_callers_text(account: Account):
    """AWS's newest recordings (LocalStack's scenarios/test_base_scenarios.snapshot.json,
    test_map_state_label, 2024-07-20, and test_map_state_result_writer, 2024-08-19, both started
    with `json.dumps(["Hello", "World"])`): ExecutionStarted's input is the caller's text
    '["Hello", "World"]', and the first state's StateEntered input is compact '["Hello","World"]'.
    The recordings from February and March 2024 show the caller's text in the first state too; AWS
    has changed that since, and the engine follows the newer (docs/TESTING.md)."""
    definition = {
        "StartAt": "First",
        "States": {"First": {"Type": "Pass", "Next": "Second"}, "Second": {"Type": "Pass", "End": True}},
    }
    arn = account.start(account.state_machine(definition), raw_input='["Hello",  "World"]')

    result = wait_for(account.sfn, arn, timeout=30)

    (started,) = [e["executionStartedEventDetails"]["input"] for e in result.history if e["type"] == "ExecutionStarted"]
    entered = [e["stateEnteredEventDetails"]["input"] for e in result.history if e["type"] == "PassStateEntered"]
    assert started == '["Hello",  "World"]'
    assert entered == ['["Hello","World"]', '["Hello","World"]']


def test_a_distributed_maps_exit_links_to_its_map_run_started(account: Account):
    """AWS's recordings since November 2024 (LocalStack's scenarios/test_base_scenarios.snapshot.json,
    test_map_state_config_distributed_item_selector_parameters, 2024-11-15, and four more to
    2025-10): MapRunStarted, MapRunSucceeded, MapStateSucceeded, then MapStateExited with the
    MapRunStarted's id as its previousEventId (the recordings before link it to MapRunSucceeded,
    as moto did). An inline Map is not affected: its MapStateExited follows MapStateSucceeded."""
    processor = {"StartAt": "Each", "States": {"Each": {"Type": "Pass", "End": True}}}
    definition = {
        "StartAt": "Distributed",
        "States": {
            "Distributed": {
                "Type": "Map",
                "ItemProcessor": {**processor, "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}},
                "Next": "Inline",
            },
            "Inline": {"Type": "Map", "ItemProcessor": processor, "End": True},
        },
    }
    arn = account.start(account.state_machine(definition), [1, 2])

    result = wait_for(account.sfn, arn, timeout=30)

    by_id = {e["id"]: e for e in result.history}
    exits = [e for e in result.history if e["type"] == "MapStateExited"]
    assert [by_id[e["previousEventId"]]["type"] for e in exits] == ["MapRunStarted", "MapIterationSucceeded"]
    run = [e["type"] for e in result.history if e["type"].startswith(("MapRun", "MapStateSucceeded"))]
    assert run[:3] == ["MapRunStarted", "MapRunSucceeded", "MapStateSucceeded"]


def test_stop_execution_keeps_error_and_cause(account: Account):
    # The Wait really waits here (scaled 1:1) until StopExecution interrupts it.
    account.aws.clock.time_scale = 1.0
    try:
        arn = account.start(account.state_machine(single_state({"Type": "Wait", "Seconds": 30})), {})
        account.sfn.stop_execution(executionArn=arn, error="Operator.Stopped", cause="stopped for the test")
        result = wait_for(account.sfn, arn, timeout=10)
    finally:
        account.aws.clock.time_scale = 0.0

    assert result.status == "ABORTED"
    described = account.describe(arn)
    assert (described.get("error"), described.get("cause")) == ("Operator.Stopped", "stopped for the test")
    [aborted] = [e for e in result.history if e["type"] == "ExecutionAborted"]
    assert aborted["executionAbortedEventDetails"] == {"error": "Operator.Stopped", "cause": "stopped for the test"}


@pytest.mark.parametrize(
    "definition",
    ['{"StartAt": "Nowhere", "States": {}}', '{"StartAt": "A", "States": {"A": {"Type": "NoSuchType", "End": true}}}'],
)
def test_create_state_machine_refuses_an_invalid_definition_with_its_code(account: Account, definition: str):
    with pytest.raises(ClientError) as refused:
        account.sfn.create_state_machine(name="invalid", definition=definition, roleArn=ROLE_ARN)
    assert refused.value.response["Error"]["Code"] == "InvalidDefinition"  # moto alone: an empty code
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_start_execution_without_a_name_names_it_with_a_uuid(account: Account):
    """StartExecution's `name`: "If you don't provide a name for the execution, Step Functions
    automatically generates a UUID" (moto alone names every unnamed execution `None`, so the second
    start fails with ExecutionAlreadyExists, and `$$.Execution.Name` is null)."""
    arn = account.state_machine(single_state({"Type": "Pass", "Parameters": {"name.$": "$$.Execution.Name"}}))

    started = [account.sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"] for _ in range(2)]

    names = []
    for execution_arn in started:
        result = wait_for(account.sfn, execution_arn, timeout=30)
        described = account.describe(execution_arn)
        assert result.status == "SUCCEEDED"
        assert execution_arn.endswith(f":{described['name']}")
        assert json.loads(described["output"]) == {"name": described["name"]}
        names.append(str(uuid.UUID(described["name"])))
    assert len(set(names)) == 2


@pytest.mark.parametrize("parameters", [{"MessageBody": ""}, {}])
def test_sqs_send_message_with_an_empty_body_is_a_catchable_sqs_error(account: Account, parameters: dict):
    """AWS's recording (LocalStack's error_handling/test_task_service_sqs.snapshot.json,
    test_send_message_empty_body): error SQS.AmazonSQSException, cause "The request must contain the
    parameter MessageBody. (Service: AmazonSQS; ... Error Code: MissingParameter; ...)", caught by the
    state's Catch. Without the fix moto's SQS raised a Python TypeError, an uncatchable States.Runtime."""
    queue_url = account.client("sqs").create_queue(QueueName="conformance-empty")["QueueUrl"]
    definition = {
        "StartAt": "Send",
        "States": {
            "Send": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage",
                "Parameters": {"QueueUrl": queue_url, **parameters},
                "Catch": [{"ErrorEquals": ["SQS.AmazonSQSException"], "Next": "Handled"}],
                "End": True,
            },
            "Handled": {"Type": "Succeed"},
        },
    }

    result = account.run(definition, {})

    assert result.status == "SUCCEEDED", "the Catch handled it"
    [failed] = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert failed["error"] == "SQS.AmazonSQSException"
    assert failed["cause"].startswith("The request must contain the parameter MessageBody. (Service: AmazonSQS;")
    assert "Error Code: MissingParameter" in failed["cause"]

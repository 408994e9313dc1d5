"""Public Step Functions Local mock suites, run unchanged on the embedded engine.

- The AWS documentation's `LambdaSQSIntegration` example (HappyPath, RetryPath, HybridPath):
  https://docs.aws.amazon.com/step-functions/latest/dg/sfn-local-test-sm-exec.html
- aws-samples/serverless-test-samples, python-test-samples/step-functions-local-mock: its ASL, its
  MockConfigFile.json and what its own tests assert (tests/unit/src/test_step_functions_local.py).
- The LocalStack docs' JSONata mock example (LambdaRetryCase), written out here in its shape:
  https://docs.localstack.cloud/aws/services/stepfunctions/ ("Mocked Service Integrations").

Both live under tests/engine/samples/ with their source and licence. Their Lambda and SQS tasks
are mocked, so no Lambda runtime is needed; HybridPath's SQS state runs against the embedded SQS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from onceflow.engine.stepfunctions.mocking import SFN_MOCK_CONFIG
from onceflow.ops.executions import ExecutionResult, wait_for
from tests.engine.harness import ROLE_ARN, Account

SAMPLES = Path(__file__).parent / "samples"
DOCS = SAMPLES / "aws-docs-lambda-sqs"
AWS_SAMPLES = SAMPLES / "aws-samples-step-functions-local-mock"
NAME = "LambdaSQSIntegration"  # the StateMachines key of both files
LAMBDA_RESULT = {"StatusCode": 200, "Payload": {"StatusCode": 200, "body": "Hello from Lambda!"}}


def _run(
    account: Account, definition: dict[str, Any], config: Path, test_case: str, monkeypatch: Any
) -> ExecutionResult:
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(config))
    sfn = account.sfn
    arn = sfn.create_state_machine(name=NAME, definition=json.dumps(definition), roleArn=ROLE_ARN)["stateMachineArn"]
    execution = sfn.start_execution(
        stateMachineArn=f"{arn}#{test_case}", name=f"{test_case}-execution", input='{"data": "test input"}'
    )
    return wait_for(sfn, execution["executionArn"], timeout=30)


def _definition(directory: Path, file: str) -> dict[str, Any]:
    return json.loads((directory / file).read_text())


def _events(result: ExecutionResult, event_type: str) -> list[dict[str, Any]]:
    return [e for e in result.history if e["type"] == event_type]


def _exited(result: ExecutionResult, state: str) -> bool:
    return any(e["stateExitedEventDetails"]["name"] == state for e in _events(result, "TaskStateExited"))


def _output(event: dict[str, Any]) -> Any:
    return json.loads(event["taskSucceededEventDetails"]["output"])


# -- the AWS documentation's example -----------------------------------------------------------------


def test_docs_happy_path(account, monkeypatch):
    result = _run(
        account,
        _definition(DOCS, "LambdaSQSIntegration.asl.json"),
        DOCS / "MockConfigFile.json",
        "HappyPath",
        monkeypatch,
    )

    assert result.status == "SUCCEEDED"
    lambda_done, sqs_done = _events(result, "TaskSucceeded")
    assert _output(lambda_done) == LAMBDA_RESULT
    assert _output(sqs_done)["MessageId"] == "3bcb6e8e-8b51-4375-b0bc-1a59812c6e51"
    assert json.loads(account.describe(result.arn)["output"]) == _output(sqs_done)


def test_docs_retry_path_retries_the_lambda_three_times(account, monkeypatch):
    result = _run(
        account,
        _definition(DOCS, "LambdaSQSIntegration.asl.json"),
        DOCS / "MockConfigFile.json",
        "RetryPath",
        monkeypatch,
    )

    assert result.status == "SUCCEEDED"
    assert [e["taskFailedEventDetails"] for e in _events(result, "TaskFailed")] == [
        {"error": "Lambda.ResourceNotReadyException", "cause": "Lambda resource is not ready."},
        {"error": "Lambda.TimeoutException", "cause": "Lambda timed out."},
        {"error": "Lambda.TimeoutException", "cause": "Lambda timed out."},
    ]
    assert result.attempts("LambdaState") == 4, 'MaxAttempts 3: the 4th invocation ("3") succeeds'
    assert account.aws.clock.retry_delays == [2, 4, 8], "IntervalSeconds 2, BackoffRate 2"
    assert _output(_events(result, "TaskSucceeded")[0]) == LAMBDA_RESULT


def test_docs_hybrid_path_sends_the_lambda_result_to_a_real_queue(account, monkeypatch):
    sqs = account.client("sqs")
    queue_url = sqs.create_queue(QueueName="myQueue")["QueueUrl"]
    definition = _definition(DOCS, "LambdaSQSIntegration.asl.json")
    definition["States"]["SQSState"]["Parameters"]["QueueUrl"] = queue_url

    result = _run(account, definition, DOCS / "MockConfigFile.json", "HybridPath", monkeypatch)

    assert result.status == "SUCCEEDED"
    assert _output(_events(result, "TaskSucceeded")[0]) == LAMBDA_RESULT
    [message] = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    assert json.loads(message["Body"]) == LAMBDA_RESULT


# -- aws-samples/serverless-test-samples: its own assertions --------------------------------------------


@pytest.fixture
def run_sample(account, monkeypatch):
    definition = _definition(AWS_SAMPLES, "local_testing.asl.json")
    return lambda test_case: _run(account, definition, AWS_SAMPLES / "MockConfigFile.json", test_case, monkeypatch)


def test_sample_happy_path(run_sample):
    """test_happy_path: both states exited, and both tasks succeeded."""
    result = run_sample("HappyPath")

    assert result.status == "SUCCEEDED"
    assert _exited(result, "LambdaState") and _exited(result, "SQSState")
    assert len(_events(result, "TaskSucceeded")) == 2


def test_sample_retry_path(run_sample):
    """test_retry_path: three Lambda failures (1 ResourceNotReady, 2 Timeout) before it succeeds."""
    result = run_sample("RetryPath")

    assert _exited(result, "LambdaState") and _exited(result, "SQSState")
    errors = [e["taskFailedEventDetails"]["error"] for e in _events(result, "TaskFailed")]
    assert len(errors) == 3
    assert errors.count("Lambda.ResourceNotReadyException") == 1
    assert errors.count("Lambda.TimeoutException") == 2


def test_sample_hybrid_path(run_sample):
    """test_hybrid_path: the execution succeeded and both states exited."""
    result = run_sample("HybridPath")

    assert _events(result, "ExecutionSucceeded"), "Execution did not complete successfully"
    assert _exited(result, "LambdaState") and _exited(result, "SQSState")


# -- the LocalStack docs' JSONata example: an Assign after a Retry -------------------------------------

GREETING = "Hello John Smith, you're now testing mocked integrations!"
JSONATA_RETRY = {
    "QueryLanguage": "JSONata",
    "StartAt": "LambdaState",
    "States": {
        "LambdaState": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Arguments": {
                "FunctionName": "GreetingsFunction",
                "Payload": {"fullname": "{% $states.input.name & ' ' & $states.input.surname %}"},
            },
            "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 2, "MaxAttempts": 4, "BackoffRate": 2}],
            "Assign": {"greeting": "{% $states.result.Payload.greeting %}"},
            "Next": "Greet",
        },
        "Greet": {"Type": "Pass", "Output": "{% $greeting %}", "End": True},
    },
}


@pytest.mark.parametrize("test_case", ["BaseCase", "LambdaRetryCase"])
def test_jsonata_assign_reads_the_result_of_the_attempt_that_succeeded(account, monkeypatch, tmp_path, test_case):
    """The docs' LambdaRetryCase: errors on invocations 0, 1-2, the mocked Return on 3; the Assign then
    reads `$states.result.Payload.greeting` as on a first attempt (BaseCase). Before: the Assign found
    nothing (States.QueryEvaluationError), the States.ALL Retry ran a fifth invocation the mock does
    not answer, and the execution failed States.Runtime."""
    returned = {"Return": {"StatusCode": 200, "Payload": {"greeting": GREETING}}}
    config = tmp_path / "MockConfigFile.json"
    config.write_text(
        json.dumps(
            {
                "StateMachines": {
                    NAME: {
                        "TestCases": {
                            "BaseCase": {"LambdaState": "Success"},
                            "LambdaRetryCase": {"LambdaState": "Retry"},
                        }
                    }
                },
                "MockedResponses": {
                    "Success": {"0": returned},
                    "Retry": {
                        "0": {"Throw": {"Error": "Lambda.ServiceException", "Cause": "An internal service error."}},
                        "1-2": {"Throw": {"Error": "Lambda.TooManyRequestsException", "Cause": "Rate exceeded."}},
                        "3": returned,
                    },
                },
            }
        )
    )
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(config))
    sfn = account.sfn
    arn = sfn.create_state_machine(name=NAME, definition=json.dumps(JSONATA_RETRY), roleArn=ROLE_ARN)["stateMachineArn"]
    started = sfn.start_execution(stateMachineArn=f"{arn}#{test_case}", input='{"name": "John", "surname": "Smith"}')

    result = wait_for(sfn, started["executionArn"], timeout=30)

    assert result.status == "SUCCEEDED", result.history
    assert json.loads(account.describe(result.arn)["output"]) == GREETING
    assert result.attempts("LambdaState") == (4 if test_case == "LambdaRetryCase" else 1)

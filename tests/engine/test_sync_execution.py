"""StartSyncExecution on the embedded endpoint, called with plain boto3, answers as AWS does.

API: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartSyncExecution.html
(response members as botocore's service model has them; errors InvalidName, InvalidExecutionInput,
StateMachineDoesNotExist, StateMachineTypeNotSupported). Express execution ARNs and the absence of
name deduplication: "Choosing workflow type" in the developer guide.
"""

from __future__ import annotations

import datetime
import json
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from onceflow.engine import ACCOUNT_ID, REGION
from tests.engine.harness import Account

PASS_THROUGH = {
    "StartAt": "Add",
    "States": {"Add": {"Type": "Pass", "Result": 7, "ResultPath": "$.added", "End": True}},
}
FAILS = {
    "StartAt": "Stop",
    "States": {"Stop": {"Type": "Fail", "Error": "Onceflow.DeadLettered", "Cause": "sent away"}},
}


def sfn(account: Account, inject_host_prefix: bool = False) -> Any:
    """StartSyncExecution goes to a `sync-` host prefix on AWS; a local endpoint has no such host."""
    return boto3.client(
        "stepfunctions",
        endpoint_url=account.aws.endpoint_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(inject_host_prefix=inject_host_prefix, retries={"total_max_attempts": 1}),
    )


def error_code(raised: pytest.ExceptionInfo[ClientError]) -> str:
    return raised.value.response["Error"]["Code"]


def test_a_succeeded_execution_returns_its_output_and_billing(account):
    machine = account.state_machine(PASS_THROUGH, kind="EXPRESS")
    before = datetime.datetime.now(tz=datetime.UTC)

    result = sfn(account).start_sync_execution(stateMachineArn=machine, name="run-1", input='{"n": 1}')

    assert result["status"] == "SUCCEEDED"
    assert json.loads(result["output"]) == {"n": 1, "added": 7}
    assert json.loads(result["input"]) == {"n": 1}
    assert result["name"] == "run-1" and result["stateMachineArn"] == machine
    name = machine.rsplit(":", 1)[1]
    assert re.fullmatch(
        rf"arn:aws:states:{REGION}:{ACCOUNT_ID}:express:{name}:run-1:[0-9a-f-]{{36}}", result["executionArn"]
    )
    assert before - datetime.timedelta(seconds=1) <= result["startDate"] <= result["stopDate"]
    billing = result["billingDetails"]
    assert billing["billedDurationInMilliseconds"] >= 100 and billing["billedDurationInMilliseconds"] % 100 == 0
    assert billing["billedMemoryUsedInMB"] == 64
    assert "error" not in result and "cause" not in result


def test_a_failed_execution_returns_error_and_cause_and_no_output(account):
    """AWS's recording (LocalStack's express/test_express_sync.snapshot.json, test_base
    [BASE_RAISE_FAILURE]): error, cause, no output, but outputDetails {included: true} still."""
    machine = account.state_machine(FAILS, kind="EXPRESS")

    result = sfn(account).start_sync_execution(stateMachineArn=machine, input="{}")

    assert (result["status"], result["error"], result["cause"]) == ("FAILED", "Onceflow.DeadLettered", "sent away")
    assert "output" not in result and result["outputDetails"] == {"included": True}
    assert re.fullmatch(r"[0-9a-f-]{36}", result["name"])  # no name given: Step Functions makes one


def test_the_call_returns_only_when_the_execution_ended_with_its_service_calls(account):
    """A Task that writes to DynamoDB: the item exists when the response arrives."""
    dynamodb = account.client("dynamodb")
    dynamodb.create_table(
        TableName="sync-items",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    definition = {
        "StartAt": "Write",
        "States": {
            "Write": {
                "Type": "Task",
                "Resource": "arn:aws:states:::dynamodb:putItem",
                "Parameters": {"TableName": "sync-items", "Item": {"id": {"S.$": "$.id"}}},
                "ResultPath": None,
                "End": True,
            }
        },
    }
    machine = account.state_machine(definition, kind="EXPRESS")
    client = sfn(account)

    with ThreadPoolExecutor(max_workers=4) as pool:  # concurrent calls, each waiting for its own end
        results = list(
            pool.map(
                lambda n: client.start_sync_execution(stateMachineArn=machine, input=json.dumps({"id": f"i-{n}"})),
                range(8),
            )
        )

    assert [r["status"] for r in results] == ["SUCCEEDED"] * 8
    items = dynamodb.scan(TableName="sync-items")["Items"]
    assert sorted(item["id"]["S"] for item in items) == sorted(f"i-{n}" for n in range(8))


def test_the_input_is_the_callers_own_text(account):
    """StartSyncExecution's `input` is "the string that contains the JSON input data of the execution"
    (API_StartSyncExecution.html), as DescribeExecution's is: the caller's text, spaces kept, while
    the states work on the value (their history texts are compact; AWS's recordings from July 2024
    on, docs/TESTING.md). The engine answered compact JSON."""
    machine = account.state_machine(PASS_THROUGH, kind="EXPRESS")

    result = sfn(account).start_sync_execution(stateMachineArn=machine, input='{"n":  1,\n "m": [1, 2]}')

    assert result["input"] == '{"n":  1,\n "m": [1, 2]}'
    assert result["output"] == '{"n":1,"m":[1,2],"added":7}'


def test_names_are_not_deduplicated(account):
    machine = account.state_machine(PASS_THROUGH, kind="EXPRESS")
    client = sfn(account)

    first = client.start_sync_execution(stateMachineArn=machine, name="same", input="{}")
    second = client.start_sync_execution(stateMachineArn=machine, name="same", input="{}")

    assert first["status"] == second["status"] == "SUCCEEDED"
    assert first["executionArn"] != second["executionArn"]


def test_an_express_execution_cannot_be_described(account):
    """AWS: DescribeExecution (like ListExecutions) is not supported for Express executions; the
    response of StartSyncExecution is the record (and, on AWS, CloudWatch Logs)."""
    machine = account.state_machine(PASS_THROUGH, kind="EXPRESS")
    result = sfn(account).start_sync_execution(stateMachineArn=machine, input="{}")
    with pytest.raises(ClientError):
        account.sfn.describe_execution(executionArn=result["executionArn"])


def test_a_standard_state_machine_is_refused(account):
    machine = account.state_machine(PASS_THROUGH, kind="STANDARD")
    with pytest.raises(ClientError) as raised:
        sfn(account).start_sync_execution(stateMachineArn=machine, input="{}")
    assert error_code(raised) == "StateMachineTypeNotSupported"
    assert account.sfn.list_executions(stateMachineArn=machine)["executions"] == []  # nothing started


def test_an_unknown_state_machine_does_not_exist(account):
    missing = f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:nowhere"
    with pytest.raises(ClientError) as raised:
        sfn(account).start_sync_execution(stateMachineArn=missing, input="{}")
    assert error_code(raised) == "StateMachineDoesNotExist"


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        pytest.param({"name": "x" * 81}, "InvalidName", id="name-over-80"),
        pytest.param({"name": "has space"}, "InvalidName", id="name-with-space"),
        pytest.param({"name": "a:b"}, "InvalidName", id="name-with-colon"),
        pytest.param({"input": "{not json"}, "InvalidExecutionInput", id="not-json"),
        pytest.param({"input": '{"n": Infinity}'}, "InvalidExecutionInput", id="infinity"),
        pytest.param({"input": json.dumps({"x": "y" * 262_144})}, "ValidationException", id="over-256-KiB"),
    ],
)
def test_requests_aws_refuses(account, changes, code):
    machine = account.state_machine(PASS_THROUGH, kind="EXPRESS")
    request = {"stateMachineArn": machine, "name": "ok", "input": "{}", **changes}
    with pytest.raises(ClientError) as raised:
        sfn(account).start_sync_execution(**request)
    assert error_code(raised) == code


def test_with_the_host_prefix_a_local_endpoint_is_not_reached(account):
    """Why clients of a local endpoint need inject_host_prefix=False: the `sync-` host does not resolve."""
    machine = account.state_machine(PASS_THROUGH, kind="EXPRESS")
    endpoint = account.aws.endpoint_url.replace("127.0.0.1", "localhost")
    client = boto3.client(
        "stepfunctions",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=2),
    )
    with pytest.raises(EndpointConnectionError, match="sync-localhost"):
        client.start_sync_execution(stateMachineArn=machine, input="{}")

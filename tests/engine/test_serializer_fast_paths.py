"""The `serializer_fast_paths` speed-up writes the same bytes as moto's own serializer.

Each response is read raw (the JSON body the endpoint sends) with the speed-up's three patches in
place, then with moto's originals put back, and compared byte for byte: Step Functions' reads of
executions that succeeded and failed (history events of every kind the pipeline makes, ISO
timestamps), SQS and DynamoDB reads (other services' JSON responses go through the same
serializer), with strings and booleans written as they are, enums, numbers and nested structures.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import requests
from moto.core import serialize
from moto.core.responses import BaseResponse

from onceflow.engine.speedups import serializer_fast_paths
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import list_executions
from tests.support import order, run_execution

_SIGNED = (
    "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=0"
)


def _raw(stack: LocalStack, service: str, target: str, version: str, body: dict[str, Any]) -> bytes:
    response = requests.post(
        stack.endpoint_url,
        json=body,
        headers={
            "X-Amz-Target": target,
            "Content-Type": f"application/x-amz-json-{version}",
            "Authorization": _SIGNED.format(service=service),
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.content


def _requests(stack: LocalStack) -> list[tuple[str, str, str, dict[str, Any]]]:
    sfn = stack.client("stepfunctions")
    arns = [e["executionArn"] for e in list_executions(sfn, stack.state_machine_arn)]
    calls = [("states", "AWSStepFunctions.ListExecutions", "1.0", {"stateMachineArn": stack.state_machine_arn})]
    for arn in arns:
        calls.append(("states", "AWSStepFunctions.DescribeExecution", "1.0", {"executionArn": arn}))
        calls.append(("states", "AWSStepFunctions.GetExecutionHistory", "1.0", {"executionArn": arn}))
    calls.append(
        ("sqs", "AmazonSQS.GetQueueAttributes", "1.0", {"QueueUrl": stack.source_queue_url, "AttributeNames": ["All"]})
    )
    calls.append(("dynamodb", "DynamoDB_20120810.Scan", "1.0", {"TableName": stack.processed_events_table}))
    # Strings, booleans, enums, numbers and nested structures of other shapes.
    calls.append(("dynamodb", "DynamoDB_20120810.DescribeTable", "1.0", {"TableName": stack.processed_events_table}))
    calls.append(("sqs", "AmazonSQS.ListQueues", "1.0", {}))
    calls.append(
        ("states", "AWSStepFunctions.DescribeStateMachine", "1.0", {"stateMachineArn": stack.state_machine_arn})
    )
    return calls


def test_responses_are_byte_for_byte_those_of_motos_serializer(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_execution(stack, order("order-1"), name="new-order-1")
    run_execution(stack, order("order-1"), name="redelivered-order-1")
    conflict = run_execution(stack, order("order-1", amount=1), name="conflict-order-1")
    assert conflict.status == "FAILED"  # a failure's events (TaskFailed, ExecutionFailed) are in the comparison
    calls = _requests(stack)
    fast = [_raw(stack, *call) for call in calls]
    assert serialize.ResponseSerializer._serialize_type_structure is serializer_fast_paths._serialize_type_structure
    monkeypatch.setattr(
        serialize.ResponseSerializer, "_serialize_type_structure", serializer_fast_paths._ORIGINAL_STRUCTURE
    )
    monkeypatch.setattr(
        serialize.TimestampSerializer, "_convert_timestamp_to_str", serializer_fast_paths._ORIGINAL_TIMESTAMP
    )
    monkeypatch.setattr(BaseResponse, "_enrich_response", staticmethod(serializer_fast_paths._ORIGINAL_ENRICH))
    moto_own = [_raw(stack, *call) for call in calls]
    assert len(calls) == 12
    for call, ours, theirs in zip(calls, fast, moto_own, strict=True):
        assert ours == theirs, call[1]
    histories = [body for call, body in zip(calls, fast, strict=True) if call[1].endswith("GetExecutionHistory")]
    assert all(b'"timestamp": 17' in body for body in histories)  # epoch seconds, read from moto's ISO strings
    assert any(b'"TaskFailed"' in body for body in histories)
    listed = fast[0]  # ListExecutions: moto keeps its dates as aware datetimes, written as epoch seconds
    assert calls[0][1].endswith("ListExecutions") and b'"startDate": 17' in listed and b'"stopDate": 17' in listed


@pytest.mark.parametrize(
    "body",
    [
        '{"MessageId": "m"}',
        "<PublishResponse><PublishResult><MessageId>m</MessageId></PublishResult>"
        "<ResponseMetadata><RequestId>placeholder</RequestId></ResponseMetadata></PublishResponse>",
        "",
    ],
)
def test_a_request_id_is_set_as_moto_sets_it(body: str) -> None:
    """The same headers and body as moto's _enrich_response, but for the id drawn (52 letters and
    digits, in the headers and in an XML body's RequestId)."""
    ours = serializer_fast_paths._enrich_response({"status": 200}, body)
    theirs = serializer_fast_paths._ORIGINAL_ENRICH({"status": 200}, body)
    for headers, written in (ours, theirs):
        request_id = headers.pop("x-amzn-requestid")
        assert re.fullmatch(r"[A-Za-z0-9]{52}", request_id)
        assert headers == {"status": "200"}
        assert written == body.replace("placeholder", request_id)

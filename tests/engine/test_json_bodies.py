"""A JSON-protocol request's body is its parameters, never a query string (onceflow/engine/protocols/
json_bodies.py). AWS's JSON protocols name the operation by X-Amz-Target and carry its input as the
JSON body (https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html): a value holding `&name=`
or `&Action=` is text like any other. moto read such a body as a query string too, and took the
execution's name or the operation from it. Each test fails without the fix (checked by removing it
from registry.PATCH_ORDER)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

pytestmark = pytest.mark.embedded_only(reason="the engine's reading of a request body")


def _client(embedded_aws: Any, service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=embedded_aws.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_an_execution_s_input_cannot_rename_it(embedded_aws: Any) -> None:
    """Without the fix: InvalidName, the name read from the input's `&name=`."""
    sfn = _client(embedded_aws, "stepfunctions")
    machine = sfn.create_state_machine(
        name="json-bodies",
        definition=json.dumps({"StartAt": "Pass", "States": {"Pass": {"Type": "Pass", "End": True}}}),
        roleArn="arn:aws:iam::123456789012:role/json-bodies",
    )["stateMachineArn"]
    text = json.dumps({"note": "a&name=renamed&input=replaced&stateMachineArn=other"})
    arn = sfn.start_execution(stateMachineArn=machine, name="as-asked", input=text)["executionArn"]
    described = sfn.describe_execution(executionArn=arn)
    assert arn.endswith(":as-asked")
    assert described["input"] == text
    assert described["stateMachineArn"] == machine


def test_an_item_s_value_cannot_change_the_operation(embedded_aws: Any) -> None:
    """Without the fix: the PutItem is answered as a ListTables, and the item is not written."""
    dynamodb = _client(embedded_aws, "dynamodb")
    dynamodb.create_table(
        TableName="json-bodies",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {"k": {"S": "x"}, "note": {"S": "a&Action=ListTables&TableName=other"}}
    dynamodb.put_item(TableName="json-bodies", Item=item)
    assert dynamodb.get_item(TableName="json-bodies", Key={"k": {"S": "x"}}, ConsistentRead=True)["Item"] == item


def test_a_message_body_cannot_change_the_operation(embedded_aws: Any) -> None:
    """Without the fix: the SendMessage is answered as a DeleteQueue."""
    sqs = _client(embedded_aws, "sqs")
    url = sqs.create_queue(QueueName="json-bodies")["QueueUrl"]
    body = f"x&Action=DeleteQueue&QueueUrl={url}"
    sqs.send_message(QueueUrl=url, MessageBody=body)
    received = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)["Messages"]
    assert [message["Body"] for message in received] == [body]

"""A JSON-protocol request body reads into the parameters moto's own walk of the input shape gives,
whether the engine reads it by a plan made once per shape (the `request_plans` speed-up) or by
moto's walk: the same values, types and key order, for the requests the pipeline and its functions
make (DynamoDB with every kind of AttributeValue, SQS with binary message attributes, Step
Functions) and a timestamp member; a body of the wrong shape fails as moto's walk fails.
`ONCEFLOW_SPEEDUPS_OFF=request_plans` runs the suite with moto's walk.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import botocore.session
import pytest
from botocore.serialize import create_serializer
from moto.core import parse

from onceflow.engine.speedups import request_plans

_SESSION = botocore.session.get_session()
ITEM = {
    "event_id": {"S": "ord-1"},
    "amount": {"N": "12.50"},
    "digest": {"B": b"\x00\xffbinary"},
    "tags": {"SS": ["a", "b"]},
    "sizes": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [b"x", b"\x01"]},
    "payload": {"M": {"inner": {"L": [{"S": "x"}, {"M": {"deep": {"BOOL": True}}}, {"NULL": True}]}}},
}
REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "dynamodb",
        "TransactWriteItems",
        {
            "TransactItems": [
                {"Put": {"TableName": "t", "Item": ITEM, "ConditionExpression": "attribute_not_exists(event_id)"}},
                {
                    "Update": {
                        "TableName": "t",
                        "Key": {"event_id": {"S": "ord-1"}},
                        "UpdateExpression": "SET #s = :v",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {":v": {"S": "sent"}},
                    }
                },
            ],
            "ReturnConsumedCapacity": "TOTAL",
        },
    ),
    (
        "dynamodb",
        "Query",
        {
            "TableName": "t",
            "IndexName": "pending-since",
            "KeyConditionExpression": "pending_shard = :s",
            "ExpressionAttributeValues": {":s": {"S": "07"}},
            "ExclusiveStartKey": {"event_id": {"S": "ord-1"}, "pending_shard": {"S": "07"}},
            "Limit": 25,
            "ConsistentRead": False,
        },
    ),
    (
        "dynamodb",
        "ExportTableToPointInTime",
        {"TableArn": "arn", "S3Bucket": "b", "ExportTime": datetime(2026, 12, 7, tzinfo=UTC)},
    ),
    (
        "sqs",
        "SendMessage",
        {
            "QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
            "MessageBody": "{}",
            "DelaySeconds": 3,
            "MessageAttributes": {
                "event_id": {"DataType": "String", "StringValue": "ord-1"},
                "raw": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
            },
        },
    ),
    (
        "sqs",
        "ReceiveMessage",
        {"QueueUrl": "q", "MaxNumberOfMessages": 10, "WaitTimeSeconds": 0, "MessageAttributeNames": ["All"]},
    ),
    ("stepfunctions", "StartExecution", {"stateMachineArn": "arn", "name": "n", "input": '{"a": 1}'}),
]


def _body(service: str, operation: str, params: dict[str, Any]) -> tuple[Any, bytes]:
    model = _SESSION.get_service_model(service).operation_model(operation)
    request = create_serializer(model.metadata["protocol"]).serialize_to_request(params, model)
    return model, request["body"]


def _ordered(value: Any) -> Any:
    """The value with every dict's key order made visible (equality of dicts ignores it)."""
    if isinstance(value, dict):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return (type(value).__name__, value)


@pytest.mark.parametrize(("service", "operation", "params"), REQUESTS, ids=[f"{s}.{o}" for s, o, _ in REQUESTS])
def test_a_body_reads_as_moto_s_walk_reads_it(service: str, operation: str, params: dict[str, Any]) -> None:
    model, body = _body(service, operation, params)
    parser = parse.JSONParser(model)
    shape = model.input_shape
    walked = parser._parse_shape(shape, parser._parse_body_as_json(body))  # moto's walk
    planned = request_plans.make_plan(shape, parse.JSONParser)(json.loads(body))
    assert _ordered(planned) == _ordered(walked)
    assert planned == walked


def test_the_patched_parser_reads_bodies_by_plan_and_falls_back_where_it_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model, body = _body(*REQUESTS[0])
    planned_calls: list[str] = []
    make = request_plans.make_plan
    monkeypatch.setattr(
        request_plans, "make_plan", lambda shape, cls: planned_calls.append(shape.name) or make(shape, cls)
    )
    ((_, _, patched),) = request_plans.patches()
    parser = parse.JSONParser(model)
    walked = parser._parse_shape(model.input_shape, json.loads(body))
    assert patched(parser, body, model.input_shape) == walked
    assert patched(parser, body, model.input_shape) == walked
    assert planned_calls == ["TransactWriteItemsInput"]  # made once
    other = parse.JSONParser(model, map_type=parse.XFormedDict)  # another map type: moto's walk
    assert type(patched(other, body, model.input_shape)) is parse.XFormedDict
    with pytest.raises(AttributeError):  # a list where a structure is: fails as moto's walk fails
        patched(parser, b'{"TransactItems": [["not", "a", "structure"]]}', model.input_shape)
    with pytest.raises(AttributeError):
        parser._parse_shape(model.input_shape, {"TransactItems": [["not", "a", "structure"]]})

"""The client commands' JSON-protocol reader (onceflow/ops/json_responses.py) gives what botocore's
JSONParser gives, value for value and type for type, for every operation's output and every modeled
error of the JSON services the commands call (Step Functions, DynamoDB, SQS, CloudWatch Logs):
bodies generated from each shape with members left out, set to null, unknown members added,
lists holding nulls, timestamps as epoch seconds and as text, blobs, and the recursive shapes
(DynamoDB's AttributeValue)."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import botocore.session
import pytest
from botocore.model import Shape
from botocore.parsers import JSONParser

from onceflow.ops import json_responses, stack
from onceflow.ops.json_responses import PlannedJSONParser
from onceflow.ops.timestamps import parse_timestamp

SERVICES = ("stepfunctions", "dynamodb", "sqs", "logs")
BODIES_PER_SHAPE = 12


def _value(shape: Shape, rng: random.Random, depth: int = 0) -> Any:
    kind = shape.type_name
    if kind == "structure":
        if depth > 5:
            return {}
        members = shape.members  # type: ignore[attr-defined]
        if shape.is_tagged_union:  # exactly one member set, or one AWS added since
            if rng.random() < 0.1:
                return {"SomethingNewFromAws": {"x": 1}}
            name, member = rng.choice(list(members.items()))
            return {member.serialization.get("name", name): _value(member, rng, depth + 1)}
        body: dict[str, Any] = {}
        for name, member in members.items():
            roll = rng.random()
            key = member.serialization.get("name", name)
            if roll < 0.5:
                body[key] = _value(member, rng, depth + 1)
            elif roll < 0.6:
                body[key] = None
        if rng.random() < 0.3:
            body["SomethingNewFromAws"] = {"x": 1}
        return body
    if kind == "list":
        return [None if rng.random() < 0.1 else _value(shape.member, rng, depth + 1) for _ in range(rng.randint(0, 3))]  # type: ignore[attr-defined]
    if kind == "map":
        return {f"k{i}": _value(shape.value, rng, depth + 1) for i in range(rng.randint(0, 2))}  # type: ignore[attr-defined]
    if kind == "timestamp":
        return rng.choice([1_764_000_000.123, 1_764_000_000, "2026-12-02T16:30:00Z", "2026-12-02T16:30:00.5+01:00"])
    if kind == "blob":
        return base64.b64encode(rng.randbytes(rng.randint(0, 6))).decode()
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "long"):
        return rng.randint(-5, 10**12)
    if kind in ("float", "double"):
        return rng.choice([0.5, 1.0, -3.25, 7])
    return rng.choice(["", "text", "ünïcode", "42"])


def _same(ours: Any, theirs: Any, where: str = "$") -> None:
    assert type(ours) is type(theirs), (where, ours, theirs)
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), where  # the same keys, in the same order
        for key in theirs:
            _same(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _same(a, b, f"{where}[{i}]")
    else:
        assert ours == theirs, where


def _shapes(service: str) -> list[tuple[str, Shape, int]]:
    model = botocore.session.get_session().get_service_model(service)
    found: list[tuple[str, Shape, int]] = []
    for name in model.operation_names:
        operation = model.operation_model(name)
        if operation.output_shape is not None and not operation.output_shape.event_stream_name:  # streams: botocore's
            found.append((name, operation.output_shape, 200))
        found += [(f"{name}:{error.name}", error, 400) for error in operation.error_shapes]
    return found


@pytest.mark.parametrize("service", SERVICES)
def test_every_output_and_error_reads_as_botocore_reads_it(service: str) -> None:
    theirs, ours = JSONParser(timestamp_parser=parse_timestamp), PlannedJSONParser(timestamp_parser=parse_timestamp)
    rng = random.Random(service)
    shapes = _shapes(service)
    assert len(shapes) > 20
    for what, shape, status in shapes:
        for _ in range(BODIES_PER_SHAPE):
            body = _value(shape, rng)
            if status == 400:
                body["__type"] = f"com.amazonaws#{shape.name}"
            response = {
                "body": json.dumps(body).encode(),
                "headers": {"x-amzn-requestid": "r-1"},
                "status_code": status,
            }
            _same(ours.parse(dict(response), shape), theirs.parse(dict(response), shape), what)


def test_a_null_body_and_an_empty_one_read_as_botocore_reads_them() -> None:
    shape = (
        botocore.session.get_session().get_service_model("stepfunctions").operation_model("StopExecution").output_shape
    )
    for body in (b"", b"null", b"{}"):
        response = {"body": body, "headers": {}, "status_code": 200}
        _same(PlannedJSONParser().parse(dict(response), shape), JSONParser().parse(dict(response), shape))


def test_the_commands_clients_read_with_it_unless_it_is_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    local = stack._with_speedups(botocore.session.Session()).create_client(
        "stepfunctions", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    parser = local._endpoint._response_parser_factory.create_parser("json")  # botocore: one per response
    assert type(parser) is PlannedJSONParser
    assert parser._timestamp_parser is parse_timestamp  # the other speed-up still applies
    assert parser._plans is local._endpoint._response_parser_factory.create_parser("json")._plans

    monkeypatch.setenv("ONCEFLOW_CLIENT_SPEEDUPS_OFF", "json_responses")
    plain = json_responses.install(botocore.session.Session()).create_client(
        "stepfunctions", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    assert type(plain._endpoint._response_parser_factory.create_parser("json")) is JSONParser

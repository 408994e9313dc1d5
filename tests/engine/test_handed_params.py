"""handed_params (onceflow/engine/speedups/handed_params.py): a Task's JSON-protocol call to DynamoDB or
SQS hands moto's response class the parameters moto would read from botocore's body, without the
body. The parameters equal moto's parse of botocore's body for every operation of both services; the
response object is set up as setup_class sets it up; calls answer as they answer with the body,
errors included; what the plan cannot convert exactly goes with its body, as before.
`ONCEFLOW_SPEEDUPS_OFF=handed_params` runs the suite without it."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import botocore.session
import pytest
from botocore.serialize import create_serializer
from moto.core import parse
from moto.core.utils import get_service_model
from moto.dynamodb.responses import DynamoHandler
from moto.sqs.responses import SQSResponse

from onceflow.engine import speedups
from onceflow.engine.speedups import direct_integrations, handed_params, integration_clients
from tests.engine.test_direct_integrations import CALLS as DIRECT_CALLS
from tests.engine.test_direct_integrations import _answer as direct_answer
from tests.support import order, run_execution

_SESSION = botocore.session.get_session()
SERVICES = {"dynamodb": DynamoHandler, "sqs": SQSResponse}
REGION = "us-east-1"


def _botocore_body(service: str, operation: str, params: Any) -> bytes:
    model = _SESSION.get_service_model(service).operation_model(operation)
    return create_serializer("json", include_validation=False).serialize_to_request(params, model)["body"]


def _moto_parse(service: str, operation: str, params: Any) -> Any:
    """What moto's parser makes of botocore's body for `params` (its own walk of the shape)."""
    model = get_service_model(service).operation_model(operation)
    parser = parse.JSONParser(model)
    return parser._parse_shape(
        model.input_shape, parser._parse_body_as_json(_botocore_body(service, operation, params))
    )


def _handed(service: str, operation: str, params: Any) -> Any:
    return handed_params.moto_params(SERVICES[service], service, operation, params)


def _ordered(value: Any) -> Any:
    """The value with every dict's key order and every leaf's type made visible."""
    if isinstance(value, dict):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _sample(shape: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value of `shape` as a Task hands it to botocore (JSON's types, blobs as text or bytes)."""
    kind = shape.type_name
    if kind == "structure":
        if shape.is_document_type:
            return {"doc": [1, "two", None, {"x": True}]}
        members = [(name, member) for name, member in shape.members.items() if member.type_name != "timestamp"]
        chosen = [(name, member) for name, member in members if depth < 4 and rng.random() < 0.6]
        return {name: _sample(member, rng, depth + 1) for name, member in reversed(chosen)}  # not the shape's order
    if kind == "list":
        return [_sample(shape.member, rng, depth + 1) for _ in range(rng.randint(0, 2) if depth < 4 else 0)]
    if kind == "map":
        count = rng.randint(0, 2) if depth < 4 else 0
        return {f"k{index}é": _sample(shape.value, rng, depth + 1) for index in range(count)}
    if kind == "string":
        return rng.choice(shape.enum) if shape.enum else rng.choice(["plain", "ünïcødé ✓", "", "a&Action=b=c"])
    if kind in ("integer", "long"):
        return rng.choice([0, 7, -3, 2**40])
    if kind in ("float", "double"):
        return rng.choice([1.5, 0.0, -2.25, 3, float("inf"), float("nan")])
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "blob":
        return rng.choice([b"\x00\xffbytes", "text ✓", bytearray(b"ab")])
    raise AssertionError(f"no sample for {kind}")


def _operations() -> list[tuple[str, str]]:
    found = []
    for service in SERVICES:
        model = _SESSION.get_service_model(service)
        for name in model.operation_names:
            if handed_params.takes(model.operation_model(name)):
                found.append((service, name))
    return found


OPERATIONS = _operations()


def test_every_operation_of_both_services_is_taken() -> None:
    """DynamoDB and SQS speak JSON to `/`: every operation of theirs may be handed over."""
    for service in SERVICES:
        names = set(_SESSION.get_service_model(service).operation_names)
        assert {name for s, name in OPERATIONS if s == service} == names


@pytest.mark.parametrize(("service", "operation"), OPERATIONS, ids=[f"{s}.{o}" for s, o in OPERATIONS])
def test_the_handed_parameters_are_moto_s_parse_of_botocore_s_body(service: str, operation: str) -> None:
    shape = _SESSION.get_service_model(service).operation_model(operation).input_shape
    rng = random.Random(f"{service}.{operation}")
    for _ in range(6):
        params = _sample(shape, rng) if shape is not None else {}
        try:
            handed = _handed(service, operation, params)
        except handed_params.Unconverted:
            pytest.fail(f"a value of JSON's types was not converted: {params!r}")
        assert _ordered(handed) == _ordered(_moto_parse(service, operation, params))


# (operation, parameters, why the round trip is what the plan must match) for values of other kinds
EDGES: list[tuple[str, dict[str, Any], str]] = [
    ("SendMessage", {"QueueUrl": "q", "MessageBody": "x", "DelaySeconds": "12"}, "a number as text: moto's int()"),
    ("SendMessage", {"QueueUrl": "q", "MessageBody": "x", "DelaySeconds": True}, "a boolean as a number"),
    ("SendMessage", {"QueueUrl": "q", "MessageBody": 12}, "a number where text goes: as it is"),
    ("SendMessage", {"QueueUrl": "q", "MessageBody": "x", "MessageGroupId": None}, "a null string member: left out"),
]


@pytest.mark.parametrize(("operation", "params", "why"), EDGES, ids=[why for _, _, why in EDGES])
def test_a_value_botocore_writes_as_it_is_reads_as_moto_reads_it(operation: str, params: dict, why: str) -> None:
    assert _ordered(_handed("sqs", operation, params)) == _ordered(_moto_parse("sqs", operation, params))


UNCONVERTED: list[tuple[str, str, dict[str, Any]]] = [
    ("sqs", "SendMessage", {"QueueUrl": "q", "MessageBody": "x", "Unknown": 1}),  # botocore: KeyError
    ("sqs", "SendMessage", {"QueueUrl": "q", "MessageBody": "x", "MessageAttributes": None}),  # botocore fails
    ("sqs", "SendMessage", {"QueueUrl": "q", "MessageBody": Decimal("1")}),  # not JSON's: json.dumps fails
    ("sqs", "ReceiveMessage", {"QueueUrl": "q", "MessageAttributeNames": ("All",)}),  # a tuple, written as a list
    ("sqs", "ReceiveMessage", {"QueueUrl": "q", "MessageAttributeNames": ["All", None]}),  # a null in a list
    ("sqs", "SendMessage", {"QueueUrl": "q", "MessageBody": "x", "DelaySeconds": "twelve"}),  # moto's int() fails
    ("dynamodb", "GetItem", {"TableName": "t", "Key": {1: {"S": "x"}}}),  # a map key JSON writes as text
    (
        "dynamodb",
        "ExportTableToPointInTime",
        {"TableArn": "a", "S3Bucket": "b", "ExportTime": datetime(2026, 12, 8, tzinfo=UTC)},
    ),
]


@pytest.mark.parametrize(("service", "operation", "params"), UNCONVERTED, ids=[repr(p) for _, _, p in UNCONVERTED])
def test_what_the_plan_does_not_convert_exactly_is_left_to_the_body(service: str, operation: str, params: dict) -> None:
    with pytest.raises(handed_params.Unconverted):
        _handed(service, operation, params)


def _set_up_both_ways(response_class: type, url: str, operation: str, target: str, params: dict) -> tuple[Any, Any]:
    service = "dynamodb" if response_class is DynamoHandler else "sqs"
    body = _botocore_body(service, operation, params)
    authorization = direct_integrations.unsigned_authorization(
        f"AKIAIOSFODNN7EXAMPLE/20261208/{url.split('.')[1]}/{service}/aws4_request", "host"
    )
    headers = {
        "X-Amz-Target": target,
        "Content-Type": "application/x-amz-json-1.0",
        "User-Agent": b"Boto3/1.44 md/x",
    }
    from botocore.awsrequest import AWSRequest

    prepared = AWSRequest(
        method="POST", url=url, data=body, headers={**headers, "Authorization": authorization}
    ).prepare()
    by_moto = response_class()
    by_moto.setup_class(direct_integrations.direct_request(prepared))
    handed = response_class()
    environ = handed_params.header_environ(url, headers, authorization)
    assert environ is not None
    handed_params.set_up(handed, url, environ, _handed(service, operation, params))
    return by_moto, handed


SET_UPS = [
    (
        DynamoHandler,
        "https://dynamodb.us-east-1.amazonaws.com/",
        "UpdateItem",
        "DynamoDB_20120810.UpdateItem",
        {"TableName": "t", "Key": {"event_id": {"S": "e=1&f"}}, "UpdateExpression": "SET a = :a"},
    ),
    (
        SQSResponse,
        "https://sqs.eu-west-1.amazonaws.com/",
        "SendMessage",
        "AmazonSQS.SendMessage",
        {"QueueUrl": "https://sqs.eu-west-1.amazonaws.com/123456789012/q", "MessageBody": "{}"},
    ),
]


@pytest.mark.embedded_only(reason="setup_class as the engine patches it (protocols/json_bodies.py)")
@pytest.mark.parametrize(("response_class", "url", "operation", "target", "params"), SET_UPS)
def test_a_handed_response_object_is_set_up_as_setup_class_sets_it_up(
    embedded_aws, response_class, url, operation, target, params
):
    by_moto, handed = _set_up_both_ways(response_class, url, operation, target, params)
    mine, theirs = dict(vars(handed)), dict(vars(by_moto))
    # What the module's docstring says a handed response object does not get.
    assert set(theirs) - set(mine) == {"normalized_request"}
    assert set(mine) - set(theirs) == set()
    assert (mine.pop("body"), mine.pop("raw_body")) == ("", b"")
    assert theirs.pop("body") and theirs.pop("raw_body")
    theirs.pop("normalized_request")
    # The URL's query string (none), not the body read as one.
    assert mine.pop("querystring") == theirs.pop("querystring") == mine.pop("data") == theirs.pop("data") == {}
    # The headers moto reads, by name and value, less the body's length.
    assert [(k, v) for k, v in theirs.pop("headers").items() if k != "Content-Length"] == list(
        mine.pop("headers").items()
    )
    assert mine.pop("response_headers").keys() == theirs.pop("response_headers").keys()
    assert mine.pop("form_data").to_dict() == theirs.pop("form_data").to_dict() == {}
    assert _ordered(mine.pop("params")) == _ordered(theirs.pop("params"))
    assert mine == theirs  # region, account, access key, URL parts, method, path...
    assert mine["region"] == url.split(".")[1]


def _query_body(operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """botocore's query-protocol body for SNS: the flat dict it URL-encodes."""
    model = _SESSION.get_service_model("sns").operation_model(operation)
    return create_serializer("query", include_validation=False).serialize_to_request(params, model)["body"]


PUBLISH = {
    "TopicArn": "arn:aws:sns:eu-west-1:123456789012:t",
    "Message": '{"a": "b&Action=c ✓ + %"}',
    "MessageAttributes": {
        "text": {"DataType": "String", "StringValue": "x=y&z"},
        "number": {"DataType": "Number", "StringValue": "12.5"},
        "raw": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
        "list": {"DataType": "String.Array", "StringValue": '["a", 1]'},
    },
}


@pytest.mark.embedded_only(reason="setup_class as the engine patches it")
@pytest.mark.parametrize(
    "operation,params",
    [("Publish", PUBLISH), ("ListTopics", {}), ("CreateTopic", {"Name": "t", "Attributes": {}, "Tags": []})],
)
def test_a_handed_form_sets_the_response_object_up_as_setup_class_does(
    embedded_aws: Any, operation: str, params: dict
) -> None:
    """A query-protocol call (SNS): the form werkzeug would read from botocore's URL-encoded body, and
    moto's own parse of it; everything setup_class sets but the request object."""
    from botocore.awsrequest import AWSRequest
    from moto.sns.responses import SNSResponse

    url = "https://sns.eu-west-1.amazonaws.com/"
    body = _query_body(operation, params)
    authorization = direct_integrations.unsigned_authorization(
        "AKIAIOSFODNN7EXAMPLE/20261208/eu-west-1/sns/aws4_request", "host"
    )
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "User-Agent": "Boto3/1.44"}
    prepared = AWSRequest(method="POST", url=url, data=body, headers={**headers, "Authorization": authorization})
    by_moto = SNSResponse()
    by_moto.setup_class(direct_integrations.direct_request(prepared.prepare()))
    form = handed_params.form_of(body)
    assert form is not None
    environ = handed_params.header_environ(url, headers, authorization)
    handed = SNSResponse()
    handed_params.form_set_up(form)(handed, url, environ)
    mine, theirs = dict(vars(handed)), dict(vars(by_moto))
    assert set(theirs) - set(mine) == {"normalized_request"} and set(mine) - set(theirs) == set()
    theirs.pop("normalized_request")
    assert [(k, v) for k, v in theirs.pop("headers").items() if k != "Content-Length"] == list(
        mine.pop("headers").items()
    )
    assert mine.pop("response_headers").keys() == theirs.pop("response_headers").keys()
    assert list(mine.pop("form_data").items(multi=True)) == list(theirs.pop("form_data").items(multi=True))
    assert _ordered(mine.pop("params")) == _ordered(theirs.pop("params"))
    assert list(mine.pop("querystring").items()) == list(theirs.pop("querystring").items())
    assert list(mine.pop("data").items()) == list(theirs.pop("data").items())
    assert mine == theirs  # the body (empty: werkzeug read it as the form), region, account, URL parts...
    assert mine["region"] == "eu-west-1"


FORMS: list[tuple[dict[str, Any], list[tuple[str, str]] | None]] = [
    ({"Action": "Publish", "N": 3, "F": 1.5}, [("Action", "Publish"), ("N", "3"), ("F", "1.5")]),  # urlencode's str()
    ({"Action": "Publish", "Empty": ""}, [("Action", "Publish"), ("Empty", "")]),
    ({"Action": "Publish", "Bytes": b"x"}, None),  # not what this reads: left to werkzeug
    ({"Action": "Publish", "Lone": "\ud800"}, None),  # UTF-8 cannot encode it: urlencode fails, as before
    ({f"K{index}": "v" for index in range(1000)}, None),  # near werkzeug's 1,000 parts
    ({"Action": "Publish", "Message": "x" * 100_001}, None),  # near werkzeug's form memory limit
]


@pytest.mark.parametrize(("body", "pairs"), FORMS, ids=[repr(pairs)[:40] for _, pairs in FORMS])
def test_a_form_is_read_as_werkzeug_reads_botocore_s_body(body: dict[str, Any], pairs: Any) -> None:
    form = handed_params.form_of(body)
    if pairs is None:
        assert form is None
        return
    assert form is not None and list(form.items(multi=True)) == pairs
    from botocore.awsrequest import AWSRequest

    prepared = AWSRequest(
        method="POST",
        url="https://sns.us-east-1.amazonaws.com/",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    ).prepare()
    assert list(direct_integrations.direct_request(prepared).form.items(multi=True)) == pairs


def test_a_header_werkzeug_refuses_is_not_handed() -> None:
    url = "https://dynamodb.us-east-1.amazonaws.com/"
    assert handed_params.header_environ(url, {"X-Bad": "a\nb"}, "AWS4-HMAC-SHA256 Credential=x") is None
    assert handed_params.header_environ(url, {"Transfer-Encoding": "chunked"}, "AWS4-HMAC-SHA256 Credential=x") is None


# --- through the engine ---------------------------------------------------------------------------


def _client(embedded_aws: Any, service: str, role_arn: str | None, handed: bool) -> Any:
    stubber = integration_clients._LockedStubber(embedded_aws.lock)
    return integration_clients._in_process_client(REGION, service, stubber, role_arn, True, handed)


@pytest.fixture
def role_arn(stack: Any) -> str:
    sfn = stack.client("stepfunctions")
    return sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["roleArn"]


@pytest.fixture
def handed_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(operation, handed over) for every call the lane was asked to take."""
    calls: list[tuple[str, bool]] = []
    handed = direct_integrations.DirectCall._handed

    def counted(self: Any, model: Any, params: dict, request_signer: Any, set_up: Any) -> Any:
        answer = handed(self, model, params, request_signer, set_up)
        calls.append((model.name, answer is not None))
        return answer

    monkeypatch.setattr(direct_integrations.DirectCall, "_handed", counted)
    return calls


@pytest.mark.embedded_only(reason="counts the engine's own lanes")
def test_a_pipeline_execution_hands_its_dynamodb_calls_over(stack, embedded_aws, handed_calls):
    """Fails with handed_params switched off: the transaction and the update then go with a body."""
    if speedups.HANDED_PARAMS not in embedded_aws.speedups:
        pytest.fail("handed_params is switched off")
    result = run_execution(stack, order("order-handed"), name="handed")
    assert result.status == "SUCCEEDED", result.path
    assert ("TransactWriteItems", True) in handed_calls and ("UpdateItem", True) in handed_calls
    assert all(handed for _, handed in handed_calls)


def _answer(call: Callable[[Any], Any], client: Any) -> tuple[str, Any]:
    """direct_integrations' test's answer, a failure of botocore's serializer and the values new per
    call (a message's id) included."""
    try:
        kind, answer = direct_answer(call, client)
    except Exception as error:  # botocore's serializer fails before any answer
        return type(error).__name__, str(error)
    if kind == "ok":
        for volatile in ("MessageId", "MD5OfMessageBody", "SequenceNumber"):
            if volatile in answer[0]:
                answer[0][volatile] = "(per call)"
    return kind, answer


def _key(name: str) -> dict[str, Any]:
    return {"event_id": {"S": name}}


# case: (service, as whom, call, handed over or not, the answer's kind and error code)
CALLS: dict[str, tuple[str, str, Callable[[Any, Any], Any], bool, tuple[str, str | None]]] = {
    "an item with every kind of attribute, written and read back": (
        "dynamodb",
        "role",
        lambda stack, ddb: (
            ddb.put_item(
                TableName=stack.processed_events_table,
                Item={
                    **_key("handed-kinds"),
                    "blob": {"B": b"\x00\xff"},
                    "text_blob": {"B": "text"},
                    "numbers": {"NS": ["1", "2.5"]},
                    "blobs": {"BS": [b"a", b"b"]},
                    "nested": {"M": {"l": {"L": [{"NULL": True}, {"BOOL": False}, {"N": "-3"}]}}},
                },
            ),
            ddb.get_item(TableName=stack.processed_events_table, Key=_key("handed-kinds"), ConsistentRead=True),
        )[1],
        True,
        ("ok", None),
    ),
    "a query with a limit (an integer)": (
        "dynamodb",
        "admin",
        lambda stack, ddb: ddb.query(
            TableName=stack.processed_events_table,
            KeyConditionExpression="event_id = :e",
            ExpressionAttributeValues={":e": {"S": "handed-kinds"}},
            Limit=1,
        ),
        True,
        ("ok", None),
    ),
    "a request moto refuses (no key)": (
        "dynamodb",
        "admin",
        lambda stack, ddb: ddb.get_item(TableName=stack.processed_events_table, Key={}),
        True,
        ("ClientError", "ValidationException"),
    ),
    "a timestamp parameter (not converted: goes with its body)": (
        "dynamodb",
        "admin",
        lambda stack, ddb: ddb.list_backups(
            TableName=stack.processed_events_table, TimeRangeLowerBound=datetime(2026, 1, 1, tzinfo=UTC)
        ),
        False,
        ("ok", None),
    ),
    "an unknown parameter (botocore's serializer fails, both ways)": (
        "dynamodb",
        "admin",
        lambda stack, ddb: ddb.get_item(TableName=stack.processed_events_table, Key=_key("x"), Bogus=1),
        False,
        ("KeyError", None),
    ),
    "a message with attributes, sent and received": (
        "sqs",
        "admin",
        lambda stack, sqs: sqs.send_message(
            QueueUrl=stack.dead_letter_queue_url,
            MessageBody="handed",
            MessageAttributes={"raw": {"DataType": "Binary", "BinaryValue": b"\x01"}},
        ),
        True,
        ("ok", None),
    ),
}


CALLS.update(
    {
        "a publish with every kind of message attribute (a form)": (
            "sns",
            "role",
            lambda stack, sns: sns.publish(
                TopicArn=stack.notification_topic_arn,
                Message='{"text": "a&Action=b ✓"}',
                MessageAttributes={
                    "text": {"DataType": "String", "StringValue": "x=y&z"},
                    "number": {"DataType": "Number", "StringValue": "12.5"},
                    "raw": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
                },
            ),
            True,
            ("ok", None),
        ),
        "a topic's attributes (a map in XML)": (
            "sns",
            "admin",
            lambda stack, sns: sns.get_topic_attributes(TopicArn=stack.notification_topic_arn),
            True,
            ("ok", None),
        ),
        "a message attribute SNS refuses": (
            "sns",
            "admin",
            lambda stack, sns: sns.publish(
                TopicArn=stack.notification_topic_arn,
                Message="x",
                MessageAttributes={"n": {"DataType": "Number", "StringValue": "not a number"}},
            ),
            True,
            ("InvalidParameterException", "InvalidParameter"),
        ),
    }
)
# direct_integrations' cases to DynamoDB and SQS (a cancelled transaction, a failed condition, an IAM
# denial, SQS's query-compatible error codes...), all of which are handed over.
CALLS.update(
    {
        f"{case} (direct_integrations' case)": (service, who, call, True, expected)
        for case, (service, who, call, expected) in DIRECT_CALLS.items()
        if service in (*SERVICES, "sns")
    }
)


@pytest.mark.embedded_only(reason="compares two ways into the embedded engine")
@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_call_answers_as_with_its_body(stack, embedded_aws, role_arn, handed_calls, case):
    service, who, call, taken, (kind, code) = CALLS[case]
    caller = role_arn if who == "role" else None  # None: task_credentials' administrator
    answers = []
    for handed in (True, False):
        client = _client(embedded_aws, service, caller, handed)
        answers.append(_answer(lambda c: call(stack, c), client))
    with_lane, with_body = answers
    assert with_lane == with_body
    assert with_lane[0] == kind
    if code is not None:
        assert with_lane[1][0]["Error"]["Code"] == code
    # The last call of the case was (or was not) handed over; the lane was asked only by the first client.
    assert handed_calls, "the lane was not asked"
    assert handed_calls[-1][1] is taken

"""direct_integrations (onceflow/engine/speedups/direct_integrations.py): a Task's JSON and query calls
are answered from botocore's `before-call` event, not signed and sent through moto's BotocoreStubber,
and they answer as through the stubber, errors included (modelled error fields such as DynamoDB's
CancellationReasons, SQS's query-compatible error codes, IAM's denials)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.core.botocore_stubber import BotocoreStubber

from onceflow.engine import speedups
from onceflow.engine.speedups import direct_integrations, integration_clients
from tests.support import order, run_execution

pytestmark = pytest.mark.embedded_only(reason="compares two ways into the embedded engine")

REGION = "us-east-1"


def _client(embedded_aws: Any, service: str, role_arn: str, direct: bool) -> Any:
    stubber = integration_clients._LockedStubber(embedded_aws.lock)
    return integration_clients._in_process_client(REGION, service, stubber, role_arn, direct)


def _answer(call: Callable[[Any], Any], client: Any) -> tuple[str, Any]:
    """What a call gave, without what differs from request to request (request ids, dates)."""
    try:
        result = call(client)
    except ClientError as error:
        response = dict(error.response)
        metadata = response.pop("ResponseMetadata")
        return type(error).__name__, (response, metadata["HTTPStatusCode"], error.operation_name)
    metadata = result.pop("ResponseMetadata")
    return "ok", (result, metadata["HTTPStatusCode"])


def test_a_pipeline_execution_s_calls_are_answered_without_the_stubber(stack, embedded_aws, monkeypatch):
    """Fails with direct_integrations switched off: every DynamoDB and SNS call of the pipeline then
    goes through the stubber."""
    if speedups.DIRECT_INTEGRATIONS not in embedded_aws.speedups:
        pytest.fail("direct_integrations is switched off")
    through_stubber: list[str] = []
    answered: list[str] = []
    process_request = BotocoreStubber.process_request
    direct_call = direct_integrations.DirectCall.__call__

    def counted_stubber(self: Any, request: Any) -> Any:
        through_stubber.append(str(request.headers.get("X-Amz-Target") or request.url))
        return process_request(self, request)

    def counted_direct(self: Any, model: Any, **kwargs: Any) -> Any:
        answer = direct_call(self, model, **kwargs)
        if answer is not None:
            answered.append(model.name)
        return answer

    monkeypatch.setattr(BotocoreStubber, "process_request", counted_stubber)
    monkeypatch.setattr(direct_integrations.DirectCall, "__call__", counted_direct)
    result = run_execution(stack, order("order-direct"), name="direct")

    assert result.status == "SUCCEEDED", result.path
    assert {"TransactWriteItems", "Publish", "UpdateItem"} <= set(answered)
    assert through_stubber == []


@pytest.fixture
def role_arn(stack: Any) -> str:
    sfn = stack.client("stepfunctions")
    return sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["roleArn"]


def _mark_sent(stack: Any, ddb: Any, event_id: str, **extra: str) -> Any:
    return ddb.update_item(
        TableName=stack.processed_events_table,
        Key={"event_id": {"S": event_id}},
        UpdateExpression="SET #s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": "sent"}},
        **extra,
    )


# case: (service, as whom (the state machine's role, or an administrator: no IAM denial in the way), call,
# the answer's kind and error code: what the case is about, so that a comparison of two wrong answers fails)
CALLS: dict[str, tuple[str, str, Callable[[Any, Any], Any], tuple[str, str | None]]] = {
    "a transaction cancelled, with its cancellation reasons": (
        "dynamodb",
        "role",
        lambda stack, ddb: ddb.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": stack.processed_events_table,
                        "Item": {"event_id": {"S": "direct-compare"}, "status": {"S": "pending"}},
                        "ConditionExpression": "attribute_exists(event_id)",
                    }
                }
            ]
        ),
        ("TransactionCanceledException", "TransactionCanceledException"),
    ),
    "an update whose condition fails": (
        "dynamodb",
        "role",
        lambda stack, ddb: _mark_sent(stack, ddb, "direct-missing", ConditionExpression="attribute_exists(event_id)"),
        ("ConditionalCheckFailedException", "ConditionalCheckFailedException"),
    ),
    "an update that succeeds": (
        "dynamodb",
        "role",
        lambda stack, ddb: _mark_sent(stack, ddb, "direct-present", ReturnValues="ALL_NEW"),
        ("ok", None),
    ),
    "a call the role may not make (IAM)": (
        "dynamodb",
        "role",
        lambda stack, ddb: ddb.delete_table(TableName=stack.processed_events_table),
        ("ClientError", "AccessDeniedException"),
    ),
    "a publish with message attributes": (
        "sns",
        "role",
        lambda stack, sns: sns.publish(
            TopicArn=stack.notification_topic_arn,
            Message="{}",
            MessageAttributes={"event_id": {"DataType": "String", "StringValue": "direct"}},
        ),
        ("ok", None),
    ),
    "a publish to a topic that does not exist": (
        "sns",
        "admin",
        lambda stack, sns: sns.publish(TopicArn=stack.notification_topic_arn + "-gone", Message="{}"),
        ("NotFoundException", "NotFound"),
    ),
    "a message to a queue that does not exist (a query-compatible error code)": (
        "sqs",
        "admin",
        lambda stack, sqs: sqs.send_message(QueueUrl=stack.dead_letter_queue_url + "-gone", MessageBody="x"),
        ("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"),
    ),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_call_answers_as_through_the_stubber(stack, embedded_aws, role_arn, case):
    service, who, call, (kind, code) = CALLS[case]
    caller = role_arn if who == "role" else None  # None: task_credentials' administrator
    direct = _client(embedded_aws, service, caller, direct=True)
    stubbed = _client(embedded_aws, service, caller, direct=False)
    answers = []
    for client in (direct, stubbed):
        answers.append(_answer(lambda c: call(stack, c), client))
    through_direct, through_stubber = answers
    for answered, answer in answers:
        if answered == "ok" and "MessageId" in answer[0]:
            answer[0]["MessageId"] = "(new per publish)" if answer[0]["MessageId"] else ""
    assert through_direct == through_stubber
    assert through_direct[0] == kind
    if code is not None:
        assert through_direct[1][0]["Error"]["Code"] == code


def _prepared(url: str, body: Any, headers: dict[str, Any]) -> Any:
    from botocore.awsrequest import AWSRequest

    return AWSRequest(method="POST", url=url, data=body, headers=headers).prepare()


_SCOPE = "AWS4-HMAC-SHA256 Credential=AKIA/20261207/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
DIRECT_REQUESTS = [
    (  # DynamoDB (JSON 1.0), the pipeline's UpdateItem
        "https://dynamodb.us-east-1.amazonaws.com/",
        b'{"TableName": "t", "Key": {"event_id": {"S": "\\u00e9v"}}}',
        {
            "X-Amz-Target": "DynamoDB_20120810.UpdateItem",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": _SCOPE,
            "User-Agent": b"Boto3/1 md/x",
            "Content-Length": "56",
        },
    ),
    (  # SNS (query): a form body, parsed as werkzeug parses it
        "https://sns.us-east-1.amazonaws.com/",
        "Action=Publish&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A123456789012%3At&Message=%7B%22a%22%3A1%7D",
        {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "Authorization": _SCOPE},
    ),
    (  # SQS (JSON 1.0), no body length header, a metadata header spelled with an underscore
        "http://sqs.us-east-1.amazonaws.com/",
        b'{"QueueUrl": "q", "MessageBody": "x"}',
        {
            "X-Amz-Target": "AmazonSQS.SendMessage",
            "Content-Type": "application/x-amz-json-1.0",
            "x-amz-meta-my_key": "kept",
            "Authorization": _SCOPE,
        },
    ),
    (  # an endpoint with a port (AWS_ENDPOINT_URL)
        "http://127.0.0.1:4566/",
        b'{"TableName": "t"}',
        {"X-Amz-Target": "DynamoDB_20120810.DescribeTable", "Content-Type": "application/x-amz-json-1.0"},
    ),
    (  # Step Functions (JSON 1.0), botocore's body for no parameters
        "https://states.us-east-1.amazonaws.com/",
        b"{}",
        {"X-Amz-Target": "AWSStepFunctions.ListStateMachines", "Content-Type": "application/x-amz-json-1.0"},
    ),
]


@pytest.mark.parametrize(("url", "body", "headers"), DIRECT_REQUESTS)
def test_an_integration_request_is_the_one_moto_s_normalize_request_makes(url: str, body: Any, headers: dict) -> None:
    """direct_request builds the WSGI environ werkzeug's EnvironBuilder builds for moto's
    normalize_request, without the builder; moto reads the same request from it."""
    from moto.core import request as moto_request

    prepared = _prepared(url, body, headers)
    theirs = moto_request.normalize_request(prepared)
    mine = direct_integrations.direct_request(prepared)
    assert type(mine) is direct_integrations.DirectRequest and not mine.from_wsgi_server
    skipped = {"wsgi.input", "wsgi.errors", "werkzeug.request"}
    assert {k: v for k, v in mine.environ.items() if k not in skipped} == {
        k: v for k, v in theirs.environ.items() if k not in skipped
    }
    assert mine.environ["wsgi.errors"] is theirs.environ["wsgi.errors"]
    for read in ("method", "path", "raw_path", "raw_url", "url_root", "content_type", "mimetype", "data"):
        assert getattr(mine, read) == getattr(theirs, read), read
    assert list(mine.headers) == list(theirs.headers)
    assert mine.form.to_dict(flat=False) == theirs.form.to_dict(flat=False)
    assert mine.args.to_dict(flat=False) == theirs.args.to_dict(flat=False)


def test_a_request_direct_request_does_not_build_goes_to_normalize_request() -> None:
    from moto.core import request as moto_request

    for url, body in [
        ("https://example.com/path", b"{}"),
        ("https://example.com/?q=1", b"{}"),
        ("https://example.com/", None),
    ]:
        request = direct_integrations.direct_request(_prepared(url, body, {"Content-Type": "application/json"}))
        assert type(request) is moto_request.Request, url
    with pytest.raises(ValueError):  # werkzeug refuses a header value with a line break, both ways
        direct_integrations.direct_request(_prepared("https://example.com/", b"{}", {"X-Bad": "a\nb"}))

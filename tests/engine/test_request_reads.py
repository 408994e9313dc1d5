"""A request's access key id and Step Functions' backend are what moto reads for it whether they are read
once per request (the `request_reads` speed-up) or on every use as moto does: compared with moto's own
reads, and counted through the API on the embedded engine with the speed-up on (the suite's) and off
(`ONCEFLOW_SPEEDUPS_OFF=request_reads` runs this file the other way).

AWS: a request's access key id is the one its signature's credential scope names (SigV4) or its
AWSAccessKeyId parameter (SigV2)
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-signing-elements.html).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from moto.core.responses import BaseResponse
from moto.stepfunctions.responses import StepFunctionResponse, get_backend

from onceflow.engine.speedups import REQUEST_READS, request_reads
from onceflow.engine.speedups.request_reads import access_key_read_once, backend_looked_up_once, body_parsed_once
from tests.engine.harness import Account

# This module is imported before any engine starts: moto's own reads.
MOTO_ACCESS_KEY = BaseResponse.__dict__["get_access_key"]
MOTO_BACKEND = StepFunctionResponse.__dict__["stepfunction_backend"].fget
MOTO_GET_PARAM = BaseResponse.__dict__["_get_param"]
KEY_PATTERN = BaseResponse.access_key_regex

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential={}/20261207/us-east-1/states/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=4f0c7a25fba0d2b1d3f0c9a8e7d6c5b4"
)
READS: list[tuple[dict[str, str], dict[str, list[str]]]] = [
    ({"Authorization": SIGV4.format("AKIAIOSFODNN7EXAMPLE")}, {}),
    ({"Authorization": SIGV4.format("ASIAQZ4ZJXK2EXAMPLE7")}, {"AWSAccessKeyId": ["AKIAOTHERKEY00000001"]}),
    ({"Authorization": SIGV4.format("testing")}, {}),  # no key id of 20 characters: moto's default
    ({"Authorization": SIGV4.format("testing")}, {"AWSAccessKeyId": ["AKIASIGV2KEY00000001"]}),
    ({}, {"AWSAccessKeyId": ["AKIASIGV2KEY00000002"]}),
    ({}, {}),
]


class _CountingPattern:
    """moto's access key pattern, counting its searches."""

    def __init__(self, pattern: re.Pattern[str]):
        self.pattern = pattern
        self.searches = 0

    def search(self, text: str) -> Any:
        self.searches += 1
        return self.pattern.search(text)


def _response(headers: dict[str, str], querystring: dict[str, list[str]]) -> tuple[StepFunctionResponse, Any]:
    response = StepFunctionResponse()
    response.headers = dict(headers)
    response.querystring = dict(querystring)
    counting = _CountingPattern(KEY_PATTERN)
    response.access_key_regex = counting  # type: ignore[assignment]
    return response, counting


@pytest.mark.parametrize(("headers", "querystring"), READS)
def test_the_access_key_read_once_is_moto_s_and_its_header_searched_once(
    headers: dict[str, str], querystring: dict[str, list[str]]
) -> None:
    read_once = access_key_read_once(MOTO_ACCESS_KEY)
    response, counting = _response(headers, querystring)
    expected = MOTO_ACCESS_KEY(_response(headers, querystring)[0])
    assert read_once(response) == expected
    assert read_once(response) == expected
    assert counting.searches == (1 if "Authorization" in headers else 0)


def test_another_header_or_parameter_is_read_again() -> None:
    read_once = access_key_read_once(MOTO_ACCESS_KEY)
    response, counting = _response(*READS[0])
    assert read_once(response) == "AKIAIOSFODNN7EXAMPLE"
    response.headers["Authorization"] = SIGV4.format("AKIASECONDKEY0000001")
    assert read_once(response) == "AKIASECONDKEY0000001"
    del response.headers["Authorization"]
    response.querystring["AWSAccessKeyId"] = ["AKIASIGV2KEY00000003"]
    assert read_once(response) == "AKIASIGV2KEY00000003"
    assert counting.searches == 2


def test_the_backend_looked_up_once_is_moto_s_for_the_account_and_region(embedded_aws: Any) -> None:
    calls: list[tuple[str, str]] = []

    def counted(self: StepFunctionResponse) -> Any:
        calls.append((self.current_account, self.region))
        return MOTO_BACKEND(self)

    looked_up = backend_looked_up_once(counted)
    response = StepFunctionResponse()
    response.current_account, response.region = "123456789012", "us-east-1"
    first = looked_up(response)
    assert first is get_backend("123456789012", "us-east-1")
    assert looked_up(response) is first
    response.region = "eu-west-1"
    assert looked_up(response) is get_backend("123456789012", "eu-west-1")
    assert calls == [("123456789012", "us-east-1"), ("123456789012", "eu-west-1")]


@pytest.fixture
def counted_key_searches(monkeypatch: pytest.MonkeyPatch) -> Iterator[_CountingPattern]:
    counting = _CountingPattern(KEY_PATTERN)
    monkeypatch.setattr(BaseResponse, "access_key_regex", counting)
    yield counting


def test_a_request_through_the_api_searches_its_header_as_often_as_the_switch_says(
    embedded_aws: Any, counted_key_searches: _CountingPattern
) -> None:
    """Each DescribeStateMachine and StartExecution reads its key and account as moto does: the
    answers are the state machine and execution of the account the credentials name."""
    sfn = Account(embedded_aws).sfn
    definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
    machine = sfn.create_state_machine(
        name="request-reads", definition=definition, roleArn="arn:aws:iam::123456789012:role/request-reads"
    )["stateMachineArn"]
    try:
        before = counted_key_searches.searches
        described = sfn.describe_state_machine(stateMachineArn=machine)
        searches = counted_key_searches.searches - before
        assert described["stateMachineArn"] == machine
        assert searches == (1 if REQUEST_READS in embedded_aws.speedups else 2)
        execution = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
        assert sfn.describe_execution(executionArn=execution)["stateMachineArn"] == machine
    finally:
        sfn.delete_state_machine(stateMachineArn=machine)


BODIES: list[Any] = [
    '{"stateMachineArn": "arn:1", "maxResults": 5, "tags": [{"key": "k"}], "filter": {"a": [1]}, "none": null}',
    b'{"stateMachineArn": "arn:bytes"}',
    "not json",
    "[1, 2]",
    '"a string"',
    "null",
    "",
    None,
    {"stateMachineArn": "a dict (DynamoDB's handler keeps its parameters as its body)"},
]
PARAMETERS = ["stateMachineArn", "maxResults", "tags", "filter", "none", "missing", "fromQuery", "fromPath"]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_a_parameter_read_from_a_body_parsed_once_is_moto_s(monkeypatch: pytest.MonkeyPatch, body: Any) -> None:
    """Each parameter is what moto's _get_param answers (the query string first, then the JSON body,
    then the path's parameters, then the default), the body parsed once however many are read; a list
    or object answered is the caller's own."""
    read_once = body_parsed_once(MOTO_GET_PARAM)

    def response() -> StepFunctionResponse:
        answer = StepFunctionResponse()
        answer.querystring = {"fromQuery": ["q"]}
        answer.body = body
        answer.uri_match = {"fromPath": "p", "stateMachineArn": "from the path"}
        return answer

    moto = response()
    expected = [MOTO_GET_PARAM(moto, name, "default") for name in PARAMETERS * 2]
    parses: list[Any] = []
    loads = json.loads
    monkeypatch.setattr(request_reads.json, "loads", lambda text: parses.append(text) or loads(text))
    mine = response()
    assert [read_once(mine, name, "default") for name in PARAMETERS * 2] == expected
    assert len(parses) == (0 if body is None else 1)
    tags = read_once(mine, "tags")
    if isinstance(tags, list):
        tags.append("changed by its caller")
        assert read_once(mine, "tags") == [{"key": "k"}]
    mine.body = '{"stateMachineArn": "another body"}'
    assert read_once(mine, "stateMachineArn") == "another body"

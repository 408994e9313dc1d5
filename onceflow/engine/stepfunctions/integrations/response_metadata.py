"""The optimised SQS, SNS, DynamoDB and Step Functions (states:startExecution) integrations' results carry the service's HTTP response
metadata, as AWS's do: `SdkHttpMetadata` (the response's headers, once as lists in `AllHttpHeaders`
and once as strings in `HttpHeaders`, and `HttpStatusCode`) and `SdkResponseMetadata`
(`RequestId`). moto's integrations drop the response metadata; a workflow that reads, say,
`$.SdkHttpMetadata.HttpStatusCode`, or whose output carries the whole result, saw something else
than on AWS. `aws-sdk:*` integrations carry none, on AWS as here.

The headers are the ones AWS's recordings show for each service, `Content-Length` is the length of
the body the service would have sent (compact JSON for SQS and DynamoDB, the query protocol's XML
for SNS), DynamoDB's `x-amz-crc32` its CRC32. StartExecution's body is the JSON protocol's
`{"executionArn":…,"startDate":…}` with the date as AWS's service writes epoch seconds
(`1.762432553123E9`, trailing zeros dropped): inferred from AWS's two recordings, made 30 s apart
for names of the same length, whose Content-Length is 164 and 163 (the date's digits vary). Mocked results (Step Functions Local's mock config,
TestState's `mock`) are the caller's own text and carry none.

AWS's recordings: LocalStack's services/test_sqs_task_service.snapshot.json (test_send_message),
services/test_sns_task_service.snapshot.json (test_publish_base),
services/test_dynamodb_task_service.snapshot.json (test_base_integrations),
services/test_sfn_task_service.snapshot.json (test_start_execution_input_json).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import email.utils
import json
import random
import string
import uuid
import zlib
from collections.abc import Callable, Sequence
from typing import Any
from xml.sax.saxutils import escape

from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb import (
    StateTaskServiceDynamoDB,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
    StateTaskServiceSfn,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns import (
    StateTaskServiceSns,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs import (
    StateTaskServiceSqs,
)

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
Headers = dict[str, str]

JSON_1_0 = "application/x-amz-json-1.0"
SNS_XMLNS = "http://sns.amazonaws.com/doc/2010-03-31/"
_DYNAMODB_REQUEST_ID = string.ascii_uppercase + string.digits


def moto_needs() -> list[Need]:
    return [
        need(service, "_eval_service_task", "env", "resource_runtime_part", "normalised_parameters")
        for service in (StateTaskServiceSqs, StateTaskServiceSns, StateTaskServiceDynamoDB, StateTaskServiceSfn)
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these (service_errors.py wraps SQS's call too)."""
    return [
        (service, "_eval_service_task", _with_metadata(current(before, service, "_eval_service_task"), *how))
        for service, how in (
            (StateTaskServiceSqs, (_sqs_headers, _uuid)),
            (StateTaskServiceSns, (_sns_headers, _uuid)),
            (StateTaskServiceDynamoDB, (_dynamodb_headers, _dynamodb_request_id)),
            (StateTaskServiceSfn, (_sfn_headers, _uuid)),
        )
    ]


def _with_metadata(
    original: Any, headers_of: Callable[[str, dict[str, Any], str], Headers], request_id_of: Callable[[], str]
) -> Any:
    def _eval_service_task(
        self: Any,
        env: Any,
        resource_runtime_part: Any,
        normalised_parameters: dict,
        state_credentials: Any = None,
    ) -> None:
        original(self, env, resource_runtime_part, normalised_parameters, state_credentials)
        response = env.stack[-1]
        if isinstance(response, dict):
            request_id = request_id_of()
            headers = headers_of(self.resource.api_action, response, request_id)
            response.update(metadata(headers, request_id))

    return _eval_service_task


def metadata(headers: Headers, request_id: str) -> dict[str, Any]:
    """What AWS adds to an optimised integration's result: the headers twice, and the request id."""
    return {
        "SdkHttpMetadata": {
            "AllHttpHeaders": {name: [value] for name, value in headers.items()},
            "HttpHeaders": dict(headers),
            "HttpStatusCode": 200,
        },
        "SdkResponseMetadata": {"RequestId": request_id},
    }


def _date() -> str:
    return email.utils.format_datetime(datetime.datetime.now(datetime.UTC), usegmt=True)


def _json_body(response: dict[str, Any]) -> bytes:
    """The JSON protocol's body for a parsed response: compact, UTF-8, blobs in base64."""

    def wire(value: Any) -> Any:
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        if isinstance(value, datetime.datetime):
            return value.timestamp()
        raise TypeError(f"{type(value).__name__} in a service response")

    return json.dumps(response, separators=(",", ":"), ensure_ascii=False, default=wire).encode()


def _sqs_headers(action: str, response: dict[str, Any], request_id: str) -> Headers:
    return _json_headers(len(_json_body(response)), request_id)


def _json_headers(length: int, request_id: str) -> Headers:
    """The JSON protocol's headers of SQS and Step Functions, as AWS's recordings show them."""
    return {
        "Content-Length": str(length),
        "Content-Type": JSON_1_0,
        "Date": _date(),
        "connection": "keep-alive",
        "x-amzn-RequestId": request_id,
    }


def _sfn_headers(action: str, response: dict[str, Any], request_id: str) -> Headers:
    """StartExecution's body, its startDate as AWS's service writes epoch seconds."""
    rest = {key: value for key, value in response.items() if key != "startDate"}
    body = _json_body(rest)
    if "startDate" in response:
        date = b'"startDate":' + _java_seconds(response["startDate"]).encode()
        body = body[:-1] + (b"," if rest else b"") + date + b"}"
    return _json_headers(len(body), request_id)


def _java_seconds(when: datetime.datetime) -> str:
    """Epoch seconds to the millisecond as AWS's JSON writes them: 1.762432553123E9."""
    seconds = decimal.Decimal(round(when.timestamp() * 1000)).scaleb(-3).normalize()
    _, digits, exponent = seconds.as_tuple()
    text = "".join(map(str, digits))
    return f"{text[0]}.{text[1:] or '0'}E{len(digits) + int(exponent) - 1}"


def _sns_headers(action: str, response: dict[str, Any], request_id: str) -> Headers:
    name = action[:1].upper() + action[1:]
    members = [f"    <{key}>{escape(str(value))}</{key}>" for key, value in response.items()]
    body = "\n".join(
        [
            f'<{name}Response xmlns="{SNS_XMLNS}">',
            f"  <{name}Result>",
            *members,
            f"  </{name}Result>",
            "  <ResponseMetadata>",
            f"    <RequestId>{request_id}</RequestId>",
            "  </ResponseMetadata>",
            f"</{name}Response>",
            "",
        ]
    )
    return {
        "Content-Length": str(len(body.encode())),
        "Content-Type": "text/xml",
        "Date": _date(),
        "connection": "keep-alive",
        "x-amzn-RequestId": request_id,
    }


def _dynamodb_headers(action: str, response: dict[str, Any], request_id: str) -> Headers:
    body = _json_body(response)
    # GetItem's request id header is lower case in AWS's recordings (2025), the other actions' not.
    request_id_header = "x-amzn-requestid" if action.lower() == "getitem" else "x-amzn-RequestId"
    return {
        "Connection": "keep-alive",
        "Content-Length": str(len(body)),
        "Content-Type": JSON_1_0,
        "Date": _date(),
        "Server": "Server",
        "x-amz-crc32": str(zlib.crc32(body)),
        request_id_header: request_id,
    }


def _uuid() -> str:
    return str(uuid.uuid4())


def _dynamodb_request_id() -> str:
    """DynamoDB's request ids: 52 upper-case letters and digits."""
    return "".join(random.choices(_DYNAMODB_REQUEST_ID, k=52))

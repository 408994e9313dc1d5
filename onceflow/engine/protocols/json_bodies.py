"""A JSON-protocol request's body is its parameters, never a query string.

AWS's JSON protocols (`awsJson1_0`, `awsJson1_1`: DynamoDB, SQS, Step Functions, EventBridge, Logs...)
send an operation's input as the JSON body of a POST to `/`, the operation named by X-Amz-Target
(https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html). moto's `BaseResponse.setup_class`
reads any body as a query string when the URL carries none, and its handlers read `Action` and, for
services that do not parse their parameters from the model (Step Functions), every parameter from
that query string first. So a value holding `&name=` or `&Action=` changed the request: a
StartExecution whose input held `"a&name=b"` was refused (InvalidName: the name read from the
input's text), a DynamoDB item whose value held `&Action=ListTables` was answered as ListTables.

Here the body of a request whose Content-Type is a JSON protocol's is not read as a query string:
the request's query string is its URL's (empty for every JSON-protocol call).
"""

from __future__ import annotations

import contextvars
import urllib.parse
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import moto.core.responses as moto_responses
from moto.core.responses import BaseResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
JSON_PROTOCOL_TYPES = ("application/x-amz-json-1.0", "application/x-amz-json-1.1")
_READING_JSON_BODY = contextvars.ContextVar("onceflow_reading_json_body", default=False)


def moto_needs() -> list[Need]:
    return [
        need(BaseResponse, "setup_class", "request", "full_url", "headers", "use_raw_body"),
        need(moto_responses, "parse_qsl"),  # what setup_class reads a body with
        need(moto_responses, "_decode_dict", "d"),
    ]


def is_json_protocol(content_type: str | None) -> bool:
    return bool(content_type) and content_type.startswith(JSON_PROTOCOL_TYPES)  # type: ignore[union-attr]


# What setup_class reads of a JSON-protocol body: a placeholder pair, which keeps moto from falling back
# to the headers as the query string (a walk of every header) and which setup_class's wrapper
# replaces by the URL's query string before anything else reads it.
_PLACEHOLDER: tuple[tuple[str, str], ...] = (("", ""),)


def _parse_qsl(qs: Any, *args: Any, **kwargs: Any) -> Any:
    """urllib's parse_qsl; for a JSON-protocol body (setup_class's only use of it), the placeholder."""
    if _READING_JSON_BODY.get():
        return _PLACEHOLDER
    return urllib.parse.parse_qsl(qs, *args, **kwargs)


def patches(before: Iterable[Patch]) -> list[Patch]:
    moto_setup_class = current(before, BaseResponse, "setup_class")

    def setup_class(
        self: BaseResponse, request: Any, full_url: str | None = None, headers: Any = None, use_raw_body: Any = None
    ) -> None:
        if not is_json_protocol(request.headers.get("Content-Type")):
            return moto_setup_class(self, request, full_url, headers, use_raw_body)
        reading = _READING_JSON_BODY.set(True)
        try:
            moto_setup_class(self, request, full_url, headers, use_raw_body)
        finally:
            _READING_JSON_BODY.reset(reading)
        # The URL's query string is the request's.
        query = self.parsed_url.query
        parsed = OrderedDict(urllib.parse.parse_qs(query, keep_blank_values=True)) if query else OrderedDict()
        self.querystring = self.data = moto_responses._decode_dict(parsed) if parsed else parsed
        return None

    return [(moto_responses, "parse_qsl", _parse_qsl), (BaseResponse, "setup_class", setup_class)]

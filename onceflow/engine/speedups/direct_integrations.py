"""The `direct_integrations` speed-up: a Task's JSON- or query-protocol request reaches moto's response
class from botocore's `before-call` event, as botocore's own Stubber answers a call there.

With in_process_integrations alone, every integration call still goes the whole way through botocore
after its request is built: the request signed (SigV4: a canonical request, three HMACs), the
`before-send` event that hands it to moto's BotocoreStubber, which matches its URL against every
backend's patterns (hundreds of regular expressions), then the response wrapped, its checksums and
retries considered. About a fifth of a pipeline execution's server CPU was botocore's client side
(`benchmarks/peer_cpu.py --profile`, issue 33).

Here the request is built by botocore as before (parameters, endpoint, serialiser: the same body and
headers), then prepared and handed to the moto method that serves its URL (found once per URL, as the
stubber finds it), under the server's request lock; its response is parsed by the client's own parser,
modelled error fields included, and botocore carries on from `after-call` (so SQS's query-compatible
error codes are still applied) to the exception it raises for an error status. Nothing is signed: the
Authorization header carries the credential scope, the role's access key and the region, which is all
the engine reads of it (engine/iam/identities.py, moto's region); nothing in process checks a signature.

moto's request is built from botocore's directly (direct_request: the WSGI environ werkzeug's
EnvironBuilder would build, in a request class that reads a JSON body without werkzeug's form
parser), not through normalize_request's builder: about 66 -> 21 µs a call.

Only POST requests of the JSON and query protocols take this lane (DynamoDB, SNS, SQS, Step Functions,
EventBridge...): their request is a body sent to `/`. S3's REST requests, streaming bodies and anything
else go on through before-send and the stubber.
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime
from typing import Any

import moto.backend_index as backend_index
import moto.backends as backends
import moto.core.request as moto_request
from botocore.awsrequest import AWSResponse, create_request_object
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.base_backend import BackendDict
from moto.core.botocore_stubber import MockRawResponse
from moto.core.exceptions import HTTPException

from onceflow.engine.bookkeeping.once_per_key import once_per_key
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import handed_params
from onceflow.engine.speedups.json_lane import LaneRequest
from onceflow.engine.speedups.wsgi_environ import root_environ

PROTOCOLS = frozenset({"json", "query"})
NOT_SIGNED = "0" * 64  # the Signature field's place: nothing in process verifies one


def unsigned_authorization(scope: str, signed_headers: str) -> str:
    """A SigV4 Authorization header with `Signature=` zeros: what in-process calls carry."""
    return f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders={signed_headers}, Signature={NOT_SIGNED}"


def moto_needs() -> list[Need]:
    return [
        need(backend_index, "backend_url_patterns"),
        need(backends, "get_backend", "name"),
        need(moto_request, "normalize_request", "request"),
        need(moto_request, "PRESERVED_HEADER_NAMES_ENVIRON_KEY"),
        need(moto_request, "environ_key_for_header", "header_name"),
        need(moto_request, "should_preserve_original_header_name", "header_name"),
        need(HTTPException, "get_headers"),
        need(HTTPException, "get_body"),
        need(MockRawResponse, "__init__", "response_input"),
    ]


@once_per_key
def _handler_for(url: str) -> Any:
    """The moto method that answers `url` (scheme, host and path), found as BotocoreStubber finds it."""
    for service, pattern in backend_index.backend_url_patterns:
        if pattern.match(url):
            backend_dict = backends.get_backend(service)  # type: ignore[call-overload]
            if isinstance(backend_dict, BackendDict):
                regions = backend_dict[DEFAULT_ACCOUNT_ID]
                backend = regions["us-east-1"] if "us-east-1" in regions else regions["aws"]
            else:
                backend = backend_dict["global"]
            for url_pattern, method in backend.urls.items():
                if re.compile(url_pattern).match(url):
                    return method
    return None


class DirectCall:
    """A `before-call` handler for one JSON- or query-protocol integration client: answers its calls
    from moto's response classes, or returns None (the call then goes on as before)."""

    def __init__(
        self,
        client: Any,
        request_lock: threading.RLock,
        handing: handed_params.HandingSerializer | None = None,
        hands_forms: bool = False,
    ):
        self._endpoint = client._endpoint
        self._parser = self._endpoint._response_parser_factory.create_parser(
            client.meta.service_model.resolved_protocol
        )
        self._request_lock = request_lock
        self._handing = handing
        self._hands_forms = hands_forms

    def __call__(self, model: Any, params: dict[str, Any], request_signer: Any, **_: Any) -> Any:
        if handed_params.HANDED in params:
            set_up = handed_params.json_set_up(model.name, params[handed_params.HANDED])
            answer = self._handed(model, params, request_signer, set_up)
            if answer is not None:
                return answer
            self._handing.write_body(params, model)  # type: ignore[union-attr]
        elif self._hands_forms and type(params["body"]) is dict:
            form = handed_params.form_of(params["body"])
            if form is not None:
                answer = self._handed(model, params, request_signer, handed_params.form_set_up(form))
                if answer is not None:
                    return answer
        if params["method"] != "POST" or model.has_streaming_input or model.has_streaming_output:
            return None
        url = params["url"]
        handler = _handler_for(url.split("?", 1)[0])
        if handler is None:
            return None
        request = create_request_object(params)
        request.headers["Authorization"] = _credential_scope(request_signer)
        prepared = direct_request(request.prepare())
        with self._request_lock:
            try:
                status, headers, body = handler(prepared, prepared.raw_url, prepared.headers)
            except HTTPException as error:
                status, headers, body = error.code, error.get_headers(), error.get_body()
        return self._parsed(url, model, int(status), headers, body)

    def _handed(
        self, model: Any, params: dict[str, Any], request_signer: Any, set_up: handed_params.SetUp
    ) -> tuple[AWSResponse, dict] | None:
        """The call answered by moto's response class set up by `set_up` from what the request
        carries (handed_params.py), or None if that class or the parameters cannot be handed over."""
        url = params["url"]
        if not url.endswith("/") or "?" in url or not handed_params.moto_auth_is_off():
            return None
        handler = _handler_for(url)
        response_class = handed_params.handed_class(handler) if handler is not None else None
        if response_class is None:
            return None
        environ = handed_params.header_environ(url, params["headers"], _credential_scope(request_signer))
        if environ is None:
            return None
        response = response_class()
        with self._request_lock:
            try:
                set_up(response, url, environ)
            except handed_params.Unconverted:
                return None
            try:
                status, answer_headers, body = response.call_action()
            except HTTPException as error:
                status, answer_headers, body = error.code, error.get_headers(), error.get_body()
        return self._parsed(url, model, int(status), answer_headers, body)

    def _parsed(self, url: str, model: Any, status: int, headers: Any, body: Any) -> tuple[AWSResponse, dict]:
        raw = body.encode("utf-8") if isinstance(body, str) else body or b""
        http = AWSResponse(url, status, headers or {}, MockRawResponse(raw))  # its headers: a HeadersDict
        response = {
            "headers": http.headers,
            "status_code": status,
            "body": raw,
            "context": {"operation_name": model.name},
        }
        parsed = self._parser.parse(response, model.output_shape)
        if status >= 300:
            self._endpoint._add_modeled_error_fields(response, parsed, model, self._parser)
        if "ResponseMetadata" in parsed:
            parsed["ResponseMetadata"]["RetryAttempts"] = 0  # as botocore's endpoint sets it
        return http, parsed


class DirectRequest(LaneRequest):
    """moto's request as normalize_request makes it from botocore's (not from a WSGI server), its
    URL root worked out once per endpoint and a body that is not a form read without werkzeug's
    form parser (json_lane.LaneRequest)."""

    from_wsgi_server = False


def direct_request(prepared: Any) -> moto_request.Request:
    """moto_request.normalize_request(prepared): the same WSGI environ werkzeug's EnvironBuilder
    makes from botocore's method, URL, headers and body, built directly (wsgi_environ.py: the
    builder, its header objects and its URL parsing were about a third of an integration call's
    dispatch). A request that is not a plain POST of a body to `/` goes to normalize_request."""
    headers = [(name, value) for name, value in prepared.headers.items() if name.lower() != "transfer-encoding"]
    environ = root_environ(prepared.method, prepared.url, headers, prepared.body)
    if environ is None:
        return moto_request.normalize_request(prepared)
    environ[moto_request.PRESERVED_HEADER_NAMES_ENVIRON_KEY] = {
        moto_request.environ_key_for_header(name): name
        for name, _ in headers
        if moto_request.should_preserve_original_header_name(name)
    }
    return DirectRequest(environ)


def _credential_scope(request_signer: Any) -> str:
    key = request_signer._credentials.get_frozen_credentials().access_key
    day = datetime.now(UTC).strftime("%Y%m%d")
    scope = f"{key}/{day}/{request_signer._region_name}/{request_signer._signing_name}/aws4_request"
    return unsigned_authorization(scope, "host")


def register(client: Any, request_lock: threading.RLock, handed: bool = False) -> None:
    """Answer `client`'s calls directly if its service speaks JSON or query; registered last, so that
    any other `before-call` handler of the client runs first. `handed`: its JSON calls' parameters
    handed to moto without a body (handed_params.py)."""
    service = client.meta.service_model
    if service.resolved_protocol not in PROTOCOLS:
        return
    handing = None
    if handed and service.resolved_protocol == "json":
        handing = handed_params.HandingSerializer(client._serializer)
        client._serializer = handing
    hands_forms = handed and service.resolved_protocol == "query"
    client.meta.events.register_last(
        f"before-call.{service.service_id.hyphenize()}", DirectCall(client, request_lock, handing, hands_forms)
    )

"""The `handed_params` speed-up (with direct_integrations): a Task's call to a JSON- or query-protocol
service hands moto's response class the parameters moto would have read from botocore's request
body, without the round trip of the body through text.

With direct_integrations alone, an integration call's parameters still go through text: botocore's
serializer walks the input shape and writes JSON (or a form, URL-encoded), direct_integrations builds
a request around it, and moto's setup_class reads it back (the WSGI request, werkzeug's form parser,
the body as a query string, the JSON, the walk of the shape that `parse_parameters` makes). That was
about a third of a DynamoDB UpdateItem integration call and a fifth of an SNS Publish.

Taken by a service whose moto response class parses its parameters automatically into a plain dict
(`automated_parameter_parsing`: DynamoDB, SQS, SNS) and is served by moto's plain `dispatch`:
- JSON protocol (DynamoDB, SQS): the client's serializer writes the request without its body (its
  method, URL path and headers: the X-Amz-Target and Content-Type moto reads) and carries the API
  parameters beside it (`HandingSerializer`); direct_integrations' `before-call` handler converts
  them into the parameters moto's parser would have made of botocore's body (`moto_params`: a plan
  per input shape, made once, with moto's own conversions of numbers and blobs and botocore's of
  what it writes for them) and sets the response object up (`set_up`);
- query protocol (SNS): botocore's body is a flat dict before it is URL-encoded; the form werkzeug
  would read back from it is made directly (`form_of`: text as it is, a number as urlencode writes
  it) and moto's own `parse_parameters` reads it (`form_set_up`);
- the response object is set up as `setup_class` sets it up for that request, and its `call_action`
  runs, the engine's wrappers (IAM, validation) included;
- anything not converted exactly (a value not of JSON's types, an unknown member, a null where
  botocore would fail, a timestamp, a form near werkzeug's limits) and any URL no such class serves
  goes with its body after all, so it fails as it failed.

What a handed response object does not get, and moto's handlers for these services do not read:
`normalized_request` (the request object) and, for JSON, a `body`/`raw_body` (empty: DynamoDB's
handlers read `self.body` only after call_action set it to the parameters). Its query string is the
URL's (none), as protocols/json_bodies.py makes it for a JSON body; its headers are the ones moto
reads from the request, less Content-Length. tests/engine/test_handed_params.py compares a handed
response object with the one setup_class makes, attribute by attribute, the parameters with moto's
parse of botocore's body for every operation of DynamoDB and SQS, and calls' answers both ways.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

from botocore.model import Shape
from botocore.serialize import JSONSerializer
from moto import settings
from moto.core import parse
from moto.core.responses import BaseResponse
from moto.core.utils import get_service_model, utcnow
from moto.iam.models import mark_account_as_visited
from moto.utilities.utils import get_partition
from werkzeug.datastructures import EnvironHeaders, ImmutableMultiDict
from werkzeug.http import http_date

from onceflow.engine.bookkeeping.once_per_key import once_per_key
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups.wsgi_environ import header_entries

HANDED = "onceflow_handed_params"  # the request dict's key for the API parameters it carries instead of a body
Plan = Callable[[Any], Any]
SetUp = Callable[[BaseResponse, str, dict[str, str]], None]  # a response object, the URL, the header environ
# werkzeug's limits on a URL-encoded form (max_form_parts, max_form_memory_size): a body near them is
# left to werkzeug, which refuses one past them.
_MOST_FORM_PARTS = 900
_MOST_FORM_CHARACTERS = 100_000
_JSON_SCALARS = (str, int, float, bool)
_EMPTY_FORM: ImmutableMultiDict = ImmutableMultiDict()
# Types botocore's JSON serializer writes as they are (_default_serialize), so a null member is
# written as null and moto's parser leaves it out.
_WRITTEN_AS_IS = frozenset({"string", "boolean", "integer", "long", "short", "byte", "float", "double"})


class Unconverted(Exception):
    """A value the plan does not convert exactly as the round trip through text would."""


def moto_needs() -> list[Need]:
    return [
        need(BaseResponse, "setup_class", "request", "full_url", "headers", "use_raw_body"),
        need(BaseResponse, "dispatch"),
        need(BaseResponse, "call_action"),
        need(BaseResponse, "get_region_from_url", "request", "full_url"),
        need(BaseResponse, "get_access_key"),
        need(BaseResponse, "get_current_account"),
        need(BaseResponse, "PROTOCOL_PARSER_MAP_TYPE"),
        need(BaseResponse, "parse_parameters", "request"),  # a form's parameters, parsed by moto
        need(BaseResponse, "_get_action"),
        need(parse.BaseJSONParser, "_parse_integer"),
        need(parse.BaseJSONParser, "_parse_float", "shape", "value"),
        need(parse, "default_blob_parser", "value"),
        need(settings, "INITIAL_NO_AUTH_ACTION_COUNT"),
    ]


def takes(operation_model: Any) -> bool:
    """Whether an operation's calls may be serialized without a body: a POST of JSON to `/`, no
    streaming, no host prefix (which botocore expands from the parameters)."""
    return (
        operation_model.service_model.resolved_protocol == "json"
        and operation_model.http.get("method", "POST") == "POST"
        and operation_model.http.get("requestUri", "/") == "/"
        and operation_model.endpoint is None
        and not operation_model.has_streaming_input
        and not operation_model.has_streaming_output
    )


class HandingSerializer:
    """A client's serializer that writes a request it may hand over without its body: botocore's
    request for no parameters, carrying the API parameters under HANDED."""

    def __init__(self, serializer: Any):
        self.serializer = serializer
        self._bodiless: dict[Any, dict[str, Any] | None] = {}  # by operation model

    def serialize_to_request(self, parameters: Any, operation_model: Any) -> dict[str, Any]:
        bodiless = self._bodiless.get(operation_model, False)
        if bodiless is False:
            taken = takes(operation_model)
            bodiless = self.serializer.serialize_to_request({}, operation_model) if taken else None
            self._bodiless[operation_model] = bodiless
        if bodiless is None:
            return self.serializer.serialize_to_request(parameters, operation_model)
        # The dicts botocore adds to (headers, query string) are the request's own.
        request = {**bodiless, "headers": dict(bodiless["headers"]), "query_string": dict(bodiless["query_string"])}
        request[HANDED] = parameters
        return request

    def write_body(self, request: dict[str, Any], operation_model: Any) -> None:
        """Give a request taken for handing the body botocore writes for its parameters, after all."""
        parameters = request.pop(HANDED)
        request["body"] = self.serializer.serialize_to_request(parameters, operation_model)["body"]


@once_per_key
def handed_class(handler: Any) -> type[BaseResponse] | None:
    """The response class whose plain `dispatch` is `handler`, if it parses its parameters
    automatically into a plain dict; else None."""
    owner = getattr(handler, "__self__", None)
    if not (
        isinstance(owner, type)
        and issubclass(owner, BaseResponse)
        and getattr(handler, "__func__", None) is BaseResponse.dispatch.__func__
        and owner._dispatch is BaseResponse._dispatch
        and owner.setup_class is BaseResponse.setup_class
        and owner.PROTOCOL_PARSER_MAP_TYPE is dict
    ):
        return None
    return owner if owner().automated_parameter_parsing else None


def moto_auth_is_off() -> bool:
    """moto's own signature checks are off (the default): they would refuse an unsigned call anyway."""
    return math.isinf(settings.INITIAL_NO_AUTH_ACTION_COUNT)


def set_up(response: BaseResponse, url: str, environ: dict[str, str], params: dict[str, Any]) -> None:
    """What BaseResponse.setup_class sets for botocore's POST of a JSON body to `url` (`/`) with the
    headers in `environ` (header_environ), with `params` as moto's parse of that body, less what the
    module's docstring lists."""
    _set_up_request(response, url, environ, _EMPTY_FORM, OrderedDict())
    response.params = params
    _set_up_caller(response, environ)


def json_set_up(operation: str, api_params: Any) -> SetUp:
    """Set a response object up with moto's parse of the JSON body botocore would write for
    `api_params` (raises Unconverted where the plan cannot make it exactly)."""

    def set_up_json(response: BaseResponse, url: str, environ: dict[str, str]) -> None:
        params = moto_params(type(response), response.boto3_service_name, operation, api_params)
        set_up(response, url, environ, params)

    return set_up_json


def form_of(body: dict[Any, Any]) -> ImmutableMultiDict | None:
    """The form werkzeug reads from botocore's query-protocol body (a flat dict it URL-encodes), or
    None for one this cannot read as werkzeug would (a value neither text nor a number, text UTF-8
    cannot encode, a body near werkzeug's limits on a form's parts and size)."""
    pairs = []
    size = 0
    for key, value in body.items():
        kind = type(value)
        if kind is not str:
            if kind is not int and kind is not float:
                return None
            value = str(value)  # what urlencode writes for a number
        if type(key) is not str or not _encodable(key) or not _encodable(value):
            return None
        size += len(key) + len(value)
        pairs.append((key, value))
    if len(pairs) > _MOST_FORM_PARTS or size > _MOST_FORM_CHARACTERS:
        return None
    return ImmutableMultiDict(pairs)


def form_set_up(form: ImmutableMultiDict) -> SetUp:
    """What BaseResponse.setup_class sets for botocore's POST of a URL-encoded `form` to `url` (`/`):
    moto's own parse of the form's values into its parameters."""

    def set_up_form(response: BaseResponse, url: str, environ: dict[str, str]) -> None:
        querystring: dict[str, Any] = OrderedDict((key, [value]) for key, value in form.items())
        _set_up_request(response, url, environ, form, querystring)
        if response.automated_parameter_parsing and response._get_action():
            content_type = environ.get("CONTENT_TYPE")
            request = SimpleNamespace(method="POST", values=form, headers=response.headers, data=b"", path="/")
            request.content_type = content_type
            response.parse_parameters(request)  # type: ignore[arg-type]
        _set_up_caller(response, environ)

    return set_up_form


def _set_up_request(
    response: BaseResponse, url: str, environ: dict[str, str], form: ImmutableMultiDict, querystring: dict[str, Any]
) -> None:
    parsed_url = _parsed_url(url)
    response.is_werkzeug_request = False
    response.parsed_url = parsed_url
    response.body = ""
    response.raw_body = b""
    response.form_data = form
    response.uri = url
    response.path = parsed_url.path
    response.raw_path = parsed_url.path
    response.querystring = querystring
    response.data = querystring
    response.method = "POST"
    response.headers = EnvironHeaders(environ)
    response.region = response.get_region_from_url(SimpleNamespace(headers=response.headers), url)
    response.partition = get_partition(response.region)
    response.uri_match = {}
    response.response_headers = {"server": "amazon.com", "date": http_date(utcnow())}


def _set_up_caller(response: BaseResponse, environ: dict[str, str]) -> None:
    response.access_key = _access_key(type(response), environ["HTTP_AUTHORIZATION"])
    response.current_account = response.get_current_account()
    mark_account_as_visited(
        account_id=response.current_account,
        access_key=response.access_key,
        service=response.service_name,  # type: ignore[arg-type]
        region=response.region,
    )


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@once_per_key
def _parsed_url(url: str) -> Any:
    return urlparse(url)


@once_per_key
def _access_key(response_class: type[BaseResponse], authorization: str) -> str:
    """The response class's get_access_key for a handed request: it reads the Authorization header
    and the query string, which a handed request leaves empty."""
    response = response_class()
    response.headers = EnvironHeaders({"HTTP_AUTHORIZATION": authorization})
    response.querystring = OrderedDict()
    return response.get_access_key()


def header_environ(url: str, headers: dict[str, Any], authorization: str) -> dict[str, str] | None:
    """The WSGI environ's header entries werkzeug makes of botocore's request to `url` with these
    headers and `authorization` (less the body's length), or None for a header werkzeug refuses."""
    entries = header_entries([*headers.items(), ("Authorization", authorization)])
    if entries is None:
        return None
    content_type, combined = entries
    environ = {"HTTP_HOST": _parsed_url(url).netloc}
    if content_type is not None:
        environ["CONTENT_TYPE"] = content_type
    environ.update(combined)
    return environ


# --- the parameters moto's parser makes of botocore's body, without the body ------------------------

_PLANS: dict[tuple[type, str], Plan] = {}
_PLANS_LOCK = threading.Lock()


def moto_params(response_class: type[BaseResponse], service_name: str, operation: str, params: Any) -> dict[str, Any]:
    """moto's parse (JSONParser, a dict map type) of the body botocore's JSONSerializer writes for
    `params`; raises Unconverted where the plan would not give exactly that."""
    key = (response_class, operation)
    plan = _PLANS.get(key)
    if plan is None:
        input_shape = get_service_model(service_name).operation_model(operation).input_shape
        plan = make_plan(input_shape) if input_shape is not None else (lambda value: {})
        with _PLANS_LOCK:
            _PLANS[key] = plan
    return plan(params)


def make_plan(shape: Shape) -> Plan:
    """The conversion of a value of `shape` (as given to botocore) into moto's parse of it."""
    made: dict[str, Plan] = {}

    def plan_of(current: Shape) -> Plan:
        if current.name in made:
            return made[current.name]
        kind = current.type_name
        if kind == "structure":
            return _document(current) if current.is_document_type else _structure(current)
        if kind == "list":
            return _list(current)
        if kind == "map":
            return _map(current)
        plan = _SCALARS.get(kind, _as_is)
        made[current.name] = plan
        return plan

    def _structure(current: Any) -> Plan:
        members: dict[str, tuple[int, Plan, bool]] = {}

        def read(value: Any) -> Any:
            if type(value) is not dict:
                raise Unconverted(current.name)
            found = []
            for name, item in value.items():
                member = members.get(name)
                if member is None:
                    raise Unconverted(f"{current.name}.{name}")  # botocore's serializer: KeyError
                position, plan, as_is = member
                if item is None:
                    if as_is:
                        continue  # written as null, left out by moto
                    raise Unconverted(f"{current.name}.{name}")
                found.append((position, name, plan(item)))
            if len(found) > 1:
                found.sort(key=lambda entry: entry[0])  # moto's parse: the shape's order
            return {name: item for _, name, item in found}

        made[current.name] = read
        for position, (name, member_shape) in enumerate(current.members.items()):
            members[name] = (position, plan_of(member_shape), member_shape.type_name in _WRITTEN_AS_IS)
        return read

    def _list(current: Any) -> Plan:
        cells: list[Plan] = []

        def read(value: Any) -> Any:
            if type(value) is not list:
                raise Unconverted(current.name)
            item_plan = cells[0]
            return [_not_null(item_plan, item, current.name) for item in value]

        made[current.name] = read
        cells.append(plan_of(current.member))
        return read

    def _map(current: Any) -> Plan:
        if current.key.type_name != "string":  # moto reads such a key by its type: left to the round trip
            made[current.name] = _unconverted(current.name)
            return made[current.name]
        cells: list[Plan] = []

        def read(value: Any) -> Any:
            if type(value) is not dict:
                raise Unconverted(current.name)
            item_plan = cells[0]
            return {
                _json_key(key, current.name): _not_null(item_plan, item, current.name) for key, item in value.items()
            }

        made[current.name] = read
        cells.append(plan_of(current.value))
        return read

    def _document(current: Any) -> Plan:
        def read(value: Any) -> Any:
            return _json_copy(value, current.name)

        made[current.name] = read
        return read

    return plan_of(shape)


def _not_null(plan: Plan, value: Any, where: str) -> Any:
    if value is None:
        raise Unconverted(where)  # botocore writes null, which moto's parsers read apart from a member's
    return plan(value)


def _unconverted(where: str) -> Plan:
    def read(value: Any) -> Any:
        raise Unconverted(where)

    return read


def _as_is(value: Any) -> Any:
    """A string, a boolean: written as it is, read as it is (a JSON scalar comes back equal)."""
    if type(value) not in _JSON_SCALARS:
        raise Unconverted(type(value).__name__)
    return value


def _integer(value: Any) -> Any:
    if type(value) not in _JSON_SCALARS:
        raise Unconverted(type(value).__name__)
    try:
        return parse.BaseJSONParser._parse_integer(None, None, value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Unconverted(repr(value)) from None


def _float(value: Any) -> Any:
    if type(value) not in _JSON_SCALARS:
        raise Unconverted(type(value).__name__)
    try:
        written = _WRITER._handle_float(value)  # Infinity and NaN as strings
        return parse.BaseJSONParser._parse_float(None, None, json.loads(json.dumps(written)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Unconverted(repr(value)) from None


def _blob(value: Any) -> Any:
    if type(value) not in (str, bytes, bytearray):
        raise Unconverted(type(value).__name__)
    return parse.default_blob_parser(_WRITER._get_base64(value))


def _timestamp(value: Any) -> Any:
    raise Unconverted("timestamp")  # botocore's format depends on the shape's trait: left to the round trip


def _json_copy(value: Any, where: str) -> Any:
    kind = type(value)
    if kind is dict:
        return {_json_key(key, where): _json_copy(item, where) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item, where) for item in value]
    if value is None or kind in _JSON_SCALARS:
        return value
    raise Unconverted(where)


def _json_key(key: Any, where: str) -> str:
    if type(key) is not str:
        raise Unconverted(where)
    return key


_WRITER = JSONSerializer()  # botocore's own conversions of what it writes for floats and blobs
_SCALARS: dict[str, Plan] = {
    "integer": _integer,
    "long": _integer,
    "short": _integer,
    "byte": _integer,
    "float": _float,
    "double": _float,
    "blob": _blob,
    "timestamp": _timestamp,
    "string": _as_is,
    "boolean": _as_is,
}

"""The `serializer_fast_paths` speed-up: four costs of moto's response path, paid per value.

- Member keys. moto finds each structure member's value through its alias providers, built
  afresh for every member of every structure it writes (five provider objects and a generator
  per member, present or not); a Step Functions history event's shape has about 60 members (one
  per kind of event details). For a plain dict value the keys the providers propose depend only
  on the member's shape, its parent structure and the member name (the providers read the
  object's class name and `Meta`, and a dict has no `Meta`), so they are computed once per
  structure shape here, and the dict's members are looked up in the order moto would.
- Timestamps. moto's Step Functions keeps event timestamps as ISO 8601 strings, and the
  serializer parses each with dateutil (about 0.2 ms); a string of the exact form
  `YYYY-MM-DDTHH:MM:SS[.ffffff](Z|+HH:MM)` is parsed with `datetime.fromisoformat` here instead,
  which reads it to the same instant; an aware `datetime` written as epoch seconds (JSON
  protocols: ListExecutions' start and stop dates, thousands to a page) is converted with integer
  arithmetic instead of dateutil's `astimezone(tzutc())` and `timetuple()`; any other value takes
  moto's path.
- Request ids. moto runs a regular expression over every response body to put the request id
  into an XML `<RequestId>` element; a body without that element (every JSON response) is left as
  it is, which is what the substitution does to it, without reading it through; an XML body gets
  moto's substitution. The id itself (`x-amzn-requestid`, 52 letters and digits) is drawn with one
  `choices` call of moto's random source, not moto's 52 calls of `choice` (about a quarter of a
  DescribeExecution's CPU in moto, a tenth of an SNS Publish's).

- Plain leaves. A JSON serializer writes a member's `str` string or `bool` boolean as it is (moto's
  string writer takes str() of it, and a boolean has no writer of its own): such a member is put
  under its name directly instead of through moto's per-value dispatch (its type's method looked up
  by name, the key path pushed and popped, the serialized name read from the shape); an enum, a
  number, a timestamp or a structure takes moto's path. About a sixth of a DescribeExecution's
  serialisation.

Together: GetExecutionHistory of a 17-event history went from about 28 to about 10 ms of CPU
(client included), DescribeExecution and ListExecutions from milliseconds per execution to a
fraction. Anything that is not a plain dict, and any response with transformers on its key
paths, takes moto's own path; the bytes written are the same
(tests/engine/test_serializer_fast_paths.py compares them with the speed-up off).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.model import Shape, StructureShape
from moto.core import serialize
from moto.core.responses import BaseResponse
from moto.moto_api._internal import mock_random

from onceflow.engine.speedups import SERIALIZER_FAST_PATHS

Patch = tuple[Any, str, Any]
SPEEDUPS = (SERIALIZER_FAST_PATHS,)

_ORIGINAL_STRUCTURE = serialize.ResponseSerializer._serialize_type_structure
_ORIGINAL_TIMESTAMP = serialize.TimestampSerializer._convert_timestamp_to_str
_ORIGINAL_ENRICH = BaseResponse._enrich_response
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_REQUEST_ID_CHARACTERS = string.ascii_letters + string.digits  # moto's get_random_string(length=52)
_REQUEST_ID_LENGTH = 52
_REQUEST_ID_IN_XML = re.compile(r"(?<=<RequestId>).*(?=<\/RequestId>)")  # moto's _enrich_response's
_ISO_8601 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)")
Member = tuple[str, Shape, tuple[str, ...]]  # member key, its shape, the keys to try in moto's order


@dataclass(frozen=True)
class _Members:
    shape: StructureShape
    members: list[Member]
    by_key: dict[str, list[int]]  # a key a member may be found under -> those members' positions
    # Per member: the type whose plain values are written as they are (str for a string, bool for a
    # boolean), or None; and the name it is written under.
    leaves: list[type | None]
    names: list[str]


def moto_needs() -> list[Any]:
    """What this speed-up replaces or reads in the pinned moto (checked by engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(serialize.ResponseSerializer, "_serialize_type_structure", "serialized", "value", "shape", "key"),
        need(serialize.ResponseSerializer, "_serialize", "serialized", "value", "shape", "key"),
        need(serialize.ResponseSerializer, "_default_serialize", "serialized", "value", "shape", "key"),
        need(serialize.ResponseSerializer, "MAP_TYPE"),
        need(serialize.ResponseSerializer, "get_serialized_name", "shape", "default_name"),
        need(serialize.BaseJSONSerializer, "_serialize_type_string", "serialized", "value", "shape", "key"),
        need(serialize.XFormedAttributePicker, "get_possible_keys", "context"),
        need(serialize, "AttributePickerContext"),
        need(serialize.TimestampSerializer, "_convert_timestamp_to_str", "value", "timestamp_format"),
        need(serialize, "MISSING"),
        need(serialize.TimestampSerializer, "_timestamp_unixtimestamp", "value"),
        need(BaseResponse, "_enrich_response", "headers", "body"),
        need(mock_random, "get_random_string", "length", "include_digits"),  # the request id it replaces
        need(mock_random, "choices"),
    ]


_CACHE: dict[int, _Members] = {}  # by id(structure shape); each entry holds its shape, so the id stays its own


def _members(shape: StructureShape) -> _Members:
    cached = _CACHE.get(id(shape))
    if cached is not None and cached.shape is shape:
        return cached
    picker = serialize.XFormedAttributePicker(response_transformers={})
    members: list[Member] = []
    by_key: dict[str, list[int]] = {}
    leaves: list[type | None] = []
    names: list[str] = []
    for position, (member_key, member_shape) in enumerate(shape.members.items()):
        member_shape.parent = shape  # type: ignore[attr-defined]  # what moto sets before it looks a member up
        context = serialize.AttributePickerContext(obj={}, key=member_key, shape=member_shape)
        keys = tuple(picker.get_possible_keys(context))
        members.append((member_key, member_shape, keys))
        for possible in set(keys):
            by_key.setdefault(possible, []).append(position)
        leaves.append(_PLAIN_LEAVES.get(member_shape.type_name))
        names.append(member_shape.serialization.get("name", member_key))
    _CACHE[id(shape)] = cached = _Members(shape, members, by_key, leaves, names)
    return cached


# A JSON serializer writes a str string and a bool boolean as they are: _serialize_type_string's
# str(value) of a str is the str, and a boolean has no writer of its own (_default_serialize).
_PLAIN_LEAVES: dict[str, type] = {"string": str, "boolean": bool}
_WRITES_LEAVES_PLAINLY: dict[type, bool] = {}


def _writes_leaves_plainly(serializer_class: type) -> bool:
    """Whether this serializer writes plain leaves as moto's JSON serializers do (checked once per class)."""
    plain = _WRITES_LEAVES_PLAINLY.get(serializer_class)
    if plain is None:
        base, json_base = serialize.ResponseSerializer, serialize.BaseJSONSerializer
        plain = _WRITES_LEAVES_PLAINLY[serializer_class] = (
            issubclass(serializer_class, json_base)
            and serializer_class._serialize is base._serialize
            and serializer_class._default_serialize is base._default_serialize
            and serializer_class.get_serialized_name is base.get_serialized_name
            and serializer_class._serialize_type_string is json_base._serialize_type_string
            and getattr(serializer_class, "_serialize_type_boolean", None) is None
        )
    return plain


def _serialize_type_structure(self: Any, serialized: Any, value: Any, shape: StructureShape, key: str) -> None:
    picker = getattr(self, "_value_picker", None)
    if (
        type(value) is not dict
        or type(picker) is not serialize.XFormedAttributePicker
        or picker.response_transformers
        or getattr(shape, "is_document_type", False)
    ):
        _ORIGINAL_STRUCTURE(self, serialized, value, shape, key)
        return
    wrapper = self.MAP_TYPE() if key else serialized
    missing = serialize.MISSING
    known = _members(shape)
    plain_leaves = _writes_leaves_plainly(type(self))
    # Only members that may be found under one of the dict's keys, in the shape's order.
    positions = sorted({p for k in value if k in known.by_key for p in known.by_key[k]})
    for position in positions:
        member_key, member_shape, keys = known.members[position]
        for possible in keys:
            member_value = value.get(possible, missing)
            if member_value is not missing:
                break
        else:
            continue
        if member_value is not None:
            member_shape.parent = shape  # type: ignore[attr-defined]
            leaf = known.leaves[position]
            if plain_leaves and leaf is not None and type(member_value) is leaf:
                wrapper[known.names[position]] = member_value
            else:
                self._serialize(wrapper, member_value, member_shape, member_key)
    if key:
        self._default_serialize(serialized, wrapper, shape, key)


def _convert_timestamp_to_str(self: Any, value: Any, timestamp_format: str) -> Any:
    if type(value) is datetime and value.tzinfo is not None and timestamp_format.lower() == "unixtimestamp":
        since = value - _EPOCH  # exact: days, seconds and microseconds of UTC
        seconds = since.days * 86_400 + since.seconds
        # moto's: whole seconds, plus milliseconds (truncated) when there is a fraction
        return seconds + (since.microseconds // 1000) / 1000.0 if since.microseconds else seconds
    if type(value) is str and _ISO_8601.fullmatch(value):
        return getattr(self, f"_timestamp_{timestamp_format.lower()}")(datetime.fromisoformat(value))
    return _ORIGINAL_TIMESTAMP(self, value, timestamp_format)


def _enrich_response(headers: dict[str, str], body: Any) -> tuple[dict[str, str], Any]:
    """moto's: the status as text, a request id in the headers and in an XML body's <RequestId>; the
    id drawn from moto's random source in one call, not one per character."""
    if not isinstance(body, str):
        return _ORIGINAL_ENRICH(headers, body)
    if "status" in headers:
        headers["status"] = str(headers["status"])
    request_id = "".join(mock_random.choices(_REQUEST_ID_CHARACTERS, k=_REQUEST_ID_LENGTH))
    if isinstance(headers, dict):  # as gen_amzn_requestid_long sets it
        headers["x-amzn-requestid"] = request_id
    if "<RequestId>" in body:
        body = _REQUEST_ID_IN_XML.sub(request_id, body)
    return headers, body


def patches() -> list[Patch]:
    return [
        (serialize.ResponseSerializer, "_serialize_type_structure", _serialize_type_structure),
        (serialize.TimestampSerializer, "_convert_timestamp_to_str", _convert_timestamp_to_str),
        (BaseResponse, "_enrich_response", staticmethod(_enrich_response)),
    ]

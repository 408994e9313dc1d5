"""The `request_plans` speed-up: a JSON-protocol request body read by a plan made once per shape.

moto reads every JSON request (DynamoDB, SQS, Step Functions...) into its parameters by walking the
operation's input shape value by value (`JSONParser._parse_shape`): per value it looks its handler
up by name (`_parse_{type}`), and per structure it asks every member of the shape for its wire name
and its value, present or not; a DynamoDB AttributeValue has ten members, a TransactWriteItems of two
items about twenty AttributeValues. Here the walk is made once per shape into nested functions
(a structure: its members' names, wire names and plans; a list, a map; blobs and timestamps read
by moto's own parsers; numbers as moto converts them; anything else as it is), and a body is read
by calling them: the same dict, in the same key order (its structure members in the shape's order).

Taken only by moto's JSONParser with its own handlers for every type the shape holds, its default
blob and timestamp parsers and a plain dict as its map type; anything else walks as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from botocore.model import Shape
from moto.core import parse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import REQUEST_PLANS

Patch = tuple[Any, str, Any]
SPEEDUPS = (REQUEST_PLANS,)
Plan = Callable[[Any], Any]

# The handler moto's JSONParser finds for each type (getattr(self, f"_parse_{type}")), by the function
# its class holds: a plan is made only while these are what the parser would call.
_HANDLERS = {
    "structure": parse.BaseJSONParser._parse_structure,
    "list": parse.RequestParser._parse_list,
    "map": parse.RequestParser._parse_map,
    "blob": parse.BaseJSONParser._parse_blob,
    "timestamp": parse.BaseJSONParser._parse_timestamp,
    "float": parse.BaseJSONParser._parse_float,
    "double": parse.BaseJSONParser._parse_double,
    "integer": parse.BaseJSONParser._parse_integer,
    "long": parse.BaseJSONParser._parse_long,
    "short": parse.BaseJSONParser._parse_short,
    "byte": parse.BaseJSONParser._parse_byte,
}


def moto_needs() -> list[Need]:
    return [
        need(parse.JSONParser, "_parse_json_body", "raw_body", "shape"),
        need(parse.JSONParser, "_parse_body_as_json", "body_contents"),
        need(parse.RequestParser, "_default_handle", "shape", "value"),
        need(parse, "default_blob_parser", "value"),
        need(parse, "default_timestamp_parser", "value"),
        need(parse, "UNDEFINED"),
        *(need(parse.JSONParser, f"_parse_{type_name}") for type_name in _HANDLERS),
    ]


class _Unplannable(Exception):
    """The parser would call a handler this speed-up does not reproduce."""


def _numbers(convert: Callable[[Any], Any]) -> Plan:
    undefined = parse.UNDEFINED
    return lambda value: value if value is undefined else convert(value)


def _as_is(value: Any) -> Any:
    return value


def make_plan(shape: Shape, parser_class: type) -> Plan:
    """The plan of `shape` for parsers of `parser_class` (raises _Unplannable for one it cannot make)."""
    made: dict[str, Plan] = {}  # by shape name: botocore makes a new Shape object per look-up

    def plan_of(current: Shape) -> Plan:
        known = made.get(current.name)
        if known is not None:
            return known
        type_name = current.type_name
        handler = getattr(parser_class, f"_parse_{type_name}", None)
        if handler is None:
            if parser_class._default_handle is not parse.RequestParser._default_handle:
                raise _Unplannable(type_name)
            made[current.name] = _as_is
            return _as_is
        if handler is not _HANDLERS.get(type_name):
            raise _Unplannable(type_name)
        if type_name == "structure":
            return _structure(current)
        if type_name == "list":
            return _list(current)
        if type_name == "map":
            return _map(current)
        plan = {
            "blob": parse.default_blob_parser,
            "timestamp": parse.default_timestamp_parser,
            "float": _numbers(float),
            "double": _numbers(float),
            "integer": _numbers(int),
            "long": _numbers(int),
            "short": _numbers(int),
            "byte": _numbers(int),
        }[type_name]
        made[current.name] = plan
        return plan

    def _structure(current: Any) -> Plan:
        if current.is_document_type:
            made[current.name] = _as_is
            return _as_is
        members: list[tuple[str, str, Plan]] = []

        def read(value: Any) -> Any:
            if value is None:
                return None
            parsed = {}
            for name, wire_name, member_plan in members:
                raw = value.get(wire_name)
                if raw is not None:
                    parsed[name] = member_plan(raw)
            return parsed

        made[current.name] = read  # before its members: a shape may hold itself (DynamoDB's AttributeValue)
        for name, member in current.members.items():
            members.append((name, member.serialization.get("name", name), plan_of(member)))
        return read

    def _list(current: Any) -> Plan:
        cell: list[Plan] = []

        def read(value: Any) -> Any:
            item = cell[0]
            return [item(entry) for entry in value]

        made[current.name] = read
        cell.append(plan_of(current.member))
        return read

    def _map(current: Any) -> Plan:
        cells: list[Plan] = []

        def read(value: Any) -> Any:
            key, item = cells
            return {key(k): item(v) for k, v in value.items()}

        made[current.name] = read
        cells.extend((plan_of(current.key), plan_of(current.value)))
        return read

    return plan_of(shape)


def patches() -> list[Patch]:
    original = parse.JSONParser._parse_json_body
    # By service, its API version, the input shape's name and the parser class: the same shape every time.
    plans: dict[tuple[str, str, str, type], Plan | None] = {}
    lock = threading.Lock()

    def _parse_json_body(self: Any, raw_body: Any, shape: Any) -> Any:
        if (
            self.MAP_TYPE is not dict
            or self._blob_parser is not parse.default_blob_parser
            or self._timestamp_parser is not parse.default_timestamp_parser
            or type(self)._parse_shape is not parse.RequestParser._parse_shape
        ):
            return original(self, raw_body, shape)
        service = self.operation_model.service_model
        key = (service.service_name, service.api_version, shape.name, type(self))
        if key in plans:
            plan = plans[key]
        else:
            try:
                plan = make_plan(shape, type(self))
            except _Unplannable:
                plan = None
            with lock:
                plans[key] = plan
        if plan is None:
            return original(self, raw_body, shape)
        return plan(self._parse_body_as_json(raw_body))

    return [(parse.JSONParser, "_parse_json_body", _parse_json_body)]

"""The client commands' reader of JSON-protocol responses: botocore's result, without its walk of the
shape for every value.

botocore's JSONParser turns a response body into the operation's output by visiting every value with
its shape (`_parse_shape`: a handler looked up by name, then `serialization.get('name')` for every
member of every structure, present or not), only to convert timestamps and blobs. A history event is
a structure of about 60 members, most absent: a GetExecutionHistory page cost about 0.6 ms of the
client's 2 ms, and `trace` reads one per execution. Here each shape is compiled once into a plan
(members as `(name, key, plan)` triples; no plan where botocore's handler returns the value as it
is) and a body is read by the plan: the same keys, values and types, the same `None`s left out.

Document types, tagged unions, event streams and anything a parser class of botocore's handles its
own way go through botocore's code. Installed per botocore session, by registering a response parser
factory whose "json" parser is this one (the session's documented `register_component`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.model import Shape
from botocore.parsers import BaseJSONParser, JSONParser, ResponseParser, ResponseParserFactory

from onceflow.ops import client_speedups

Plan = Callable[[Any], Any] | None  # None: the value as it is


Plans = dict[int, tuple[Shape, Plan]]  # id(shape) -> (the shape, kept alive while planned; its plan)


class PlannedJSONParser(JSONParser):
    """`plans`: shared by the parsers of one factory (botocore makes a parser for every response).
    A plan reads timestamps and blobs with the parser that made it: the factory gives every parser
    the same defaults (install's order: this factory first, then timestamps.py's parser)."""

    def __init__(self, plans: Plans | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._plans: Plans = {} if plans is None else plans

    def _handle_json_body(self, raw_body: bytes, shape: Shape) -> Any:
        parsed = self._parse_body_as_json(raw_body)
        plan = self._plan(shape)
        return parsed if plan is None else plan(parsed)

    def _plan(self, shape: Shape) -> Plan:
        known = self._plans.get(id(shape))
        if known is not None:
            return known[1]
        plan = self._compile(shape)
        self._plans[id(shape)] = (shape, plan)
        return plan

    def _compile(self, shape: Shape) -> Plan:
        kind = shape.type_name
        handler = getattr(type(self), f"_handle_{kind}", None)
        if handler is None:  # botocore's _default_handle: the value as it is
            return None
        if kind == "structure" and handler is BaseJSONParser._handle_structure:
            if not (shape.is_document_type or shape.is_tagged_union):
                return self._structure(shape)
        elif kind == "list" and handler is ResponseParser._handle_list:
            return self._list(self._plan(shape.member))  # type: ignore[attr-defined]
        elif kind == "map" and handler is BaseJSONParser._handle_map:
            return self._map(self._plan(shape.key), self._plan(shape.value))  # type: ignore[attr-defined]
        elif kind == "timestamp" and handler is BaseJSONParser._handle_timestamp:
            return self._timestamp_parser
        elif kind == "blob" and handler is BaseJSONParser._handle_blob:
            return self._blob_parser
        return lambda value: JSONParser._parse_shape(self, shape, value)

    def _structure(self, shape: Shape) -> Plan:
        """Its members are planned when it first reads a value: a recursive shape (DynamoDB's
        AttributeValue) is planned as deep as the values read go, botocore making a new shape for
        each level."""
        planned: list[list[tuple[str, str, Plan]]] = []  # set once; threads that race set equal lists

        def read(value: Any) -> Any:
            if value is None:
                return None
            if not planned:
                planned.append(
                    [
                        (name, member.serialization.get("name", name), self._plan(member))
                        for name, member in shape.members.items()  # type: ignore[attr-defined]
                    ]
                )
            parsed = {}
            for name, key, plan in planned[0]:
                raw = value.get(key)
                if raw is not None:
                    parsed[name] = raw if plan is None else plan(raw)
            return parsed

        return read

    @staticmethod
    def _list(plan: Plan) -> Plan:
        if plan is None:
            return list
        return lambda items: [None if item is None else plan(item) for item in items]

    @staticmethod
    def _map(key_plan: Plan, value_plan: Plan) -> Plan:
        if key_plan is None and value_plan is None:
            return dict

        def read(value: dict[Any, Any]) -> dict[Any, Any]:
            return {
                (k if key_plan is None else key_plan(k)): (v if value_plan is None else value_plan(v))
                for k, v in value.items()
            }

        return read


class _Factory(ResponseParserFactory):
    def __init__(self) -> None:
        super().__init__()
        self._plans: Plans = {}

    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name == "json":
            return PlannedJSONParser(self._plans, **self._defaults)
        return super().create_parser(protocol_name)


def install(session: Any) -> Any:
    """Read the JSON-protocol responses of every client `session` makes from now on with
    PlannedJSONParser (unless switched off: onceflow/ops/client_speedups.py). Install it before any
    parser defaults are set (onceflow/ops/timestamps.py's timestamp parser): they are the factory's."""
    if client_speedups.enabled("json_responses"):
        session.register_component("response_parser_factory", _Factory())
    return session

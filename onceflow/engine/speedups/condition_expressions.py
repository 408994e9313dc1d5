"""The `condition_expressions` speed-up: a ConditionExpression is parsed once per text, names and values.

moto parses a write's ConditionExpression twice per request (its response class, to check the
placeholders used; its backend, to evaluate it), with a hand-written lexer and parser of about 40 µs
for `attribute_not_exists(event_id)` and 90 µs for `attribute_exists(event_id) AND payload_hash =
:payload_hash`: a transaction of two conditional Puts and an UpdateItem, the pipeline's, parsed six
times, about 0.3 ms of a pipeline execution's server CPU. Here `ConditionExpressionParser.parse`
answers a (text, ExpressionAttributeNames, ExpressionAttributeValues) it parsed before with the
condition it built then and the placeholders it found (each parser gets lists of its own); at most
CACHE_SIZE are kept, oldest dropped first.

A parsed condition holds nothing of an evaluation: its operators read the item they are given and
answer (moto's comparisons.py). The values it holds are a copy of the request's, taken before
parsing, so a caller's later change to its own values reaches no cached condition. A text that does
not parse raises as it did, every time (nothing is kept), and a request whose names or values are
not plain JSON (unhashable or not serialisable) is parsed as moto parses it.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from typing import Any

from moto.dynamodb.comparisons import ConditionExpressionParser

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import CONDITION_EXPRESSIONS

Patch = tuple[Any, str, Any]
SPEEDUPS = (CONDITION_EXPRESSIONS,)
CACHE_SIZE = 512
_ATTRIBUTES = ("condition_expression", "expression_attribute_names", "expression_attribute_values")


def moto_needs() -> list[Need]:
    return [
        need(ConditionExpressionParser, "__init__", *_ATTRIBUTES),
        need(ConditionExpressionParser, "parse"),
    ]


def cache_key(parser: ConditionExpressionParser) -> tuple[Any, ...] | None:
    """What the parse of `parser` depends on, as a key; None when its inputs are not plain JSON."""
    names = parser.expression_attribute_names or {}
    values = parser.expression_attribute_values or {}
    try:
        key = (
            parser.condition_expression,
            tuple(sorted(names.items())),
            json.dumps(values, sort_keys=True, separators=(",", ":")) if values else "",
        )
        hash(key)
    except (TypeError, ValueError, AttributeError):
        return None
    return key


def patches() -> list[Patch]:
    original_parse = ConditionExpressionParser.parse
    parsed: OrderedDict[tuple[Any, ...], tuple[Any, list[str], list[str]]] = OrderedDict()
    lock = threading.Lock()

    def parse(self: ConditionExpressionParser) -> Any:
        key = cache_key(self)
        if key is None:
            return original_parse(self)
        found = parsed.get(key)
        if found is None:
            own = copy.copy(self)
            own.expression_attribute_values = copy.deepcopy(self.expression_attribute_values)
            own.expr_attr_names_found, own.expr_attr_values_found = [], []
            condition = original_parse(own)  # raises for a text that does not parse: nothing kept
            found = (condition, own.expr_attr_names_found, own.expr_attr_values_found)
            with lock:
                if len(parsed) >= CACHE_SIZE:
                    parsed.popitem(last=False)
                parsed[key] = found
        condition, names_found, values_found = found
        self.expr_attr_names_found.extend(names_found)
        self.expr_attr_values_found.extend(values_found)
        return condition

    return [(ConditionExpressionParser, "parse", parse)]

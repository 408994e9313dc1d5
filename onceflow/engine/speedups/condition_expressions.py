"""The `condition_expressions` speed-up: a ConditionExpression's text is lexed and parsed once per text,
names and value placeholders; each request's condition is made from that syntax tree with its own values.

moto parses a write's ConditionExpression twice per request (its response class, to check the
placeholders used; its backend, to evaluate it), with a hand-written lexer and parser of about 40 µs
for `attribute_not_exists(event_id)` and 90 µs for `attribute_exists(event_id) AND payload_hash =
:payload_hash`: a transaction of two conditional Puts and an UpdateItem, the pipeline's, parsed six
times, about 0.3 ms of a pipeline execution's server CPU. Most requests' values differ (the
pipeline's `:payload_hash`, the reconciler's `:now`), and only the last step of moto's parse reads
them: `_make_op_condition` turns the syntax tree, whose value leaves hold the request's values, into
the condition's operators (their constructors check what they need of a value: BETWEEN refuses a NULL
bound). Here `ConditionExpressionParser.parse` parses a (text, ExpressionAttributeNames, value
placeholders) it has not seen as moto parses it, keeping the syntax tree moto's parse hands to
`_make_op_condition` and the placeholders it found; a request it has seen gets that tree with its own
values in the value leaves, made into its condition by moto's `_make_op_condition` (each parser gets
lists of its own). At most CACHE_SIZE trees are kept, oldest dropped first.

A syntax tree is tuples and lists nothing changes (moto's `Node`). A text that does not parse raises
as it did, every time (nothing is kept), and a request whose names are not plain text or whose values
are not a dict is parsed as moto parses it.
"""

from __future__ import annotations

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
        need(ConditionExpressionParser, "_make_op_condition", "node"),  # the syntax tree -> the condition
        need(ConditionExpressionParser, "_lookup_expression_attribute_value", "name"),  # a value leaf's value
        need(ConditionExpressionParser, "Node"),  # a namedtuple: kind, text, value, children
    ]


def cache_key(parser: ConditionExpressionParser) -> tuple[Any, ...] | None:
    """What the syntax tree of `parser`'s expression depends on, as a key; None when its names are not
    plain text or its values not a dict."""
    names = parser.expression_attribute_names or {}
    values = parser.expression_attribute_values or {}
    if not isinstance(values, dict):
        return None
    try:
        key = (parser.condition_expression, tuple(sorted(names.items())), tuple(sorted(values)))
        hash(key)
    except (TypeError, AttributeError):
        return None
    return key


def with_values(node: Any, values: dict[str, Any]) -> Any:
    """The syntax tree `node` with each value leaf holding the request's value of its placeholder (what
    moto's parse puts there: `_lookup_expression_attribute_value(name)`)."""
    if node.kind == ConditionExpressionParser.Kind.EXPRESSION_ATTRIBUTE_VALUE:
        return node._replace(value=values[node.text])
    if node.children:
        return node._replace(children=[with_values(child, values) for child in node.children])
    return node


def patches() -> list[Patch]:
    original_parse = ConditionExpressionParser.parse
    make_condition = ConditionExpressionParser._make_op_condition
    # key -> (the syntax tree moto's parse made, the names it found, the values it found)
    parsed: OrderedDict[tuple[Any, ...], tuple[Any, list[str], list[str]]] = OrderedDict()
    lock = threading.Lock()

    def parse(self: ConditionExpressionParser) -> Any:
        key = cache_key(self)
        if key is None or not self.condition_expression:
            return original_parse(self)
        found = parsed.get(key)
        if found is not None:
            tree, names_found, values_found = found
            condition = make_condition(self, with_values(tree, self.expression_attribute_values or {}))
            self.expr_attr_names_found.extend(names_found)
            self.expr_attr_values_found.extend(values_found)
            return condition
        trees: list[Any] = []

        def keeping_the_tree(node: Any) -> Any:
            if not trees:
                trees.append(node)  # the whole expression's tree: the first call, before its recursion
            return make_condition(self, node)

        self._make_op_condition = keeping_the_tree  # type: ignore[method-assign]  # this parser's only
        names_before, values_before = len(self.expr_attr_names_found), len(self.expr_attr_values_found)
        try:
            condition = original_parse(self)  # raises for a text that does not parse: nothing kept
        finally:
            del self._make_op_condition
        if trees:
            with lock:
                if len(parsed) >= CACHE_SIZE:
                    parsed.popitem(last=False)
                parsed[key] = (
                    trees[0],
                    self.expr_attr_names_found[names_before:],
                    self.expr_attr_values_found[values_before:],
                )
        return condition

    return [(ConditionExpressionParser, "parse", parse)]

"""UpdateItem's UpdateExpression as DynamoDB applies it, whether the engine parses each text once and
copies its tree node by node (the `update_expressions` speed-up) or parses and deep-copies it per
request as moto does: `ONCEFLOW_SPEEDUPS_OFF=update_expressions` runs this file the other way.
The speed-up's copy is compared with `copy.deepcopy`'s, tree by tree.

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
"""

from __future__ import annotations

import copy
import gc
import types
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.parsing.ast_nodes import Node
from moto.dynamodb.parsing.expressions import UpdateExpressionParser

from onceflow.engine.speedups.update_expressions import (
    NODE_ATTRIBUTES,
    copy_tree,
    copyable,
    traverse,
    tree_deepcopy,
)

EXPRESSIONS = [
    "SET a = :v",
    "SET n = n + :one, m = :two - n",
    "SET l = list_append(l, :more), x = if_not_exists(x, :default)",
    "REMOVE a, b.c[2], #name",
    "ADD s :set, n :one",
    "DELETE s :set",
    "SET m.inner.deeper = :v, l[0] = :w REMOVE gone ADD counter :one",
    "SET #status = :sent, sent_at = :now, #ttl = :ttl REMOVE pending_since, pending_shard",
]


def _same_tree(copied: Any, original: Any, copied_parent: Any = None) -> None:
    assert type(copied) is type(original)
    if not isinstance(original, Node):
        assert copied == original
        return
    assert copied is not original
    assert set(original.__dict__) == NODE_ATTRIBUTES  # what copy_tree copies is all a node holds
    assert copied.type == original.type
    assert copied.parent is copied_parent
    assert (copied.children is None) == (original.children is None)
    for mine, theirs in zip(copied.children or [], original.children or [], strict=True):
        _same_tree(mine, theirs, copied)


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_a_parsed_tree_is_copied_as_deepcopy_copies_it(expression):
    tree = UpdateExpressionParser.make(expression)
    assert copyable(tree)
    deep = copy.deepcopy(tree)
    _same_tree(deep, tree)  # the reference: deepcopy's tree has the same shape
    _same_tree(copy_tree(tree), tree)
    _same_tree(tree_deepcopy(tree), tree)


def _processed(tree: Node, walk: Any) -> Node:
    """The first passes of moto's UpdateExpressionValidator over a copy of `tree`, each walked by `walk`."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item
    from moto.dynamodb.parsing.validators import (
        ActionCountValidator,
        ExpressionAttributeResolvingProcessor,
        ExpressionAttributeValueProcessor,
    )

    names = {"#name": "name", "#status": "status", "#ttl": "ttl"}
    values = {f":{n}": {"N": "1"} for n in ("v", "one", "two", "more", "default", "set", "w", "sent", "now", "ttl")}
    item = Item(DynamoType({"S": "key"}), None, {"n": {"N": "5"}, "l": {"L": [{"S": "a"}]}, "x": {"S": "y"}})
    node = copy.deepcopy(tree)
    for pass_ in (
        ActionCountValidator(),
        ExpressionAttributeValueProcessor(values),
        ExpressionAttributeResolvingProcessor(names, item),
    ):
        node = walk(pass_, node)
    return node


def _walked_alike(expression: str, passes: Any) -> None:
    """`passes` over the expression's tree, walked by moto's traversal and by this one: the same tree,
    or the same refusal (a path the item lacks, an operand of the wrong type)."""
    tree = UpdateExpressionParser.make(expression)
    try:
        theirs = passes(tree, lambda pass_, node: pass_.traverse_node_recursively(node))
    except Exception as refused:
        with pytest.raises(type(refused)):
            passes(tree, traverse)
        return
    _same_processed(passes(tree, traverse), theirs)


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_a_pass_over_the_tree_processes_the_nodes_a_depth_first_traversal_does(expression):
    _walked_alike(expression, _processed)


def _validated(tree: Node, walk: Any) -> Node:
    """Every pass of moto's UpdateExpressionValidator over a copy of `tree`, each walked by `walk`."""
    from types import SimpleNamespace

    from moto.dynamodb.models.dynamo_type import DynamoType, Item
    from moto.dynamodb.parsing.validators import UpdateExpressionValidator

    names = {"#name": "name", "#status": "status", "#ttl": "ttl"}
    values = {f":{n}": {"N": "1"} for n in ("v", "one", "two", "default", "w", "sent", "now", "ttl")}
    values[":more"] = {"L": [{"S": "b"}]}
    values[":set"] = {"SS": ["x"]}
    attributes = {
        "n": {"N": "5"},
        "l": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]},
        "x": {"S": "y"},
        "s": {"SS": ["x", "z"]},
    }
    attributes.update(
        {"m": {"M": {"inner": {"M": {"deeper": {"S": "d"}}}}}, "b": {"M": {"c": {"L": [{"S": "0"}] * 3}}}}
    )
    item = Item(DynamoType({"S": "key"}), None, attributes)
    table = SimpleNamespace(table_key_attrs=["key"], attr=[], attribute_keys=["key"])
    validator = UpdateExpressionValidator(copy.deepcopy(tree), names, values, item, table)  # type: ignore[arg-type]
    node = validator.node_to_validate
    for pass_ in validator.processors:
        node = walk(pass_, node)
    return node


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_every_pass_of_the_validator_processes_the_nodes_a_depth_first_traversal_does(expression):
    """All ten of UpdateExpressionValidator's passes (placeholders resolved against an item, functions
    evaluated, operations executed, types checked), walked by moto's traversal and by this one."""
    _walked_alike(expression, _validated)


def _same_processed(mine: Any, theirs: Any) -> None:
    assert type(mine) is type(theirs)
    if not isinstance(theirs, Node):
        assert mine == theirs
        return
    assert (mine.parent is None) == (theirs.parent is None)
    for a, b in zip(mine.children or [], theirs.children or [], strict=True):
        _same_processed(a, b)


def test_values_that_are_not_parsed_trees_are_deep_copied():
    value = {"L": [{"S": "a"}]}
    copied = tree_deepcopy(value)
    assert copied == value and copied["L"] is not value["L"]


@pytest.fixture
def table(stack) -> tuple[Any, str]:
    return stack.client("dynamodb"), stack.business_table


def _update(dynamodb: Any, table: str, key: str, expression: str, **kwargs: Any) -> dict[str, Any]:
    return dynamodb.update_item(
        TableName=table, Key={"order_id": {"S": key}}, UpdateExpression=expression, ReturnValues="ALL_NEW", **kwargs
    )["Attributes"]


def test_each_kind_of_action_applies_as_dynamodb_does(table):
    dynamodb, name = table
    _update(
        dynamodb,
        name,
        "o-1",
        "SET n = :one, l = :list, s = :set, m = :map, gone = :one",
        ExpressionAttributeValues={
            ":one": {"N": "1"},
            ":list": {"L": [{"S": "a"}]},
            ":set": {"SS": ["x", "y"]},
            ":map": {"M": {"nest_a": {"M": {}}}},
        },
    )
    item = _update(
        dynamodb,
        name,
        "o-1",
        "SET n = n + :two, l = list_append(l, :more), x = if_not_exists(x, :d), m.nest_a.nest_b = :d "
        "REMOVE gone ADD visits :two DELETE s :drop",
        ExpressionAttributeValues={
            ":two": {"N": "2"},
            ":more": {"L": [{"S": "b"}]},
            ":d": {"S": "default"},
            ":drop": {"SS": ["x"]},
        },
    )
    assert item == {
        "order_id": {"S": "o-1"},
        "n": {"N": "3"},
        "l": {"L": [{"S": "a"}, {"S": "b"}]},
        "s": {"SS": ["y"]},
        "m": {"M": {"nest_a": {"M": {"nest_b": {"S": "default"}}}}},
        "x": {"S": "default"},
        "visits": {"N": "2"},
    }


def test_one_text_on_many_items_applies_each_request_s_own_values(table):
    """The same text, parsed once, must not carry one request's values or item into the next."""
    dynamodb, name = table
    expression = "SET #status = :status, running_total = if_not_exists(running_total, :zero) + :amount"
    for key, status, amount in [("o-a", "pending", "5"), ("o-b", "sent", "7"), ("o-a", "sent", "1")]:
        _update(
            dynamodb,
            name,
            key,
            expression,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={":status": {"S": status}, ":zero": {"N": "0"}, ":amount": {"N": amount}},
        )
    items = {key: dynamodb.get_item(TableName=name, Key={"order_id": {"S": key}})["Item"] for key in ("o-a", "o-b")}
    assert items["o-a"] == {"order_id": {"S": "o-a"}, "status": {"S": "sent"}, "running_total": {"N": "6"}}
    assert items["o-b"] == {"order_id": {"S": "o-b"}, "status": {"S": "sent"}, "running_total": {"N": "7"}}


@pytest.mark.parametrize(
    ("expression", "names", "values", "message"),
    [
        ("SET a = :undefined", None, None, "An expression attribute value used in expression is not defined"),
        ("SET a = :v, a = :v", None, {":v": {"S": "x"}}, "Two document paths overlap with each other"),
        ("SET a = ", None, None, "Invalid UpdateExpression: Syntax error"),
    ],
)
def test_a_broken_expression_is_refused_every_time(table, expression, names, values, message):
    """Refused on its first request and again on the next (a text parsed before is not taken as valid)."""
    dynamodb, name = table
    extra: dict[str, Any] = {}
    if names:
        extra["ExpressionAttributeNames"] = names
    if values:
        extra["ExpressionAttributeValues"] = values
    for _ in range(2):
        with pytest.raises(ClientError) as refused:
            _update(dynamodb, name, "o-broken", expression, **extra)
        assert refused.value.response["Error"]["Code"] == "ValidationException"
        assert message in refused.value.response["Error"]["Message"]
    assert "Item" not in dynamodb.get_item(TableName=name, Key={"order_id": {"S": "o-broken"}})


def test_a_pass_leaves_nothing_for_the_cyclic_collector_to_find():
    """The walk of a pass is freed when the pass ends: a function that refers to itself would wait, with
    all it holds, for the cyclic collector (ten passes per UpdateItem)."""
    tree = UpdateExpressionParser.make(EXPRESSIONS[0])
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        _processed(tree, traverse)
        walks = [
            o for o in gc.get_objects() if type(o) is types.FunctionType and o.__qualname__ == "traverse.<locals>.walk"
        ]
    finally:
        if was_enabled:
            gc.enable()
    assert walks == []


MOTO_MAKE = UpdateExpressionParser.__dict__["make"].__func__  # imported before any engine starts: moto's parser


def test_the_response_class_reads_the_kept_tree_and_leaves_it_as_parsed(table, embedded_aws):
    """DynamoDB's response class reads an UpdateItem's placeholders from the tree kept for its text, not
    a copy (update_expressions on); whoever reads it, each request applies its own values and the kept
    tree stays what parsing the text gives."""
    from moto.dynamodb import responses as dynamodb_responses

    from onceflow.engine import speedups

    dynamodb, name = table
    expression = "SET #status = :status, visits = if_not_exists(visits, :zero) + :one REMOVE gone"
    read = dynamodb_responses.UpdateExpressionParser.make
    assert (read(expression) is read(expression)) == (speedups.UPDATE_EXPRESSIONS in embedded_aws.speedups)
    for status, visits in [("pending", "1"), ("sent", "2")]:
        item = _update(
            dynamodb,
            name,
            "o-kept",
            expression,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={":status": {"S": status}, ":zero": {"N": "0"}, ":one": {"N": "1"}},
        )
        assert item == {"order_id": {"S": "o-kept"}, "status": {"S": status}, "visits": {"N": visits}}
    _same_tree(read(expression), MOTO_MAKE(UpdateExpressionParser, expression))

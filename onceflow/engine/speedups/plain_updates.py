"""The `plain_updates` speed-up: an UpdateItem whose expression only sets top-level attributes to
placeholder values and removes top-level attributes (`SET #status = :sent, sent_at = :now REMOVE
pending_since`, the pipeline's "Mark as sent") is applied to the stored item directly.

moto applies every UpdateItem through its expression machinery: it parses the text (a copy of the
cached tree), copies the tree again, makes seven passes over it against the item and the values
(after the three update_validation remembers), normalises it, runs an executor per action, and deep-
copies the item for a stream record whether the table has a stream or not: about a third of an
UpdateItem such as "Mark as sent". For the plain form every one of those passes either does nothing
or refuses the request, so here the form is recognised once per text (its actions in the order
moto's `normalize()` gives them, from moto's own parse) and a request is applied directly when
nothing in it could be refused:

- the item exists (moto's path creates a missing one, through its validator);
- no `Expected` and no `AttributeUpdates`;
- the text parses, has at most one SET and one REMOVE clause, no ADD or DELETE, every path a single
  attribute name or `#placeholder`, every SET value a single `:placeholder`, no name a reserved word;
- every `#placeholder` and `:placeholder` is defined, no two actions name the same attribute, none
  names a key attribute of the table, and no SET names an attribute of an index key or of the
  table's AttributeDefinitions (moto's type and empty-string checks of key values).

Anything else, and any request whose key or condition moto's code refuses, goes to moto's own
update_item, which refuses it or applies it as before. A direct update does what moto's executor
does, in its order: the condition evaluated by moto's parser (ConditionalCheckFailed, with ALL_OLD
when asked), each SET assigned through the item's size-limited dict (ItemSizeToUpdateTooLarge, the
actions before it applied, as in moto), each REMOVE popped, the stream record added when the table
has a stream. tests/engine/test_plain_updates.py compares the two request by request.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.exceptions import ConditionalCheckFailed, ItemSizeTooLarge, ItemSizeToUpdateTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.parsing import ast_nodes
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow.engine.speedups import PLAIN_UPDATES

Patch = tuple[Any, str, Any]
SPEEDUPS = (PLAIN_UPDATES,)
CACHE_SIZE = 512


def moto_needs() -> list[Need]:
    backend = dynamodb_models.DynamoDBBackend
    return [
        need(
            backend,
            "update_item",
            "table_name",
            "key",
            "update_expression",
            "expression_attribute_names",
            "expression_attribute_values",
            "attribute_updates",
            "expected",
            "condition_expression",
            "return_values_on_condition_check_failure",
        ),
        need(backend, "get_table", "table_name"),
        need(dynamodb_models, "create_condition_expression_parser"),
        need(dynamodb_models, "get_expected"),
        need(UpdateExpressionParser, "make", "expression_str"),
        need(ast_nodes.UpdateExpression, "normalize"),
        need(ast_nodes.Node, "find_clauses", "clause_types"),
        need(ReservedKeywords, "get_reserved_keywords"),
    ]


@dataclass(frozen=True)
class Target:
    """An action's attribute: a `#placeholder` or a plain name."""

    text: str
    placeholder: bool

    def name(self, names: dict[str, str]) -> str | None:
        return names.get(self.text) if self.placeholder else self.text


@dataclass(frozen=True)
class Action:
    """SET target = value (`value` a `:placeholder`), or REMOVE target (`value` None)."""

    target: Target
    value: str | None


Plan = tuple[Action, ...]


def plan_of(text: str) -> Plan | None:
    """The actions of a plain expression, in the order moto executes them; None for any other text."""
    try:
        tree = UpdateExpressionParser.make(text)
    except Exception:  # moto's own path parses it again and refuses it in its words
        return None
    clauses = {
        kind: len(tree.find_clauses([kind]))
        for kind in (
            ast_nodes.UpdateExpressionSetClause,
            ast_nodes.UpdateExpressionRemoveClause,
            ast_nodes.UpdateExpressionAddClause,
            ast_nodes.UpdateExpressionDeleteClause,
        )
    }
    if clauses[ast_nodes.UpdateExpressionAddClause] or clauses[ast_nodes.UpdateExpressionDeleteClause]:
        return None
    if clauses[ast_nodes.UpdateExpressionSetClause] > 1 or clauses[ast_nodes.UpdateExpressionRemoveClause] > 1:
        return None
    tree.normalize()
    actions = [_action(node) for node in tree.children or ()]
    if not actions or any(action is None for action in actions):
        return None
    return tuple(action for action in actions if action is not None)


def _action(node: Any) -> Action | None:
    if type(node) is ast_nodes.UpdateExpressionSetAction:
        path, value = node.children
        target = _target(path)
        placeholder = _only_child(value, ast_nodes.UpdateExpressionValue)
        if target is None or type(placeholder) is not ast_nodes.ExpressionAttributeValue:
            return None
        return Action(target, placeholder.get_value_name())
    if type(node) is ast_nodes.UpdateExpressionRemoveAction:
        target = _target(node.children[0]) if len(node.children) == 1 else None
        return None if target is None else Action(target, None)
    return None


def _target(path: Any) -> Target | None:
    element = _only_child(path, ast_nodes.UpdateExpressionPath)
    if type(element) is ast_nodes.ExpressionAttributeName:
        return Target(element.get_attribute_name_placeholder(), placeholder=True)
    if type(element) is ast_nodes.ExpressionAttribute:
        name = element.get_attribute_name()
        if name.upper() in ReservedKeywords.get_reserved_keywords():
            return None  # moto refuses it, in DynamoDB's words
        return Target(name, placeholder=False)
    return None


def _only_child(node: Any, kind: type) -> Any:
    if type(node) is not kind or len(node.children or ()) != 1:
        return None
    return node.children[0]


def applicable(
    plan: Plan, table: Any, names: dict[str, str], values: dict[str, Any]
) -> list[tuple[str, Action]] | None:
    """(attribute, action) for each action when nothing in the request could be refused, else None."""
    keys = set(table.table_key_attrs)
    guarded = set(table.attribute_keys) | {definition["AttributeName"] for definition in table.attr or ()}
    resolved: list[tuple[str, Action]] = []
    for action in plan:
        name = action.target.name(names)
        if name is None or name in keys:
            return None
        if action.value is not None and (action.value not in values or guarded & {name, action.target.text}):
            return None
        resolved.append((name, action))
    if len({name for name, _ in resolved}) != len(resolved):
        return None
    return resolved


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, dynamodb_models.DynamoDBBackend, "update_item")
    plan_for = functools.lru_cache(maxsize=CACHE_SIZE)(plan_of)  # a text's plan is a pure function of it

    @functools.wraps(original)  # moto's signature stays visible to the shape check
    def update_item(
        self: Any,
        table_name: str,
        key: dict[str, dict[str, Any]],
        update_expression: str,
        expression_attribute_names: dict[str, Any],
        expression_attribute_values: dict[str, Any],
        attribute_updates: dict[str, Any] | None = None,
        expected: dict[str, Any] | None = None,
        condition_expression: str | None = None,
        return_values_on_condition_check_failure: str | None = None,
    ) -> Any:
        arguments = (table_name, key, update_expression, expression_attribute_names, expression_attribute_values)
        keywords = {
            "attribute_updates": attribute_updates,
            "expected": expected,
            "condition_expression": condition_expression,
            "return_values_on_condition_check_failure": return_values_on_condition_check_failure,
        }
        plan = plan_for(update_expression) if update_expression and not attribute_updates and not expected else None
        if plan is None:
            return original(self, *arguments, **keywords)
        table = self.get_table(table_name)
        resolved = applicable(plan, table, expression_attribute_names or {}, expression_attribute_values or {})
        item = _stored_item(table, key) if resolved is not None else None
        if item is None:
            return original(self, *arguments, **keywords)
        condition = _condition(condition_expression, expression_attribute_names, expression_attribute_values)
        if condition is None:
            return original(self, *arguments, **keywords)
        if not condition.expr(item):
            if return_values_on_condition_check_failure == "ALL_OLD":
                raise ConditionalCheckFailed(item=item.to_json()["Attributes"])
            raise ConditionalCheckFailed
        assigned = _values(resolved, expression_attribute_values)
        if assigned is None:
            return original(self, *arguments, **keywords)
        before_update = copy.deepcopy(item) if table.stream_shard is not None else None
        for (name, _), value in zip(resolved, assigned, strict=True):
            if value is None:
                item.attrs.pop(name, None)
                continue
            try:
                item.attrs[name] = value
            except ItemSizeTooLarge:
                raise ItemSizeToUpdateTooLarge() from None
        if table.stream_shard is not None:
            table.stream_shard.add(before_update, item)
        return item

    return [(dynamodb_models.DynamoDBBackend, "update_item", update_item)]


def _values(resolved: list[tuple[str, Action]], values: dict[str, Any]) -> list[DynamoType | None] | None:
    """Each SET's value as moto's validator makes it (before anything is changed), None for a REMOVE;
    None where a value is one moto's validator refuses."""
    try:
        return [None if action.value is None else DynamoType(values[action.value]) for _, action in resolved]
    except Exception:  # moto's own path makes it again and refuses it in its words
        return None


def _stored_item(table: Any, key: Any) -> Any:
    """The item moto's update_item would find for `key`, or None (also for a key it would refuse)."""
    try:
        if table.hash_key_attr in key and table.range_key_attr in key:
            hash_value = DynamoType(key[table.hash_key_attr])
            range_value = DynamoType(key[table.range_key_attr])
        elif table.hash_key_attr in key:
            hash_value, range_value = DynamoType(key[table.hash_key_attr]), None
        else:
            return None
        return table.get_item(hash_value, range_value)
    except Exception:  # moto's own path meets it again and answers in its words
        return None


def _condition(text: str | None, names: dict[str, Any], values: dict[str, Any]) -> Any:
    """moto's parsed ConditionExpression (an Op whose expr(item) tells), or None where moto's parser
    refuses it."""
    try:
        return dynamodb_models.create_condition_expression_parser(text, names, values).parse()
    except Exception:  # moto's own path parses it again and refuses it in its words
        return None

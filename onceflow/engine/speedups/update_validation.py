"""The `update_validation` speed-up: the checks of an UpdateExpression that read nothing but the
expression, its attribute names and the table's key attributes run once per combination of the three.

moto's UpdateExpressionValidator makes ten passes over an UpdateItem's expression tree. Three of them
read only the tree, ExpressionAttributeNames and the table's key attributes, never the item or the
values, and change nothing (each returns the node it was given, in its place): ActionCountValidator
(one SET, REMOVE, ADD and DELETE clause at most), OverlappingPathsValidator (no two actions on
overlapping paths) and UpdateHashRangeKeyValidator (no key attribute updated). moto runs the first
two at every node of an UpdateExpression class, and each of those runs walks the subtree again: with
the pipeline's "Mark as sent" (four SETs, two REMOVEs), about 0.9 ms of the 1.6 ms the ten passes
cost, more than half of the validation.

Here an UpdateItem whose expression text, attribute names and table key attributes already passed
those three checks runs only the other seven passes, in moto's order; one that has not, or that fails
them (it raises as in moto, every time: a failure is never remembered), runs all ten. The text is the
one UpdateExpressionParser.make parsed for the tree the validator is given (remembered per tree, by
identity, for as long as the tree lives); a tree the engine did not see made runs all ten. At most
CACHE_SIZE combinations are remembered, oldest dropped first.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

from moto.dynamodb.parsing import validators
from moto.dynamodb.parsing.ast_nodes import Node
from moto.dynamodb.parsing.expressions import UpdateExpressionParser

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow.engine.speedups import UPDATE_VALIDATION

Patch = tuple[Any, str, Any]
SPEEDUPS = (UPDATE_VALIDATION,)
CACHE_SIZE = 1024
# The passes that read only the tree, the attribute names and the table's key attributes.
STATIC_PASSES = (
    validators.ActionCountValidator,
    validators.OverlappingPathsValidator,
    validators.UpdateHashRangeKeyValidator,
)


def moto_needs() -> list[Need]:
    return [
        need(UpdateExpressionParser, "make", "expression_str"),
        need(validators.Validator, "__init__", "expression", "expression_attribute_names", "item", "table"),
        need(validators.Validator, "validate"),
        need(validators.UpdateExpressionValidator, "get_ast_processors"),
        need(validators.ActionCountValidator, "verify_action_counts", "node"),
        need(validators.OverlappingPathsValidator, "__init__", "expression_attribute_names"),
        need(validators.OverlappingPathsValidator, "check_for_overlapping_paths", "node"),
        need(validators.UpdateHashRangeKeyValidator, "__init__", "table_key_attributes", "expression_attribute_names"),
        need(validators.UpdateHashRangeKeyValidator, "check_for_hash_or_range_key", "node"),
        need(validators.DepthFirstTraverser, "traverse", "node"),
    ]


class TextsOfTrees:
    """The text each live tree was parsed from, by the tree's identity."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[weakref.ref[Node], str]] = {}
        self._lock = threading.Lock()

    def remember(self, tree: Any, text: str) -> None:
        if not isinstance(tree, Node):
            return
        key = id(tree)

        def forget(_: Any) -> None:
            with self._lock:
                entry = self._texts.get(key)
                if entry is not None and entry[0]() is None:
                    del self._texts[key]

        with self._lock:
            self._texts[key] = (weakref.ref(tree, forget), text)

    def text_of(self, tree: Any) -> str | None:
        entry = self._texts.get(id(tree))
        if entry is None or entry[0]() is not tree:
            return None
        return entry[1]


PassedKey = tuple[str, frozenset[tuple[str, str]], tuple[str, ...]]


def passed_key(text: str, names: dict[str, str] | None, table: Any) -> PassedKey | None:
    """What the three checks read: the text, the attribute names, the table's key attributes (None
    when a name or value cannot be a key: such a request runs all ten passes)."""
    try:
        key = (text, frozenset((names or {}).items()), tuple(table.table_key_attrs))
        hash(key)
    except TypeError:
        return None
    return key


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    texts = TextsOfTrees()
    passed: dict[PassedKey, None] = {}
    lock = threading.Lock()

    made = current(before, UpdateExpressionParser, "make")
    make_function = made.__func__  # a classmethod (another speed-up's) or moto's bound classmethod

    def make(cls: type[UpdateExpressionParser], expression_str: str) -> Any:
        tree = make_function(cls, expression_str)
        texts.remember(tree, expression_str)
        return tree

    original_init = current(before, validators.Validator, "__init__")
    original_validate = current(before, validators.Validator, "validate")

    def init(
        self: validators.Validator,
        expression: Node,
        expression_attribute_names: dict[str, str],
        expression_attribute_values: dict[str, dict[str, Any]],
        item: Any,
        table: Any,
    ) -> None:
        original_init(self, expression, expression_attribute_names, expression_attribute_values, item, table)
        text = texts.text_of(expression) if type(self) is validators.UpdateExpressionValidator else None
        self._onceflow_passed_key = None if text is None else passed_key(text, expression_attribute_names, table)

    def validate(self: validators.Validator) -> Node:
        key = getattr(self, "_onceflow_passed_key", None)
        if key is None or [type(p) for p in self.processors[: len(STATIC_PASSES)]] != list(STATIC_PASSES):
            return original_validate(self)
        node = self.node_to_validate
        if key in passed:
            for processor in self.processors[len(STATIC_PASSES) :]:
                node = processor.traverse(node)
            return node
        for processor in self.processors[: len(STATIC_PASSES)]:
            node = processor.traverse(node)  # raises on a failure: nothing remembered
        with lock:
            if len(passed) >= CACHE_SIZE:
                passed.pop(next(iter(passed)))
            passed[key] = None
        for processor in self.processors[len(STATIC_PASSES) :]:
            node = processor.traverse(node)
        return node

    return [
        (UpdateExpressionParser, "make", classmethod(make)),
        (validators.Validator, "__init__", init),
        (validators.Validator, "validate", validate),
    ]

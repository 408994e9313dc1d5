"""The `update_expressions` speed-up: an UpdateExpression is parsed once per text, and its tree is
copied node by node instead of by `copy.deepcopy`.

moto parses an UpdateItem's UpdateExpression twice per request (its response class reads the
placeholders, then its backend parses it again), and its validator deep-copies the tree before
resolving it against the item (`copy.deepcopy` of a tree whose every node links to its parent): a
third of what an UpdateItem cost, the pipeline's "Mark as sent" among them. Here:

- `UpdateExpressionParser.make` answers a text parsed before with a copy of the tree it made then
  (a text that does not parse raises as it did, every time; at most CACHE_SIZE texts are kept,
  oldest dropped first);
- each of the validator's ten passes over the tree (a DepthFirstTraverser each) finds the node
  classes it processes once per pass, not once per node, and tells whether a node is one through a
  per-pass table of the node's class instead of an abstract-class isinstance per node;
- the validator's `deepcopy` copies a parsed tree (a root `Node`) node by node: each node copied with
  its `type`, a new `children` list of copied children and `parent` linked to its copy, children that
  are not nodes shared when immutable (str, int, float, bool, None) and deep-copied otherwise; any
  other value (the validators also copy list values) goes to `copy.deepcopy` as before.

- DynamoDB's response class, which reads only the placeholders an UpdateItem's (or a transaction's
  Update's) expression names (`find_clauses`, a read), is handed the tree parsed for that text
  itself, not a copy: the copies are for the validator, which resolves the tree in place.

Nodes of moto's update-expression trees hold nothing else (ast_nodes.Node: type, children, parent),
which tests/engine/test_update_expressions.py checks on every node class and compares, tree by
tree, with `copy.deepcopy`'s.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

from moto.dynamodb import responses as dynamodb_responses
from moto.dynamodb.parsing import validators
from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node
from moto.dynamodb.parsing.expressions import UpdateExpressionParser

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import UPDATE_EXPRESSIONS

Patch = tuple[Any, str, Any]
SPEEDUPS = (UPDATE_EXPRESSIONS,)
CACHE_SIZE = 512
NODE_ATTRIBUTES = frozenset({"type", "children", "parent"})
_IMMUTABLE = (str, int, float, bool, type(None))


def moto_needs() -> list[Need]:
    return [
        need(UpdateExpressionParser, "make", "expression_str"),
        need(dynamodb_responses, "UpdateExpressionParser"),  # update_item and transact_write_items read trees
        need(validators, "deepcopy"),  # Validator.__init__ copies the tree through it
        need(validators.Validator, "__init__", "expression"),
        need(Node, "__init__", "children"),
        need(DepthFirstTraverser, "traverse", "node"),
        need(DepthFirstTraverser, "traverse_node_recursively", "node", "child_id"),
        need(DepthFirstTraverser, "nodes_to_be_processed"),
        need(DepthFirstTraverser, "process", "node"),
        need(DepthFirstTraverser, "pre_processing_of_child", "parent_node", "child_id"),
    ]


def copy_tree(node: Node, parent: Node | None = None) -> Node:
    """`node` and the nodes under it, each a new object; values that are not nodes shared when immutable."""
    new = object.__new__(type(node))
    new.__dict__.update(node.__dict__)
    new.parent = parent
    children = node.children
    if children is not None:
        new.children = [
            copy_tree(child, new)
            if isinstance(child, Node)
            else child
            if isinstance(child, _IMMUTABLE)
            else copy.deepcopy(child)
            for child in children
        ]
    return new


def copyable(value: Any) -> bool:
    """A tree copy_tree copies as deepcopy does: a root node holding only type, children and parent."""
    return isinstance(value, Node) and value.parent is None and _plain(value)


def _plain(node: Node) -> bool:
    if not NODE_ATTRIBUTES.issuperset(node.__dict__):
        return False
    return all(_plain(child) for child in node.children or () if isinstance(child, Node))


def tree_deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """What validators.deepcopy does, with a parsed tree copied node by node."""
    if memo is None and copyable(value):
        return copy_tree(value)
    return copy.deepcopy(value, memo)


def traverse(traverser: DepthFirstTraverser, node: Any) -> Any:
    """DepthFirstTraverser.traverse_node_recursively from `node`, with the classes to process read
    once: children first, left to right (pre_processing_of_child before each), then the node itself
    processed when it is of a class to process, its result put in its place under the same parent.
    What a node's class is to a pass (a Node, one to process, by which processor) is worked out once
    per class and set of classes; the pass's processing map is read once, and a pass that keeps
    DepthFirstTraverser's no-op pre_processing_of_child is not called for each child."""
    processed_classes = traverser.nodes_to_be_processed()
    cls = type(traverser)
    plain_process = cls.process is DepthFirstTraverser.process
    mapping = traverser._processing_map() if plain_process else {}  # type: ignore[attr-defined]
    handled, processors = tuple(mapping), list(mapping.values())
    kinds = _KINDS.setdefault((processed_classes, handled), {})
    pre_child = (
        None
        if cls.pre_processing_of_child is DepthFirstTraverser.pre_processing_of_child
        else traverser.pre_processing_of_child
    )

    def kind(value: Any) -> tuple[bool, bool, int]:
        found = kinds.get(type(value))
        if found is None:
            # DepthFirstTraverser.process: the first class of the processing map the node is one of.
            first = next((i for i, c in enumerate(handled) if isinstance(value, c)), -1)
            found = kinds[type(value)] = (isinstance(value, Node), isinstance(value, processed_classes), first)
        return found

    # `walk` is handed itself rather than closing over its own name: a function that refers to itself
    # waits, with all it holds, for the cyclic collector (one per pass, ten passes per UpdateItem).
    def walk(current: Any, child_id: int, again: Callable[[Any, int, Any], Any]) -> Any:
        is_node, to_process, position = kind(current)
        if not is_node:
            return current
        parent = current.parent
        children = current.children
        if children is not None:
            for index, child in enumerate(children):
                if pre_child is not None:
                    pre_child(current, index)
                again(child, index, again)
        if to_process:
            current = processors[position](current) if position >= 0 else traverser.process(current)
            current.parent = parent
            if parent:
                parent.children[child_id] = current
        return current

    return walk(node, -1, walk)


# (classes a pass processes, its processing map's classes) -> {node class: (a Node, one to process,
# the position of the processor DepthFirstTraverser.process would pick, or -1)}
_KINDS: dict[tuple[tuple[type, ...], tuple[type, ...]], dict[type, tuple[bool, bool, int]]] = {}


def _plain_traverser(traverser: DepthFirstTraverser) -> bool:
    """A traverser that walks as DepthFirstTraverser does (no class of moto's overrides the walk)."""
    cls = type(traverser)
    return all(
        getattr(cls, name) is getattr(DepthFirstTraverser, name)
        for name in ("traverse_node_recursively", "nodes_to_be_processed")
    )


class TreesToRead:
    """What DynamoDB's response class sees as UpdateExpressionParser: `make` answers the kept tree of a
    text (it only reads it), parsing the text on its first use as moto's parser would."""

    def __init__(self, parsed_tree: Callable[[str], tuple[Node, bool]]):
        self._parsed_tree = parsed_tree

    def make(self, expression_str: str) -> Node:
        return self._parsed_tree(expression_str)[0]


def patches() -> list[Patch]:
    original_make = UpdateExpressionParser.make.__func__  # type: ignore[attr-defined]
    parsed: dict[str, Node] = {}
    lock = threading.Lock()

    def parsed_tree(expression_str: str) -> tuple[Node, bool]:
        """(the tree parsed for this text, whether it is the kept one: copy it before changing it)."""
        tree = parsed.get(expression_str)
        if tree is None:
            tree = original_make(UpdateExpressionParser, expression_str)
            if not copyable(tree):
                return tree, False
            with lock:
                if len(parsed) >= CACHE_SIZE:
                    parsed.pop(next(iter(parsed)))
                parsed[expression_str] = tree
        return tree, True

    def make(cls: type[UpdateExpressionParser], expression_str: str) -> Node:
        tree, kept = parsed_tree(expression_str)
        return copy_tree(tree) if kept else tree

    original_traverse = DepthFirstTraverser.traverse

    def traverse_once(self: DepthFirstTraverser, node: Any) -> Any:
        return traverse(self, node) if _plain_traverser(self) else original_traverse(self, node)

    return [
        (UpdateExpressionParser, "make", classmethod(make)),
        (dynamodb_responses, "UpdateExpressionParser", TreesToRead(parsed_tree)),
        (DepthFirstTraverser, "traverse", traverse_once),
        (validators, "deepcopy", tree_deepcopy),
    ]

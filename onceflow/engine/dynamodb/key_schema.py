"""Key and index-key attributes checked against the table's schema on every write, as DynamoDB does.

moto 5.2.5 checks the table's own key on PutItem but not the keys of its secondary indexes: an item
whose `pending_since` is a number went into a table whose `pending-since` index declares it a
string, where DynamoDB refuses the write. Here:

- index keys: an item written by PutItem, BatchWriteItem, UpdateItem (the item as the update leaves
  it) or TransactWriteItems whose index key attribute has another type than the attribute definition
  is refused with "One or more parameter values were invalid: Type mismatch for Index Key <attribute>
  Expected: S Actual: N IndexName: <index>" (the alphabetically first index it keys), one over the
  key size limits (2048 bytes for a partition key, 1024 for a sort key) as PutItem refuses a table
  key; the update is not applied;
- lookup keys: a Key of GetItem, DeleteItem, UpdateItem or a BatchWriteItem request (and a
  BatchWriteItem item's table key) that is not exactly the table's key attributes with their types
  is "The provided key element does not match the schema" (moto named a type mismatch or accepted it);
- transactions: a wrong type found while the transaction runs cancels it, TransactionCanceledException
  with the reason `ValidationError` and the message above (a Put's table key: "Type mismatch for key
  <attribute> expected: S actual: N"; an Update, Delete or ConditionCheck Key: "The provided key
  element does not match the schema"); moto answered a top-level ValidationException or accepted it.

AWS documents the limits and that a type mismatch violates the index key
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.OnlineOps.ViolationDetection.html,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html) and the
`ValidationError` cancellation reason
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html); the
messages are DynamoDB's as public conformance suites captured them against AWS (docs/TESTING.md).
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Mapping
from typing import Any

from moto.dynamodb.exceptions import (
    HashKeyTooLong,
    InvalidAttributeTypeError,
    MockValidationException,
    ProvidedKeyDoesNotExist,
    RangeKeyTooLong,
)
from moto.dynamodb.limits import HASH_KEY_MAX_LENGTH, RANGE_KEY_MAX_LENGTH
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.dynamodb.parsing.validators import TypeMismatchValidator
from moto.dynamodb.responses import DynamoHandler

from onceflow.engine.dynamodb.validation import refuse_action
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
KEY_MISMATCH = ProvidedKeyDoesNotExist.provided_key_does_not_exist_msg
LOOKUP_ACTIONS = frozenset({"GetItem", "DeleteItem", "UpdateItem"})


class ValidationError(Exception):
    """Raised inside a transaction: moto names a cancellation reason after the exception's class."""


_transaction = threading.local()


def moto_needs() -> list[Need]:
    return [
        need(Table, "put_item", "item_attrs"),
        need(Table, "all_indexes"),
        need(Table, "get_item", "hash_key", "range_key"),
        need(Table, "delete_item", "hash_key", "range_key"),
        need(DynamoDBBackend, "update_item", "table_name", "key"),
        need(DynamoDBBackend, "get_item", "table_name", "keys"),
        need(DynamoDBBackend, "transact_write_items", "transact_items"),
        need(TypeMismatchValidator, "check_for_type_mismatch", "node"),
        need(DynamoHandler, "call_action"),
        need(DynamoHandler, "_get_action"),
        need(ProvidedKeyDoesNotExist, "provided_key_does_not_exist_msg"),
    ]


def patches(before: list[Patch]) -> list[Patch]:
    return [*index_keys(before), *lookup_keys(before), *transactions(before)]


def _declared_types(table: Table) -> dict[str, str]:
    return {d["AttributeName"]: d["AttributeType"] for d in table.attr or []}


def _index_keys(table: Table) -> dict[str, tuple[str, str, int]]:
    """Each index key attribute: (the alphabetically first index it keys, its declared type, its size limit)."""
    declared = _declared_types(table)
    keys: dict[str, tuple[str, str, int]] = {}
    for index in sorted(table.all_indexes(), key=lambda i: i.name):
        for element in index.schema:
            name = element["AttributeName"]
            limit = HASH_KEY_MAX_LENGTH if element["KeyType"] == "HASH" else RANGE_KEY_MAX_LENGTH
            keys.setdefault(name, (index.name, declared.get(name, ""), limit))
    return keys


def index_key_problem(table: Table, attributes: Mapping[str, DynamoType], updating: bool) -> str | None:
    """What DynamoDB says of the item's index key attributes, or None."""
    for name, (index, declared, limit) in _index_keys(table).items():
        value = attributes.get(name)
        if value is None:
            continue
        if value.type != declared:
            return (
                f"One or more parameter values were invalid: Type mismatch for Index Key {name} "
                f"Expected: {declared} Actual: {value.type} IndexName: {index}"
            )
        if value.size() > limit:
            if updating:
                return "The update expression attempted to update a secondary index key beyond allowed size limits"
            return (HashKeyTooLong if limit == HASH_KEY_MAX_LENGTH else RangeKeyTooLong).key_too_large_msg
    return None


def key_matches(table: Table, key: Any) -> bool:
    """The key names exactly the table's key attributes, each with its declared type."""
    schema = {table.hash_key_attr: table.hash_key_type}
    if table.range_key_attr is not None:
        schema[table.range_key_attr] = table.range_key_type
    if not isinstance(key, dict) or set(key) != set(schema):
        return False
    return all(isinstance(value, dict) and list(value) == [schema[name]] for name, value in key.items())


def _in_transaction() -> bool:
    return getattr(_transaction, "lookups", None) is not None


def _refusal(message: str) -> Exception:
    return ValidationError(message) if _in_transaction() else MockValidationException(message)


def index_keys(before: list[Patch]) -> list[Patch]:
    # current(): the index_query speed-up keeps its index of each write through these too
    original_put = current(before, Table, "put_item")
    original_update = current(before, DynamoDBBackend, "update_item")

    def put_item(self: Table, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if key_matches(self, {k: item_attrs.get(k) for k in self.table_key_attrs if k in item_attrs}):
            indexed = {name: DynamoType(item_attrs[name]) for name in _index_keys(self) if name in item_attrs}
            problem = index_key_problem(self, indexed, updating=False)
            if problem:
                raise _refusal(problem)
        try:
            return original_put(self, item_attrs, *args, **kwargs)
        except InvalidAttributeTypeError as error:
            if _in_transaction():
                raise ValidationError(error.message) from error
            raise

    @functools.wraps(original_update)  # moto's signature stays visible to the shape check
    def update_item(self: DynamoDBBackend, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        table = self.get_table(table_name)
        if not _index_keys(table) or not key_matches(table, key):
            return original_update(self, table_name, key, *args, **kwargs)
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        existing = table.get_item(hash_value, range_value)
        # The item's copy, not its attrs': moto's Item.__deepcopy__ copies them without re-checking the
        # item's size at every attribute (deepcopy of the size-limited dict itself does, in n² time).
        kept = copy.deepcopy(existing).attrs if existing is not None else None
        item = original_update(self, table_name, key, *args, **kwargs)
        problem = index_key_problem(table, item.attrs, updating=True)
        if problem:
            if kept is None:
                table.delete_item(hash_value, range_value)
            else:
                item.attrs = kept
            raise _refusal(problem)
        return item

    def check_for_type_mismatch(self: TypeMismatchValidator, node: Any) -> Any:
        return node  # the updated item's index keys are checked as a whole, in DynamoDB's words, above

    return [
        (Table, "put_item", put_item),
        (DynamoDBBackend, "update_item", update_item),
        (TypeMismatchValidator, "check_for_type_mismatch", check_for_type_mismatch),
    ]


def _lookup_keys(handler: DynamoHandler, action: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """(table name, key) of each lookup the request makes; a BatchWriteItem put's key as a lookup too."""
    if action in LOOKUP_ACTIONS:
        return [(body.get("TableName", ""), body.get("Key"))]
    if action != "BatchWriteItem":
        return []
    keys = []
    for table_name, requests in (body.get("RequestItems") or {}).items():
        table = handler.dynamodb_backend.tables.get(table_name)
        for request in requests if table is not None else []:
            if "DeleteRequest" in request:
                keys.append((table_name, request["DeleteRequest"].get("Key")))
            elif "PutRequest" in request:
                item = request["PutRequest"].get("Item") or {}
                keys.append((table_name, {k: item[k] for k in table.table_key_attrs if k in item}))
    return keys


def lookup_keys(before: list[Patch]) -> list[Patch]:
    original = current(before, DynamoHandler, "call_action")

    def call_action(self: DynamoHandler) -> Any:
        body = getattr(self, "params", None) or {}
        action = self._get_action()
        for table_name, key in _lookup_keys(self, action, body):
            table = self.dynamodb_backend.tables.get(table_name)
            if table is not None and not key_matches(table, key):
                refuse_action(self, ProvidedKeyDoesNotExist())
                break
        return original(self)

    return [(DynamoHandler, "call_action", call_action)]


def transactions(before: list[Patch]) -> list[Patch]:
    original_transact = current(before, DynamoDBBackend, "transact_write_items")
    original_get = current(before, DynamoDBBackend, "get_item")

    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        lookups = {id(body.get("Key")) for entry in transact_items for op, body in entry.items() if op != "Put"}
        _transaction.lookups = lookups
        try:
            original_transact(self, transact_items)
        finally:
            _transaction.lookups = None

    def get_item(self: DynamoDBBackend, table_name: str, keys: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        lookups = getattr(_transaction, "lookups", None)
        if lookups and id(keys) in lookups and not key_matches(self.get_table(table_name), keys):
            raise ValidationError(KEY_MISMATCH)
        return original_get(self, table_name, keys, *args, **kwargs)

    return [
        (DynamoDBBackend, "transact_write_items", transact_write_items),
        (DynamoDBBackend, "get_item", get_item),
    ]

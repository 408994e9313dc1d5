"""Queries of a global secondary index that read the index, not the whole table (the `index_query`
speed-up).

moto answers a Query on a GSI by sorting every item of the table (`Table.all_items`, a Python
comparison per pair) and then testing each one against the key condition. The reconciler queries
the sparse `pending-since` index once per shard on every run: in a long local run each query cost
more with every event ever recorded, although the index held only the few pending ones (issue 21).

Here each table keeps, per GSI with one partition key attribute, the primary keys of the items that
carried each partition key value when they were written. It is built by one walk of the table at
the first query of that index and kept up to date where moto gives an item attributes: Table.put_item
(PutItem, BatchWriteItem, a transaction's Put, UpdateItem creating an item, PartiQL, a rollback's
restore) and DynamoDBBackend.update_item (which changes the stored item in place). A key whose item
has gone or no longer carries the value is dropped when a query meets it. The query itself is still
moto's, over only those items (in the order `all_items` gives them): the same conditions, sorting,
paging, filters and projections, so the answer is moto's answer.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any

from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models.table import GlobalSecondaryIndex, Table

from onceflow.engine.registry import current
from onceflow.engine.speedups import INDEX_QUERY

Patch = tuple[Any, str, Any]
SPEEDUPS = (INDEX_QUERY,)
_ATTRIBUTE = "_onceflow_gsi_keys"


def moto_needs() -> list[Any]:
    from onceflow.engine.moto_shape import need

    return [
        need(Table, "query", "index_name", "hash_key_conditions"),
        need(Table, "put_item", "item_attrs"),
        need(Table, "all_items"),
        need(Table, "all_indexes"),
        need(dynamodb_models.DynamoDBBackend, "update_item", "table_name", "key"),
        need(dynamodb_models.DynamoDBBackend, "get_table", "table_name"),
        need(GlobalSecondaryIndex, "__init__", "index_name", "schema"),
    ]


class _IndexKeys:
    """One GSI's partition key attribute and, per value, the primary keys of items written with it."""

    def __init__(self, attribute: str):
        self.attribute = attribute
        self.keys: dict[Any, set[tuple[Any, Any]]] = {}

    def add(self, item: Any) -> None:
        value = item.attrs.get(self.attribute)
        if value is not None:
            self.keys.setdefault(value, set()).add((item.hash_key, item.range_key))


def _partition_attribute(index: Any) -> str | None:
    hashes = [key["AttributeName"] for key in index.schema if key["KeyType"] == "HASH"]
    return hashes[0] if len(hashes) == 1 else None


def _index_keys(table: Any, index_name: str) -> _IndexKeys | None:
    """The kept keys of `index_name` (built now by one walk if it is new); None: not a GSI this handles."""
    index = next((i for i in table.global_indexes or [] if i.name == index_name), None)
    attribute = _partition_attribute(index) if index is not None else None
    if attribute is None:
        return None
    kept: dict[str, _IndexKeys] = table.__dict__.setdefault(_ATTRIBUTE, {})
    keys = kept.get(index_name)
    if keys is None or keys.attribute != attribute:
        keys = kept[index_name] = _IndexKeys(attribute)
        for item in Table.all_items(table):
            keys.add(item)
    return keys


def _stored(table: Any, key: tuple[Any, Any]) -> Any:
    hash_key, range_key = key
    if table.range_key_attr:
        return table.items.get(hash_key, {}).get(range_key)
    return table.items.get(hash_key)


def _candidates(table: Any, keys: _IndexKeys, value: Any) -> list[Any]:
    """The items that carry `value` now, sorted as Table.all_items sorts; stale keys are dropped."""
    found = []
    bucket = keys.keys.get(value, set())
    for key in list(bucket):
        item = _stored(table, key)
        current = item.attrs.get(keys.attribute) if item is not None else None
        if current is None or current != value:
            bucket.discard(key)
        else:
            found.append(item)
    if not bucket:
        keys.keys.pop(value, None)
    return sorted(found, key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key)


def _remember(table: Any, item: Any) -> None:
    for keys in table.__dict__.get(_ATTRIBUTE, {}).values():
        keys.add(item)


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original_query = Table.query
    original_put = Table.put_item
    original_update = current(before, dynamodb_models.DynamoDBBackend, "update_item")  # plain_updates' when on
    query_signature = inspect.signature(original_query)

    @functools.wraps(original_query)  # moto's signature stays visible to the shape check
    def query(self: Any, *args: Any, **kwargs: Any) -> Any:
        arguments = query_signature.bind(self, *args, **kwargs).arguments
        index_name, conditions = arguments.get("index_name"), arguments.get("hash_key_conditions") or []
        keys = _index_keys(self, index_name) if index_name else None
        value = next((v for name, v in conditions if keys is not None and name == keys.attribute), None)
        if keys is None or value is None:
            return original_query(self, *args, **kwargs)
        candidates = _candidates(self, keys, value)
        self.__dict__["all_items"] = lambda: list(candidates)  # moto's query walks these only
        try:
            return original_query(self, *args, **kwargs)
        finally:
            del self.__dict__["all_items"]

    @functools.wraps(original_put)
    def put_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = original_put(self, *args, **kwargs)
        _remember(self, item)
        return item

    @functools.wraps(original_update)
    def update_item(self: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
        item = original_update(self, table_name, *args, **kwargs)
        if item is not None:
            _remember(self.get_table(table_name), item)
        return item

    return [
        (Table, "query", query),
        (Table, "put_item", put_item),
        (dynamodb_models.DynamoDBBackend, "update_item", update_item),
    ]

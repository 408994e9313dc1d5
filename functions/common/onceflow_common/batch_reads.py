"""Items read with DynamoDB's BatchGetItem: a hundred keys a request (its limit), the keys DynamoDB
leaves unprocessed (throttling, the response's 16 MB) asked for again
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_KEYS_PER_REQUEST = 100


def batch_get(
    dynamodb: Any, table: str, keys: Sequence[dict[str, Any]], rounds: int, **options: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The items found for `keys` (distinct: BatchGetItem refuses a request that names a key twice) and
    the keys still unprocessed after asking `rounds` times; `options` are the table's request options
    (ConsistentRead, ProjectionExpression, ...)."""
    items: list[dict[str, Any]] = []
    unprocessed: list[dict[str, Any]] = []
    for start in range(0, len(keys), MAX_KEYS_PER_REQUEST):
        request: dict[str, Any] = {table: {"Keys": list(keys[start : start + MAX_KEYS_PER_REQUEST]), **options}}
        for _ in range(rounds):
            response = dynamodb.batch_get_item(RequestItems=request)
            items.extend(response.get("Responses", {}).get(table, []))
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
        unprocessed.extend(request.get(table, {}).get("Keys", []))
    return items, unprocessed

"""TransactGetItems honours each Get's ProjectionExpression, as DynamoDB does; moto 5.2 returns whole
items. The workflow's `Look up earlier record` projects the stored records so that the payload is
not copied into the execution's state (256 KiB limit); on moto the whole business row would come
back and a test could never see that the state stays small.

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Get.html (ProjectionExpression:
"the attributes to retrieve from the specified table or index"; a missing item has no Item).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from moto.dynamodb.models.dynamo_type import Item
from moto.dynamodb.responses import DynamoHandler, ProjectionExpressionParser

Patch = tuple[Any, str, Any]


def _projected(item: dict[str, Any], get: dict[str, Any]) -> dict[str, Any]:
    paths = ProjectionExpressionParser(get["ProjectionExpression"], get.get("ExpressionAttributeNames")).parse()
    return Item(hash_key=None, range_key=None, attrs=item).project(paths).to_json()["Attributes"]  # type: ignore[arg-type]


def _with_projection(original: Callable[[DynamoHandler], Any]) -> Callable[[DynamoHandler], Any]:
    @functools.wraps(original)
    def transact_get_items(handler: DynamoHandler) -> Any:
        outcome = original(handler)
        gets = [entry["Get"] for entry in handler.body["TransactItems"]]
        for get, response in zip(gets, outcome.result["Responses"], strict=True):
            if "Item" in response and get.get("ProjectionExpression"):
                response["Item"] = _projected(response["Item"], get)
        return outcome

    return transact_get_items


def moto_needs() -> list[Any]:
    """What this module relies on in the pinned moto (see onceflow/engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(DynamoHandler, "transact_get_items"),
        need(ProjectionExpressionParser, "parse"),
        need(Item, "project", "projection_expressions"),
    ]


def patches() -> list[Patch]:
    return [(DynamoHandler, "transact_get_items", _with_projection(DynamoHandler.transact_get_items))]

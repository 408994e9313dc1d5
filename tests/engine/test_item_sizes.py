"""DynamoDB's item-size check counts what moto counts and refuses what moto refuses whether a name and an
S or N value are measured directly (the `item_sizes` speed-up) or through DynamoType.size() as moto does:
compared value by value with moto's own count, the limit on both sides of it, and through the API on
the embedded engine (`ONCEFLOW_SPEEDUPS_OFF=item_sizes` runs this file the other way).

AWS: an item is at most 400 KB, its attribute names and values counted in UTF-8
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.exceptions import ItemSizeTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
from moto.dynamodb.models.utilities import bytesize

from onceflow.engine.speedups import item_sizes
from tests.engine.harness import Account

MOTO_SET = LimitedSizeDict.__dict__["__setitem__"]  # this module is imported before any engine starts
VALUES: list[dict[str, Any]] = [
    {"S": "pending"},
    {"S": "naïve — ünïcödé ✓"},
    {"S": ""},
    {"N": "1800000000"},
    {"N": "-0.000123E+10"},
    {"B": b"\x00\x01binary"},
    {"B": "YmFzZTY0"},
    {"SS": ["a", "bé"]},
    {"NS": ["1", "22"]},
    {"BS": [b"x", b"yz"]},
    {"L": [{"S": "a"}, {"N": "1"}, {"M": {"k": {"S": "v"}}}]},
    {"M": {"nested": {"L": [{"BOOL": True}]}, "é": {"NULL": True}}},
    {"BOOL": False},
    {"NULL": True},
]


def moto_size(item: Any) -> int:
    """What moto's LimitedSizeDict counts for a name or a value."""
    return item.size() if type(item) is DynamoType else bytesize(str(item))


@pytest.mark.parametrize("value", VALUES, ids=lambda value: next(iter(value)))
def test_a_value_counts_what_moto_counts(value: dict[str, Any]) -> None:
    assert item_sizes.size_of(DynamoType(value)) == moto_size(DynamoType(value))


@pytest.mark.parametrize("name", ["status", "é_attribute", "ünïcödé ✓"])
def test_a_name_counts_its_utf8_bytes(name: str) -> None:
    assert item_sizes.size_of(name) == moto_size(name) == len(name.encode("utf-8"))


@pytest.mark.parametrize("set_attribute", [MOTO_SET, item_sizes.set_attribute], ids=["moto", "item_sizes"])
def test_the_limit_falls_where_moto_puts_it(set_attribute: Any) -> None:
    """An attribute that brings the item to exactly the limit is set; one byte more is refused, and the
    item keeps what it had."""
    item = LimitedSizeDict()
    for name, value in (("pk", {"S": "k"}), ("é", {"S": "ü" * 10}), ("n", {"N": "12345"})):
        set_attribute(item, name, DynamoType(value))
    for index, value in enumerate(VALUES):  # every kind of value already in the item is counted as moto counts it
        set_attribute(item, f"kind{index}ü", DynamoType(value))
    used = sum(map(moto_size, item.keys())) + sum(map(moto_size, item.values()))
    room = item_sizes.LIMIT - used - len("big")
    set_attribute(item, "big", DynamoType({"S": "x" * room}))
    assert item["big"].value == "x" * room
    before = dict(item)
    with pytest.raises(ItemSizeTooLarge):
        set_attribute(item, "one", DynamoType({"S": ""}))  # the name's three bytes
    assert dict(item) == before


def test_an_item_over_the_limit_is_refused_through_the_api(account: Account) -> None:
    dynamodb = account.client("dynamodb")
    dynamodb.create_table(
        TableName="sizes",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.put_item(TableName="sizes", Item={"pk": {"S": "fits"}, "blob": {"S": "x" * 390_000}})
    with pytest.raises(ClientError) as refused:
        dynamodb.put_item(TableName="sizes", Item={"pk": {"S": "too-big"}, "blob": {"S": "x" * 410_000}})
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "Item size has exceeded the maximum allowed size" in refused.value.response["Error"]["Message"]
    with pytest.raises(ClientError, match="maximum allowed size"):
        dynamodb.update_item(
            TableName="sizes",
            Key={"pk": {"S": "fits"}},
            UpdateExpression="SET more = :more",
            ExpressionAttributeValues={":more": {"S": "y" * 20_000}},
        )
    assert len(dynamodb.get_item(TableName="sizes", Key={"pk": {"S": "fits"}})["Item"]["blob"]["S"]) == 390_000
    assert "more" not in dynamodb.get_item(TableName="sizes", Key={"pk": {"S": "fits"}})["Item"]

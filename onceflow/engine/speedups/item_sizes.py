"""The `item_sizes` speed-up: DynamoDB's item-size check adds up a string's or a number's size without
moto's chain of type tests.

moto checks an item's size (AWS's 400 KB limit:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items) every
time it sets one of its attributes (`LimitedSizeDict.__setitem__`): it sums the size of every name and
value already there, each value through `DynamoType.size()` (a number? a set? a list? a map? a
boolean? else its UTF-8 length), then the new one's. An item built attribute by attribute pays that
sum once per attribute: 2 x 7 sizes for an item of 7 attributes, each through the chain (the pipeline's
transaction writes two items, its "Mark as sent" sets four attributes of a nine-attribute item).

Here a name, and a value of type S or N whose value is text, are measured directly (a string's UTF-8
length; a number's text length, which is what moto counts for it); any other value goes to
`DynamoType.size()` as before. The sum, the limit (405,000 bytes, moto's) and the error
(`ItemSizeTooLarge`) are moto's. tests/engine/test_item_sizes.py compares the sizes with moto's value by
value, and the limit on both sides of it.
"""

from __future__ import annotations

from typing import Any

from moto.dynamodb.exceptions import ItemSizeTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
from moto.dynamodb.models.utilities import bytesize

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import ITEM_SIZES

Patch = tuple[Any, str, Any]
SPEEDUPS = (ITEM_SIZES,)
LIMIT = 405_000  # moto's: between AWS's documented 400 KB and the 409-410 KB it measured


def moto_needs() -> list[Need]:
    return [
        need(LimitedSizeDict, "__setitem__", "key", "value"),
        need(DynamoType, "size"),
        need(DynamoType, "__init__", "type_as_dict"),  # keeps `type` and `value`
    ]


def size_of(item: Any) -> int:
    """What moto counts for an item's attribute name or value."""
    if type(item) is str:
        return _utf8_size(item)
    if type(item) is DynamoType:
        value = item.value
        if type(value) is str:
            if item.type == "S":
                return _utf8_size(value)
            if item.type == "N":
                return len(value)
        return item.size()
    return bytesize(str(item))


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def set_attribute(self: LimitedSizeDict, key: str, value: Any) -> None:
    """LimitedSizeDict.__setitem__: the item's size with this attribute added, checked, then set."""
    current = sum(map(size_of, self.keys())) + sum(map(size_of, self.values()))
    if current + bytesize(key) + size_of(value) > LIMIT:
        raise ItemSizeTooLarge
    dict.__setitem__(self, key, value)


def patches() -> list[Patch]:
    return [(LimitedSizeDict, "__setitem__", set_attribute)]

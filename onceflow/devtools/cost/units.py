"""Billing units as AWS counts them, from item and request sizes.

DynamoDB item size: the sum of attribute name and value sizes (strings and binary by their
UTF-8/byte length, numbers about one byte per two significant digits plus one, booleans and
null one byte, lists and maps 3 bytes plus one byte per element):
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
Units: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/capacity-mode.html
(on-demand: a write unit per 1 KB, a strongly consistent read unit per 4 KB, half for an
eventually consistent read; a transaction costs two of them per item, prepare and commit:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling).
A write whose condition fails still consumes the units of the item it checked (at least one).
SNS and SQS bill every 64 KB chunk of a request as one request.
"""

from __future__ import annotations

import math
from typing import Any

KB = 1024
CHUNK = 64 * KB


def _number_size(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").lstrip("0") or "0"
    significant = digits.split("e")[0].split("E")[0].rstrip("0") or "0"
    return math.ceil(len(significant) / 2) + 1


def value_size(value: dict[str, Any]) -> int:
    """Size of one attribute value in DynamoDB JSON ({"S": ...}, {"N": ...}, {"M": {...}}, ...)."""
    [(kind, content)] = value.items()
    if kind == "S":
        return len(content.encode("utf-8"))
    if kind == "N":
        return _number_size(str(content))
    if kind == "B":
        return len(content) if isinstance(content, bytes) else len(str(content).encode("utf-8")) * 3 // 4
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(item.encode("utf-8")) for item in content)
    if kind == "NS":
        return sum(_number_size(str(item)) for item in content)
    if kind == "BS":
        return sum(len(item) for item in content)
    if kind == "L":
        return 3 + sum(1 + value_size(item) for item in content)
    if kind == "M":
        return 3 + sum(1 + len(name.encode("utf-8")) + value_size(item) for name, item in content.items())
    raise ValueError(f"not a DynamoDB attribute value: {value!r}")


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes DynamoDB counts for an item in DynamoDB JSON (0 for no item)."""
    if not item:
        return 0
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def write_units(size: int, transactional: bool = False) -> int:
    """Write request units for writing (or condition-checking) an item of `size` bytes."""
    units = max(1, math.ceil(size / KB))
    return 2 * units if transactional else units


def read_units(size: int, consistent: bool, transactional: bool = False) -> float:
    """Read request units for reading an item of `size` bytes (a missing item still costs the minimum)."""
    blocks = max(1, math.ceil(size / (4 * KB)))
    if transactional:
        return 2.0 * blocks
    return float(blocks) if consistent else blocks / 2


def chunks(size: int) -> int:
    """Billed requests for one SNS or SQS request of `size` bytes."""
    return max(1, math.ceil(size / CHUNK))

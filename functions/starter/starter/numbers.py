"""Numbers a body may hold only if every service on the way carries them unchanged.

Python reads `1e400` as `inf` and writes it back as `Infinity`, which is not JSON: Step Functions
rejects such an input at StartExecution. Integers beyond DynamoDB's 38 digits cannot be stored as
numbers, and a payload field may become one in the business item.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from starter.limits import DYNAMODB_MAX_DIGITS, DYNAMODB_MAX_MAGNITUDE, DYNAMODB_MIN_MAGNITUDE

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class BadNumber:
    field: str
    rule: str
    detail: str


def _join(path: str, key: str) -> str:
    # A JMESPath-style field name: a.b, a."odd key", a[0]
    part = key if _IDENTIFIER.match(key) else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{path}.{part}" if path else part


def _check(value: int | float) -> tuple[str, str] | None:
    if isinstance(value, float) and not math.isfinite(value):
        return "finite_number", "out of the range of a double (read as infinity): not a JSON number AWS accepts"
    number = Decimal(value) if isinstance(value, int) else Decimal(repr(value))
    if number == 0:
        return None
    if isinstance(value, int) and (digits := len(str(abs(value)).rstrip("0"))) > DYNAMODB_MAX_DIGITS:
        return "dynamodb_number", f"an integer of {digits} digits; DynamoDB numbers have at most {DYNAMODB_MAX_DIGITS}"
    if not DYNAMODB_MIN_MAGNITUDE <= abs(number) <= DYNAMODB_MAX_MAGNITUDE:
        return "dynamodb_number", f"{value!r} is outside DynamoDB's number range (1E-130 to 9.99E+125)"
    return None


def first_bad_number(document: Any) -> BadNumber | None:
    """The first number (depth first) that some service on the way could not carry, or None."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((_join(path, str(key)), child) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", child) for index, child in reversed(list(enumerate(value))))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            problem = _check(value)
            if problem is not None:
                return BadNumber(path or "body", *problem)
    return None

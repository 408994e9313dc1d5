"""A statement's Condition block, decided against a request context as IAM does.

https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html
- operators AND, keys of one operator AND, values of one key OR;
- a key absent from the context makes the condition false, except for the negated operators
  (StringNotEquals, StringNotLike, ArnNotEquals, ArnNotLike, NumericNotEquals, DateNotEquals, ...),
  which are then true, `...IfExists` (true when absent) and `Null` (which tests absence);
- `ForAnyValue:` / `ForAllValues:` for keys with several values
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html);
- context key names are case-insensitive.

Not covered (UnsupportedCondition, which denies rather than guess): IpAddress, Binary, policy
variables (`${aws:username}`) in condition values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

ContextValue = str | Sequence[str]


class UnsupportedCondition(ValueError):
    """An operator this evaluator does not decide."""


@lru_cache(maxsize=4096)
def wildcard(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """`*` any run of characters, `?` one character, everything else literal."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(f"^{body}$", re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def arn_like(pattern: str, value: str) -> bool:
    """ArnLike: the six colon-separated parts each matched with wildcards (the resource part keeps its colons)."""
    wanted, got = pattern.split(":", 5), value.split(":", 5)
    if len(wanted) != 6 or len(got) != 6:
        return False
    return all(wildcard(w).match(g) is not None for w, g in zip(wanted, got, strict=True))


def _number(text: str) -> float:
    return float(text)


def _date(text: str) -> datetime:
    if text.isdigit():
        return datetime.fromtimestamp(int(text))
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _bool(text: str) -> str:
    return str(text).lower()


# operator -> (match one policy value against one context value, negated)
Matcher = Callable[[str, str], bool]
_BASE: dict[str, tuple[Matcher, bool]] = {
    "StringEquals": (lambda p, v: p == v, False),
    "StringNotEquals": (lambda p, v: p == v, True),
    "StringEqualsIgnoreCase": (lambda p, v: p.lower() == v.lower(), False),
    "StringNotEqualsIgnoreCase": (lambda p, v: p.lower() == v.lower(), True),
    "StringLike": (lambda p, v: wildcard(p).match(v) is not None, False),
    "StringNotLike": (lambda p, v: wildcard(p).match(v) is not None, True),
    "ArnEquals": (arn_like, False),
    "ArnLike": (arn_like, False),
    "ArnNotEquals": (arn_like, True),
    "ArnNotLike": (arn_like, True),
    "Bool": (lambda p, v: _bool(p) == _bool(v), False),
    "NumericEquals": (lambda p, v: _number(v) == _number(p), False),
    "NumericNotEquals": (lambda p, v: _number(v) == _number(p), True),
    "NumericLessThan": (lambda p, v: _number(v) < _number(p), False),
    "NumericLessThanEquals": (lambda p, v: _number(v) <= _number(p), False),
    "NumericGreaterThan": (lambda p, v: _number(v) > _number(p), False),
    "NumericGreaterThanEquals": (lambda p, v: _number(v) >= _number(p), False),
    "DateEquals": (lambda p, v: _date(v) == _date(p), False),
    "DateNotEquals": (lambda p, v: _date(v) == _date(p), True),
    "DateLessThan": (lambda p, v: _date(v) < _date(p), False),
    "DateLessThanEquals": (lambda p, v: _date(v) <= _date(p), False),
    "DateGreaterThan": (lambda p, v: _date(v) > _date(p), False),
    "DateGreaterThanEquals": (lambda p, v: _date(v) >= _date(p), False),
}


def _values(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(item).lower() if isinstance(item, bool) else str(item) for item in items]


def _lookup(context: Mapping[str, ContextValue], key: str) -> list[str] | None:
    for name, value in context.items():
        if name.lower() == key.lower():
            return [value] if isinstance(value, str) else list(value)
    return None


def _one(operator: str, key: str, wanted: list[str], context: Mapping[str, ContextValue]) -> bool:
    qualifier, _, name = operator.rpartition(":")
    if_exists = name.endswith("IfExists")
    base = name[: -len("IfExists")] if if_exists else name
    present = _lookup(context, key)
    if base == "Null":
        if qualifier:
            raise UnsupportedCondition(operator)
        return all((_bool(w) == "true") == (present is None or present == []) for w in wanted)
    if base not in _BASE:
        raise UnsupportedCondition(operator)
    match, negated = _BASE[base]
    if present is None:
        # Absent: false, but true for a negated operator and for ...IfExists; ForAllValues is true of nothing.
        return if_exists or negated or qualifier == "ForAllValues"
    if qualifier == "ForAllValues":
        results = [any(match(w, v) for w in wanted) for v in present]
        return all(not r for r in results) if negated else all(results)
    if qualifier == "ForAnyValue":
        results = [any(match(w, v) for w in wanted) for v in present]
        return any(not r for r in results) if negated else any(results)
    if qualifier:
        raise UnsupportedCondition(operator)
    matched = any(match(w, v) for w in wanted for v in present)
    return not matched if negated else matched


def holds(condition: Mapping[str, Mapping[str, Any]] | None, context: Mapping[str, ContextValue]) -> bool:
    """The whole Condition block: every operator, every key of each."""
    if not condition:
        return True
    return all(
        _one(operator, key, _values(value), context)
        for operator, keys in condition.items()
        for key, value in keys.items()
    )

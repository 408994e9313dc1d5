"""Choice rules and retriers as short text a person can read next to an arrow."""

from __future__ import annotations

import json
from typing import Any

# Longest suffix first: "NumericLessThanEquals" must not read as "Equals".
_COMPARISONS = (
    ("GreaterThanEquals", ">="),
    ("LessThanEquals", "<="),
    ("GreaterThan", ">"),
    ("LessThan", "<"),
    ("Equals", "=="),
    ("Matches", "matches"),
)
_NOT_OPERATORS = {"Variable", "Next", "Comment", "Assign", "Output"}


def describe_rule(rule: dict[str, Any]) -> str:
    """`$.status == "sent"`, `not ($.a == $.b)`, `$.x absent`; JSONata conditions as written."""
    if "Condition" in rule:
        return str(rule["Condition"])
    if "And" in rule:
        return " and ".join(f"({describe_rule(r)})" for r in rule["And"])
    if "Or" in rule:
        return " or ".join(f"({describe_rule(r)})" for r in rule["Or"])
    if "Not" in rule:
        return f"not ({describe_rule(rule['Not'])})"
    variable = str(rule.get("Variable", "?"))
    for key, value in rule.items():
        if key in _NOT_OPERATORS:
            continue
        if key == "IsPresent":
            return f"{variable} {'present' if value else 'absent'}"
        if key.startswith("Is"):
            return f"{variable} is {'' if value else 'not '}{key[2:].lower()}"
        by_path = key.endswith("Path")
        base = key[: -len("Path")] if by_path else key
        for suffix, symbol in _COMPARISONS:
            if base.endswith(suffix):
                operand = str(value) if by_path else json.dumps(value)
                return f"{variable} {symbol} {operand}"
    return json.dumps({k: v for k, v in rule.items() if k != "Next"}, sort_keys=True)


def describe_retrier(retrier: dict[str, Any]) -> str:
    """`States.ALL: up to 5 retries, 1s x2, max 30s, FULL jitter` (AWS defaults filled in)."""
    errors = ", ".join(retrier.get("ErrorEquals", []))
    text = (
        f"{errors}: up to {retrier.get('MaxAttempts', 3)} retries, "
        f"{retrier.get('IntervalSeconds', 1)}s x{retrier.get('BackoffRate', 2.0)}"
    )
    if "MaxDelaySeconds" in retrier:
        text += f", max {retrier['MaxDelaySeconds']}s"
    if retrier.get("JitterStrategy", "NONE") != "NONE":
        text += f", {retrier['JitterStrategy']} jitter"
    return text


def error_matches(patterns: list[str], error: str) -> bool:
    """Whether a Retry/Catch ErrorEquals list covers `error`, as Step Functions decides it."""
    if error in patterns or "States.ALL" in patterns:
        return True
    return "States.TaskFailed" in patterns and error != "States.Timeout"

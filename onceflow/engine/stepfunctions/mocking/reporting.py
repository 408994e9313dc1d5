"""Collecting a mock configuration's problems: where, which rule, and what a person should fix."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from onceflow.engine.stepfunctions.mocking.errors import Problem


class JsonObject(dict[str, Any]):
    """A JSON object that remembers the keys it saw more than once (json.loads keeps the last silently)."""

    duplicates: list[str]


def object_pairs(pairs: list[tuple[str, Any]]) -> JsonObject:
    """`object_pairs_hook` for json.loads."""
    result = JsonObject()
    result.duplicates = []
    for key, value in pairs:
        if key in result and key not in result.duplicates:
            result.duplicates.append(key)
        result[key] = value
    return result


def suggest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def trail(*parts: str) -> str:
    return " › ".join(parts)


class Reporter:
    def __init__(self, source: str):
        self.source = source
        self.problems: list[Problem] = []

    def problem(self, where: str, rule: str, message: str) -> None:
        self.problems.append(Problem(self.source, where, rule, message))

    def object(self, value: Any, where: str, what: str) -> JsonObject | None:
        """`value` if it is a JSON object (reporting its duplicate keys), else a problem and None."""
        if not isinstance(value, dict):
            self.problem(where, "object-expected", f"{what} must be a JSON object, not {type(value).__name__}")
            return None
        for key in getattr(value, "duplicates", []):
            self.problem(where, "duplicate-key", f"key {key!r} appears more than once (JSON keeps only the last)")
        return value if isinstance(value, JsonObject) else object_pairs(list(value.items()))

    def known_fields(self, value: Mapping[str, Any], where: str, allowed: tuple[str, ...]) -> None:
        for key in value:
            if key not in allowed:
                expected = ", ".join(allowed)
                self.problem(
                    where,
                    "known-fields",
                    f"unknown field {key!r} (expected: {expected}){suggest(key, list(allowed))}",
                )

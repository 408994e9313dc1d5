"""The MockedResponses section: each mocked response is a contiguous run of attempts from "0", each attempt
either a Return (any JSON value) or a Throw (Error and Cause strings)."""

from __future__ import annotations

import itertools
import re
from typing import Any

from onceflow.engine.stepfunctions.mocking.model import AttemptRange, MockedResponse, Outcome, Return, Throw
from onceflow.engine.stepfunctions.mocking.reporting import Reporter, trail

_ATTEMPT_KEY = re.compile(r"^(0|[1-9][0-9]*)(?:-(0|[1-9][0-9]*))?$")


def check_responses(report: Reporter, raw: Any) -> dict[str, MockedResponse]:
    where = "MockedResponses"
    responses = report.object(raw, where, "MockedResponses")
    if responses is None:
        return {}
    parsed: dict[str, MockedResponse] = {}
    for name, attempts in responses.items():
        response = _response(report, name, attempts, trail(where, name))
        if response is not None:
            parsed[name] = response
    return parsed


def _response(report: Reporter, name: str, raw: Any, where: str) -> MockedResponse | None:
    attempts = report.object(raw, where, f"mocked response {name!r}")
    if attempts is None:
        return None
    if not attempts:
        report.problem(where, "response-not-empty", 'defines no attempts; give at least "0"')
        return None
    ranges: list[AttemptRange] = []
    valid = True
    for key, value in attempts.items():
        attempt_range = _attempt(report, key, value, trail(where, f'"{key}"'))
        if attempt_range is None:
            valid = False
        else:
            ranges.append(attempt_range)
    if not valid:
        return None
    ranges.sort(key=lambda r: (r.first, r.last))
    if not _contiguous(report, ranges, where):
        return None
    return MockedResponse(name, tuple(ranges))


def _attempt(report: Reporter, key: str, raw: Any, where: str) -> AttemptRange | None:
    match = _ATTEMPT_KEY.match(key)
    outcome = _outcome(report, raw, where)
    if not match:
        report.problem(
            where,
            "attempt-key-format",
            f'attempt key "{key}" is neither an invocation number ("0") nor an inclusive range ("1-2")',
        )
        return None
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if last < first:
        report.problem(where, "attempt-range-order", f'range "{key}" ends before it starts (write "{last}-{first}")')
        return None
    if outcome is None:
        return None
    return AttemptRange(key, first, last, outcome)


def _outcome(report: Reporter, raw: Any, where: str) -> Outcome | None:
    attempt = report.object(raw, where, "an attempt")
    if attempt is None:
        return None
    report.known_fields(attempt, where, ("Return", "Throw"))
    has_return, has_throw = "Return" in attempt, "Throw" in attempt
    if has_return and has_throw:
        report.problem(where, "return-xor-throw", "has both Return and Throw; an attempt either returns or throws")
        return None
    if not has_return and not has_throw:
        report.problem(where, "return-xor-throw", "has neither Return nor Throw")
        return None
    if has_return:
        return Return(attempt["Return"])
    throw = report.object(attempt["Throw"], trail(where, "Throw"), "Throw")
    if throw is None:
        return None
    report.known_fields(throw, trail(where, "Throw"), ("Error", "Cause"))
    error, cause = throw.get("Error"), throw.get("Cause")
    if not isinstance(error, str) or not error:
        report.problem(trail(where, "Throw"), "throw-fields", "Error must be a non-empty string (the error name)")
        return None
    if not isinstance(cause, str):
        report.problem(trail(where, "Throw"), "throw-fields", "Cause must be a string")
        return None
    return Throw(error, cause)


def _contiguous(report: Reporter, ranges: list[AttemptRange], where: str) -> bool:
    ok = True
    if ranges[0].first != 0:
        report.problem(
            where,
            "attempt-ranges-start-at-zero",
            f'the first invocation is "0" but the first attempt key is "{ranges[0].key}"',
        )
        ok = False
    for previous, current in itertools.pairwise(ranges):
        if current.first <= previous.last:
            report.problem(
                where,
                "attempt-ranges-overlap",
                f'"{previous.key}" and "{current.key}" both answer invocation {current.first}',
            )
            ok = False
        elif current.first > previous.last + 1:
            gap = (
                f"{previous.last + 1}"
                if current.first == previous.last + 2
                else f"{previous.last + 1}-{current.first - 1}"
            )
            report.problem(
                where,
                "attempt-ranges-gap",
                f'nothing answers invocation {gap} between "{previous.key}" and "{current.key}"',
            )
            ok = False
    return ok

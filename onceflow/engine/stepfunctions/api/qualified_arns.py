"""Qualified state machine ARNs (a version `...:stateMachine:name:3`, an alias `...:stateMachine:name:PROD`)
and the paging of the version and alias lists, shared by versions.py, aliases.py and
qualified_executions.py.

https://docs.aws.amazon.com/step-functions/latest/dg/execution-alias-version-associate.html
("Qualified ARN – Refers to a state machine ARN suffixed with a version number or an alias name").
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from moto.stepfunctions.exceptions import InvalidToken, StateMachineDoesNotExist

T = TypeVar("T")
UNQUALIFIED_PARTS = 7  # arn:partition:states:region:account:stateMachine:name
DEFAULT_PAGE = 100


def split(arn: str) -> tuple[str, str | None]:
    """(the unqualified state machine ARN, the qualifier or None)."""
    parts = (arn or "").split(":")
    if len(parts) == UNQUALIFIED_PARTS + 1 and parts[5] == "stateMachine" and parts[7]:
        return ":".join(parts[:UNQUALIFIED_PARTS]), parts[7]
    return arn, None


def is_version(qualifier: str | None) -> bool:
    return qualifier is not None and qualifier.isdigit()


def machine(backend: Any, unqualified_arn: str) -> Any | None:
    """The state machine itself (moto's StateMachine), or None."""
    return next((m for m in backend.state_machines if m.arn == unqualified_arn), None)


def existing_machine(backend: Any, unqualified_arn: str) -> Any:
    """The state machine (InvalidArn in AWS's words for a malformed ARN, else StateMachineDoesNotExist)."""
    backend._validate_machine_arn(unqualified_arn)
    found = machine(backend, unqualified_arn)
    if found is None:
        raise StateMachineDoesNotExist(f"State Machine Does Not Exist: '{unqualified_arn}'")
    return found


def resolve(backend: Any, arn: str) -> tuple[Any, Any | None, Any | None] | None:
    """For a qualified ARN: (the state machine or None, the version or None, the alias or None);
    None for an unqualified one."""
    base_arn, qualifier = split(arn)
    if qualifier is None:
        return None
    found = machine(backend, base_arn)
    if found is None:
        return None, None, None
    if is_version(qualifier):
        return found, found.versions.get(int(qualifier)), None
    return found, None, found.aliases.get(qualifier)


def page(
    items: Sequence[T], key: Callable[[T], str], max_results: int | None, next_token: str | None
) -> tuple[list[T], str | None]:
    """One page of `items` (in their order) and the token of the next, as the List APIs answer them:
    `maxResults` 0 or absent is 100; a token that names no item is InvalidToken "Invalid Token: 'Invalid token'"."""
    size = max_results or DEFAULT_PAGE
    start = 0
    if next_token is not None:
        try:
            wanted = base64.urlsafe_b64decode(next_token.encode()).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            wanted = None
        keys = [key(item) for item in items]
        if wanted not in keys:
            raise InvalidToken("'Invalid token'")
        start = keys.index(wanted)
    chosen = list(items[start : start + size])
    after = items[start + size : start + size + 1]
    token = base64.urlsafe_b64encode(key(after[0]).encode()).decode() if after else None
    return chosen, token


def listed(
    request: Any, items: Sequence[T], key: Callable[[T], str], member: str, item: Callable[[T], Any]
) -> dict[str, Any]:
    """A List API's answer: `member` holds one page of `items` (the request's maxResults/nextToken)."""
    chosen, token = page(items, key, request._get_int_param("maxResults"), request._get_param("nextToken"))
    answer: dict[str, Any] = {member: [item(one) for one in chosen]}
    if token:
        answer["nextToken"] = token
    return answer

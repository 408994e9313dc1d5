"""Message bodies made from the domain's sample: what `onceflow send`, the demo, the fault schedules
and the pytest plugin put on the source queue. Only the standard library: sending stays fast and
works against AWS too.

- fresh bodies: the sample with a new event_id each (`<prefix>-<run id>-00000`, the prefix taken
  from the sample's own id, so a person recognises them);
- conflicting bodies: an event_id reused with another payload (one field of the sample changed);
- poison candidates: bodies that can never succeed, some for every domain (not JSON, no or an
  empty event_id, a number no service can carry) and some that break the domain's own validation
  (a field of another type). Which of these the stack's starter really rejects is for the caller
  to check (onceflow.local.starter_parse), since validation is the domain's choice.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from typing import Any

from onceflow.domain.app import Domain, with_path, without_path


def new_run_id() -> str:
    """A short tag that makes a run's event ids its own (6 hex digits)."""
    return secrets.token_hex(3)


def id_prefix(domain: Domain) -> str:
    """The letters the sample's event_id starts with (`order-1001` -> `order`), else `event`."""
    found = re.match(r"[A-Za-z]+", domain.sample_event_id)
    return found.group(0).lower() if found else "event"


def event_id(domain: Domain, index: int, run_id: str | None = None) -> str:
    prefix = id_prefix(domain)
    return f"{prefix}-{run_id}-{index:05d}" if run_id else f"{prefix}-{index:05d}"


def body(domain: Domain, new_event_id: str) -> dict[str, Any]:
    """The sample with `new_event_id` where its event_id is."""
    return with_path(domain.sample, domain.event_id_path, new_event_id)


def fresh_bodies(domain: Domain, count: int, run_id: str | None = None) -> list[str]:
    """`count` bodies, ids `<prefix>-<run_id>-00000…` (or `<prefix>-00000…` without a run id)."""
    return [json.dumps(body(domain, event_id(domain, i, run_id))) for i in range(count)]


def _leaves(document: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    elif prefix:
        yield prefix, document


def _changed(value: Any) -> Any:
    """Another value of the same type; None when the value has no obvious other (lists, null)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str) and value:
        return value[:-1] + ("1" if value[-1] != "1" else "2")
    return None


def conflicting_candidates(domain: Domain, original: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The same event_id with another payload: each leaf field but the id changed in turn."""
    for path, value in _leaves(original):
        if path == domain.event_id_path:
            continue
        other = _changed(value)
        if other is not None:
            yield with_path(original, path, other)


def poison_candidates(domain: Domain) -> Iterator[tuple[str, str]]:
    """(what is wrong, body) pairs that can never succeed on any starter, then ones that break a
    domain's validation if it has one."""
    sample_id = domain.sample_event_id
    yield "not JSON", "this is not JSON"
    yield "a JSON array, not an object", json.dumps(["an", "array"])
    yield "no event_id", json.dumps(without_path(domain.sample, domain.event_id_path))
    yield "an empty event_id", json.dumps(with_path(domain.sample, domain.event_id_path, ""))
    # JSON's 1e400 reads as infinity: no service on the way can carry it (rule finite_number).
    text = json.dumps(with_path(domain.sample, domain.event_id_path, f"{sample_id}-poison-number"))
    yield "a number no service can carry", text[:-1] + ', "onceflow_poison_number": 1e400}'
    for path, value in _leaves(domain.sample):
        if path == domain.event_id_path or value is None:
            continue
        wrong: Any = 12345 if isinstance(value, str) else "not-a-" + type(value).__name__
        poisoned = with_path(body(domain, f"{sample_id}-poison-{path}"), path, wrong)
        yield f"{path} of the wrong type", json.dumps(poisoned)

"""The paths an event can take, each set up as it happens in production and measured on one delivery."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from onceflow.devtools.cost.measure import Bench, Measurement
from onceflow.devtools.cost.mix import PATH_KEYS as MIX_KEYS
from onceflow.domain import conflicting_candidates
from onceflow.domain.bodies import body, id_prefix
from onceflow.local.faults import sns_publish_failures


def event(bench: Bench, name: str) -> dict[str, Any]:
    """The app's own event: its domain's sample with the event_id `<prefix>-<name>` (the payload's size
    drives item and log sizes, so the sample's is what is priced)."""
    stack = bench.stack
    assert stack is not None, "fresh() first"
    return body(stack.domain, f"{id_prefix(stack.domain)}-{name}")


def conflicting(bench: Bench, original: dict[str, Any]) -> dict[str, Any]:
    """The same event_id with another payload (one field of the sample changed)."""
    assert bench.stack is not None
    return next(conflicting_candidates(bench.stack.domain, original))


def _new(bench: Bench) -> Measurement:
    return bench.measure("new", lambda: bench.deliver(event(bench, "new")))


def _redelivered_after_sent(bench: Bench) -> Measurement:
    delivered = event(bench, "redelivered")
    bench.deliver(delivered)
    return bench.measure("redelivered", lambda: bench.deliver(delivered))


def _publish_always_fails(bench: Bench, delivered: dict[str, Any]) -> int:
    with sns_publish_failures() as fault:
        bench.deliver(delivered)
    if fault.injected == 0:
        raise RuntimeError("the SNS outage injected no failure: the path was not exercised")
    return fault.injected


def _resumed_from_pending(bench: Bench) -> Measurement:
    """The first delivery was recorded and never published (SNS down, dead-lettered): its redrive resumes."""
    delivered = event(bench, "pending")
    _publish_always_fails(bench, delivered)
    return bench.measure("pending", lambda: bench.deliver(delivered))


def _payload_conflict(bench: Bench) -> Measurement:
    first = event(bench, "conflict")
    bench.deliver(first)
    return bench.measure("conflict", lambda: bench.deliver(conflicting(bench, first)))


def _dead_lettered(bench: Bench) -> Measurement:
    delivered = event(bench, "dead-lettered")
    return bench.measure("dead_lettered", lambda: _publish_always_fails(bench, delivered))


def _record_expired(bench: Bench) -> Measurement:
    """Redelivered after DynamoDB TTL removed the state record; the business row is still there."""
    stack = bench.stack
    assert stack is not None
    delivered = event(bench, "expired")
    bench.deliver(delivered)
    event_id = stack.domain.event_id_of(json.dumps(delivered))
    stack.client("dynamodb").delete_item(TableName=stack.processed_events_table, Key={"event_id": {"S": event_id}})
    return bench.measure("expired", lambda: bench.deliver(delivered))


@dataclass(frozen=True)
class PathSpec:
    key: str
    title: str
    run: Callable[[Bench], Measurement]


PATHS: tuple[PathSpec, ...] = (
    PathSpec("new", "new event", _new),
    PathSpec("redelivered", "redelivered after sent", _redelivered_after_sent),
    PathSpec("pending", "resumed from pending", _resumed_from_pending),
    PathSpec("conflict", "payload conflict", _payload_conflict),
    PathSpec("dead_lettered", "dead-lettered after publish failures", _dead_lettered),
    PathSpec("expired", "record expired, redelivered", _record_expired),
)
PATH_KEYS = tuple(spec.key for spec in PATHS)
if PATH_KEYS != MIX_KEYS:
    raise ImportError(f"onceflow/devtools/cost/mix.py names the paths {MIX_KEYS}, not {PATH_KEYS}")

"""The paths an event can take, each set up as it happens in production and measured on one delivery."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from onceflow.devtools.cost.measure import Bench, Measurement
from onceflow.local.faults import sns_publish_failures


def order(order_id: str, amount: str = "42.50") -> dict[str, Any]:
    """The worked example's event: a small order (the payload size drives item and log sizes)."""
    return {"order_id": order_id, "customer_id": "customer-7", "amount": amount, "currency": "EUR"}


def _new(bench: Bench) -> Measurement:
    return bench.measure("new", lambda: bench.deliver(order("order-new")))


def _redelivered_after_sent(bench: Bench) -> Measurement:
    body = order("order-redelivered")
    bench.deliver(body)
    return bench.measure("redelivered", lambda: bench.deliver(body))


def _publish_always_fails(bench: Bench, body: dict[str, Any]) -> int:
    with sns_publish_failures() as fault:
        bench.deliver(body)
    if fault.injected == 0:
        raise RuntimeError("the SNS outage injected no failure: the path was not exercised")
    return fault.injected


def _resumed_from_pending(bench: Bench) -> Measurement:
    """The first delivery was recorded and never published (SNS down, dead-lettered): its redrive resumes."""
    body = order("order-pending")
    _publish_always_fails(bench, body)
    return bench.measure("pending", lambda: bench.deliver(body))


def _payload_conflict(bench: Bench) -> Measurement:
    bench.deliver(order("order-conflict", amount="10.00"))
    return bench.measure("conflict", lambda: bench.deliver(order("order-conflict", amount="99.00")))


def _dead_lettered(bench: Bench) -> Measurement:
    body = order("order-dead-lettered")
    return bench.measure("dead_lettered", lambda: _publish_always_fails(bench, body))


def _record_expired(bench: Bench) -> Measurement:
    """Redelivered after DynamoDB TTL removed the state record; the business row is still there."""
    body = order("order-expired")
    bench.deliver(body)
    stack = bench.stack
    assert stack is not None
    stack.client("dynamodb").delete_item(
        TableName=stack.processed_events_table, Key={"event_id": {"S": body["order_id"]}}
    )
    return bench.measure("expired", lambda: bench.deliver(body))


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

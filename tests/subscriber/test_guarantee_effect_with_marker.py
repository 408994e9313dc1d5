"""Guarantee (R4): a subscriber's effect is written together with its marker, never apart.

`ExactlyOnce.apply` writes the marker (the event_id, only if absent) and the team's effect items
in one TransactWriteItems: both or neither (docs/SUBSCRIBERS.md, "How it keeps R4"). Written in two
calls, a crash between them leaves one without the other:
- the marker without its effect: every later delivery finds the marker and is taken for a
  duplicate, so the effect is lost ("loses none" broken);
- the effect without its marker: the next delivery applies it again (exactly once broken).

Here the subscriber dies the moment its first DynamoDB write returns, as a Lambda that times out or
runs out of memory does (nothing of the batch is acknowledged, SQS delivers it again). Whatever
that write held, it must have left the effect and the marker both, and the redelivery must leave
the effect applied once. A count of write units notices a split write too (test_cost.py); this is
the behaviour that count stands for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from onceflow.local.event_source import Invoke, SqsEventSource
from onceflow_subscriber import ExactlyOnce
from tests.subscriber.support import dead_letters, log_outcomes, markers, order_payload, publish, tallies

pytestmark = [
    pytest.mark.embedded_only(reason="the example subscriber's stack and its function run on the embedded engine"),
    # The handler's metrics decorator flushes on the way out of a died invocation, before any metric was added.
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]

WRITE_OPERATIONS = frozenset({"put_item", "update_item", "delete_item", "batch_write_item", "transact_write_items"})


class SubscriberKilled(BaseException):
    """Raised inside the subscriber: a BaseException, so no except block of its code runs (the sandbox died)."""


def _tables_written(operation: str, request: dict[str, Any]) -> list[str]:
    if operation == "transact_write_items":
        return [next(iter(action.values()))["TableName"] for action in request["TransactItems"]]
    if operation == "batch_write_item":
        return list(request["RequestItems"])
    return [request["TableName"]]


@dataclass
class DeathAfterFirstWrite:
    """While armed, the subscriber dies right after its first DynamoDB write returned (committed)."""

    armed: bool = True
    # The operation and tables of each write that was followed by the death (what it had written).
    killed_after: list[tuple[str, list[str]]] = field(default_factory=list)

    def client(self, dynamodb: Any) -> Any:
        return _DyingClient(dynamodb, self)

    def after_write(self, operation: str, request: dict[str, Any]) -> None:
        if self.armed:
            self.armed = False
            self.killed_after.append((operation, _tables_written(operation, request)))
            raise SubscriberKilled(f"the subscriber died right after its {operation} returned")


class _DyingClient:
    """The real boto3 client: every call goes through; a write is followed by the armed death."""

    def __init__(self, dynamodb: Any, death: DeathAfterFirstWrite):
        self._dynamodb = dynamodb
        self._death = death

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._dynamodb, name)
        if name not in WRITE_OPERATIONS:
            return call

        def write_then_maybe_die(**request: Any) -> Any:
            response = call(**request)
            self._death.after_write(name, request)
            return response

        return write_then_maybe_die


def _invocation_that_may_die(invoke: Invoke) -> Invoke:
    """What the emulated Lambda service sees of a sandbox that died: the invocation failed."""

    def invoke_and_report_death(event: dict[str, Any]) -> dict[str, Any]:
        try:
            return invoke(event)
        except SubscriberKilled as death:
            raise RuntimeError(f"invocation died: {death}") from None

    return invoke_and_report_death


@pytest.fixture
def death(monkeypatch: pytest.MonkeyPatch, subscriber_source: SqsEventSource) -> DeathAfterFirstWrite:
    """The building block gets the real client wrapped so that the subscriber dies after its first write."""
    armed = DeathAfterFirstWrite()
    building_block_init: Callable[..., None] = ExactlyOnce.__init__

    def init_with_dying_client(self: ExactlyOnce, dynamodb: Any, *args: Any, **kwargs: Any) -> None:
        building_block_init(self, armed.client(dynamodb), *args, **kwargs)

    monkeypatch.setattr(ExactlyOnce, "__init__", init_with_dying_client)
    subscriber_source.invoke = _invocation_that_may_die(subscriber_source.invoke)
    return armed


def test_a_crash_right_after_the_subscribers_first_write_leaves_effect_and_marker_both(
    subscriber_stack, subscriber_source, subscriber_logs, death
):
    publish(subscriber_stack, order_payload("order-window", amount=30), event_id="order-window")

    assert subscriber_source.poll_once() == 1
    (operation, tables), *_ = death.killed_after
    assert len(death.killed_after) == 1 and subscriber_source.stats.crashed_batches == 1, "the crash happened"
    written_marker = "order-window" in markers(subscriber_stack)
    written_effect = "customer-001" in tallies(subscriber_stack)
    assert written_marker == written_effect, (
        f"the crash after {operation} on {tables} left the marker {'with' if written_marker else 'without'} "
        f"and the effect {'with' if written_effect else 'without'}: they must be written together"
    )

    subscriber_source.run_until_empty(max_batches=10, timeout=60)  # SQS delivers the notification again

    assert subscriber_source.stats.records == 2 and subscriber_source.stats.crashed_batches == 1
    tally = tallies(subscriber_stack).get("customer-001")
    assert tally is not None, "the effect was lost: the redelivery found the marker alone and applied nothing"
    assert tally["event_count"] == 1, "the effect was applied more than once"
    assert list(markers(subscriber_stack)) == ["order-window"]
    assert [line["outcome"] for line in log_outcomes(subscriber_logs.getvalue())] == ["already_applied"]
    assert dead_letters(subscriber_stack) == []

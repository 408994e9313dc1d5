"""The order in which things happened on the embedded AWS, for R5: every message put on the source
queue (with its group), every dead letter, every business write and every notification published,
each logged at the moment the engine committed it (after moto's own call returned), one sequence
for all. Order is what R5 is about, and neither the tables nor the inbox keep it (timestamps of
one millisecond collide; an SQS standard inbox does not promise order).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from moto.dynamodb.models import DynamoDBBackend
from moto.sns.models import Topic
from moto.sqs.models import Queue

Kind = Literal["sent", "dead_lettered", "written", "notified"]


@dataclass(frozen=True)
class Effect:
    seq: int
    kind: Kind
    event_id: str | None
    group: str | None = None


@dataclass
class EffectLog:
    source_queue: str  # queue names
    dead_letter_queue: str
    business_table: str
    business_key: str  # the business table's key: where a write carries its event_id
    event_id_of_body: Callable[[str], str | None]  # the domain's (onceflow.domain.Domain.event_id_of)
    effects: list[Effect] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, kind: Kind, event_id: str | None, group: str | None = None) -> None:
        with self._lock:
            self.effects.append(Effect(len(self.effects), kind, event_id, group))

    @contextmanager
    def installed(self) -> Iterator[EffectLog]:
        """Wrap the engine's SQS add, DynamoDB transaction and SNS publish for the run, then restore."""
        log = self
        add_message, transact, publish = Queue.add_message, DynamoDBBackend.transact_write_items, Topic.publish

        def logged_add(queue: Queue, message: Any) -> Any:
            result = add_message(queue, message)
            if queue.name in (log.source_queue, log.dead_letter_queue) and message in queue._messages:
                kind: Kind = "sent" if queue.name == log.source_queue else "dead_lettered"
                log.note(kind, log.event_id_of_body(message.body), message.group_id)
            return result

        def logged_transact(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
            result = transact(backend, transact_items)
            for item in transact_items:
                put = item.get("Put") or {}
                if put.get("TableName") == log.business_table:
                    log.note("written", (put.get("Item") or {}).get(log.business_key, {}).get("S"))
            return result

        def logged_publish(topic: Any, message: str, *args: Any, **kwargs: Any) -> Any:
            result = publish(topic, message, *args, **kwargs)
            attributes = kwargs.get("message_attributes") or (args[1] if len(args) > 1 else None) or {}
            value = attributes.get("event_id") or {}
            log.note("notified", value.get("StringValue") or value.get("Value") if isinstance(value, dict) else None)
            return result

        Queue.add_message, DynamoDBBackend.transact_write_items, Topic.publish = (  # type: ignore[method-assign]
            logged_add,
            logged_transact,
            logged_publish,
        )
        try:
            yield self
        finally:
            Queue.add_message, DynamoDBBackend.transact_write_items, Topic.publish = (  # type: ignore[method-assign]
                add_message,
                transact,
                publish,
            )


def moto_needs() -> list[Any]:
    """What the log wraps in the pinned moto (checked by onceflow.engine.moto_shape)."""
    from onceflow.engine.moto_shape import need

    return [
        need(Queue, "add_message", "message"),
        need(DynamoDBBackend, "transact_write_items", "transact_items"),
        need(Topic, "publish", "message", "message_attributes"),
    ]


def order_violations(effects: list[Effect]) -> list[str]:
    """R5 judged on the log. An event's message is in its group's queue from its send until the
    event takes effect or is dead-lettered (a dead letter leaves its group; a redrive sends it again,
    at the end). When an event first takes effect (first business write; first notification) at
    `t`, its position is the earliest send of its current stay (after its last dead letter before
    `t`); a violation is another event of the group sent before that position that was still to be
    applied at `t`: not yet in effect, and not dead-lettered since that send. Groups are not compared."""
    sends: dict[str, list[tuple[int, str]]] = {}  # event_id -> [(seq, group)]
    dead: dict[str, list[int]] = {}
    first: dict[tuple[str, str], int] = {}
    for effect in effects:
        if effect.event_id is None:
            continue
        if effect.kind == "sent" and effect.group is not None:
            sends.setdefault(effect.event_id, []).append((effect.seq, effect.group))
        elif effect.kind == "dead_lettered":
            dead.setdefault(effect.event_id, []).append(effect.seq)
        else:
            first.setdefault((effect.kind, effect.event_id), effect.seq)

    def position(event: str, at: int) -> tuple[int, str] | None:
        left = max((seq for seq in dead.get(event, []) if seq < at), default=-1)
        stay = [(seq, group) for seq, group in sends.get(event, []) if left < seq < at]
        return stay[0] if stay else None

    problems: list[str] = []
    for (kind, later), at in sorted(first.items(), key=lambda item: item[1]):
        placed = position(later, at)
        if placed is None:
            continue  # not sent to a FIFO group (or applied without a send: another check's business)
        seq_later, group = placed
        for earlier, its_sends in sends.items():
            if earlier == later:
                continue
            earlier_at = first.get((kind, earlier))
            if earlier_at is not None and earlier_at < at:
                continue  # already in effect
            waiting = [
                seq
                for seq, g in its_sends
                if g == group and seq < seq_later and not any(seq < d < at for d in dead.get(earlier, []))
            ]
            if waiting:
                problems.append(
                    f"R5: group {group}: {later} {kind} (#{at}) before {earlier} (sent #{waiting[0]}, "
                    f"earlier in the group, and still to be applied)"
                )
    return problems

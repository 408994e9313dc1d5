"""PutEvents refuses an entry whose Detail is not a JSON object, as EventBridge does.

EventBridge's PutEventsRequestEntry: `Detail` is "A valid JSON object. There is no other schema
imposed." (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsRequestEntry.html).
AWS answers such an entry `MalformedDetail` "Detail is malformed." and puts the others: LocalStack's
recordings of AWS services/test_events_task_service.snapshot.json test_put_events_malformed_detail
and test_put_events_mixed_malformed_detail (2025-11-06, a Detail of `"jsonstring"`). moto 5.2.5
only warned, then sent the string on to the matching rules' targets, whose event template could
not parse it: PutEvents answered HTTP 500 (the `events:putEvents` task failed States.Runtime).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from moto.events.models import EventsBackend

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
MALFORMED = {"ErrorCode": "MalformedDetail", "ErrorMessage": "Detail is malformed."}


def moto_needs() -> list[Need]:
    return [need(EventsBackend, "put_events", "events")]


def _malformed(event: dict[str, Any]) -> bool:
    detail = event.get("Detail")
    if not detail or not event.get("Source") or not event.get("DetailType"):
        return False  # moto answers these (InvalidArgument) as AWS does
    try:
        return not isinstance(json.loads(detail), dict)
    except ValueError:
        return True


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, EventsBackend, "put_events")

    def put_events(self: EventsBackend, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        refused = [_malformed(event) for event in events]
        if len(events) > 10 or not any(refused):  # moto's own length check, or nothing to refuse
            return original(self, events=events)
        answered = iter(original(self, events=[e for e, bad in zip(events, refused, strict=True) if not bad]))
        return [dict(MALFORMED) if bad else next(answered) for bad in refused]

    return [(EventsBackend, "put_events", put_events)]

"""An `events:putEvents` task with failed entries fails with PutEvents' answer as JSON text.

The optimised EventBridge integration fails the task with `EventBridge.FailedEntry` when PutEvents
answers a FailedEntryCount above 0 (https://docs.aws.amazon.com/step-functions/latest/dg/connect-eventbridge.html);
its cause is the answer, `{"Entries":[…],"FailedEntryCount":1}`, as JSON: LocalStack's recordings
of AWS services/test_events_task_service.snapshot.json test_put_events_no_source,
test_put_events_malformed_detail and test_put_events_mixed_malformed_detail (2025-11-06). moto
wrote the answer's Python repr (`{'FailedEntryCount': 1, …}`), which a Catch's handler cannot parse.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_events import (
    SfnFailedEntryCountException,
    StateTaskServiceEvents,
)

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [need(StateTaskServiceEvents, "_from_error", "env", "ex"), need(SfnFailedEntryCountException, "__init__")]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, StateTaskServiceEvents, "_from_error")

    def _from_error(self: StateTaskServiceEvents, env: Any, ex: Exception) -> Any:
        if isinstance(ex, SfnFailedEntryCountException) and isinstance(ex.cause, dict):
            answer = {"Entries": ex.cause.get("Entries", []), "FailedEntryCount": ex.cause.get("FailedEntryCount")}
            ex.__dict__["cause"] = json.dumps(answer, separators=(",", ":"))
        return original(self, env=env, ex=ex)

    return [(StateTaskServiceEvents, "_from_error", _from_error)]

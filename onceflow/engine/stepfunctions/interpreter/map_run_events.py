"""A Distributed Map's MapStateExited links to its MapRunStarted event, as AWS records it today.

The history of a Distributed Map that succeeded runs MapRunStarted, MapRunSucceeded,
MapStateSucceeded, MapStateExited. In every recording of AWS made since November 2024,
MapStateExited's `previousEventId` is the MapRunStarted event's id; in the older ones (2023 to
August 2024) it was MapRunSucceeded's, which is what moto links it to. The engine follows the
newer: LocalStack's recordings of AWS scenarios/test_base_scenarios.snapshot.json
(test_map_state_config_distributed_item_selector_parameters, 2024-11-15;
test_map_state_nested_config_distributed, 2024-12-13;
test_map_state_config_distributed_items_path_from_previous, 2025-01-09),
assign/test_assign_reference_variables.snapshot.json (test_reference_in_map_state, 2024-11-18) and
test_map_state_lambda (2025-10-28); GetExecutionHistory:
https://docs.aws.amazon.com/step-functions/latest/apireference/API_HistoryEvent.html
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.api import HistoryEventType
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.distributed_iteration_component import (
    DistributedIterationComponent,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.state_map import StateMap

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
MAP_RUN_STARTED = "_onceflow_map_run_started"  # on the Map state's environment: its MapRunStarted event id


def moto_needs() -> list[Need]:
    return [need(DistributedIterationComponent, "_eval_body", "env"), need(StateMap, "_eval_execution", "env")]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original_body = current(before, DistributedIterationComponent, "_eval_body")
    original_execution = current(before, StateMap, "_eval_execution")

    def _eval_body(self: DistributedIterationComponent, env: Any) -> None:
        original_body(self, env)
        succeeded = _event(env, env.event_history_context.last_published_event_id)
        if succeeded is not None and succeeded.get("type") == HistoryEventType.MapRunSucceeded:
            setattr(env, MAP_RUN_STARTED, succeeded["previousEventId"])

    def _eval_execution(self: StateMap, env: Any) -> None:
        original_execution(self, env)
        started = env.__dict__.pop(MAP_RUN_STARTED, None)
        if started is not None:  # MapStateSucceeded is written; MapStateExited comes next
            env.event_history_context.source_event_id = started

    return [
        (DistributedIterationComponent, "_eval_body", _eval_body),
        (StateMap, "_eval_execution", _eval_execution),
    ]


def _event(env: Any, event_id: int) -> dict[str, Any] | None:
    """The history event with this id (the newest few are searched: it was just written)."""
    events = env.event_manager._history_event_list
    for event in reversed(events[-16:]):
        if event.get("id") == event_id:
            return event
    return None

"""The execution's input text as the caller sent it, where AWS passes it on unchanged.

- first_state_input: the first state's StateEntered event carries the execution's input as the
  caller wrote it (`'["Hello", "World"]'`, spaces kept), as AWS records it; moto re-serialised it
  as compact JSON (`'["Hello","World"]'`). Later states' inputs are AWS's own serialisation
  (compact), as moto writes them. Only while the state's input is still the execution's input
  (a redriven execution's first state past the start keeps moto's text).

AWS's recordings: LocalStack's scenarios/test_base_scenarios.snapshot.json (the Map and Parallel
scenarios started with `json.dumps([...])`: MapStateEntered's input is the caller's text); the
history's event details: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StateEnteredEventDetails.html
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from onceflow.local.engine import current
from onceflow.local.engine.shape import Need, need

Patch = tuple[Any, str, Any]
# Set on the execution's own (top-level) Environment only: Map iterations and Parallel branches
# run in frames, new Environment objects without it.
TEXT_ATTRIBUTE = "_onceflow_input_text"


def moto_needs() -> list[Need]:
    return [
        need(ExecutionWorker, "_get_evaluation_environment"),
        need(CommonStateField, "_get_state_entered_event_details", "env"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these (context_object.py wraps the environment too)."""
    return first_state_input(before)


def first_state_input(before: Sequence[Patch]) -> list[Patch]:
    original_environment = current(before, ExecutionWorker, "_get_evaluation_environment")
    original_entered = current(before, CommonStateField, "_get_state_entered_event_details")

    def _get_evaluation_environment(self: ExecutionWorker) -> Any:
        env = original_environment(self)
        execution = getattr(self._execution_communication, "execution", None)
        text = getattr(execution, "execution_input", None)
        if isinstance(text, str):
            setattr(env, TEXT_ATTRIBUTE, text)
        return env

    def _get_state_entered_event_details(self: CommonStateField, env: Any) -> Any:
        details = original_entered(self, env)
        text = env.__dict__.pop(TEXT_ATTRIBUTE, None)  # the first state entered only
        if text is not None and _same_value(text, env.states.get_input()):
            details["input"] = text
        return details

    return [
        (ExecutionWorker, "_get_evaluation_environment", _get_evaluation_environment),
        (CommonStateField, "_get_state_entered_event_details", _get_state_entered_event_details),
    ]


def _same_value(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False

"""ExecutionStarted's input is the execution's input as the caller sent it, not re-serialised.

AWS's recordings show the two serialisations side by side: ExecutionStarted's input keeps the
caller's spaces (`'["Hello", "World"]'` for a `json.dumps` input), while every state's input and
output is AWS's own compact JSON (`'["Hello","World"]'`; LocalStack's
scenarios/test_base_scenarios.snapshot.json, test_map_state_label and
test_map_state_result_writer, recorded 2024). So ExecutionStarted carries the caller's text, as
DescribeExecution's `input` does. moto wrote it with Python's default separators instead, which
only looks right for an input written by Python's `json.dumps`.
https://docs.aws.amazon.com/step-functions/latest/apireference/API_ExecutionStartedEventDetails.html
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.backend import execution_worker
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
# The caller's text and the value moto parsed from it, from the moment the worker thread builds its
# environment to the ExecutionStarted event it adds next (moto's `_execution_logic`: the module's
# only use of to_json_str, given the execution's own parsed input).
_pending = threading.local()


def moto_needs() -> list[Need]:
    return [
        need(ExecutionWorker, "_get_evaluation_environment"),
        need(execution_worker, "to_json_str"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original_environment = current(before, ExecutionWorker, "_get_evaluation_environment")
    original_to_json_str = execution_worker.to_json_str

    def _get_evaluation_environment(self: ExecutionWorker) -> Any:
        execution = getattr(self._execution_communication, "execution", None)
        text = getattr(execution, "execution_input", None)
        _pending.input = (text, execution.input_data) if isinstance(text, str) else None
        return original_environment(self)

    def to_json_str(obj: Any, separators: Any = None) -> str:
        pending = _pending.__dict__.pop("input", None)
        if pending is not None and obj is pending[1]:  # the execution's input itself, not re-parsed
            return pending[0]
        return original_to_json_str(obj, separators)

    return [
        (ExecutionWorker, "_get_evaluation_environment", _get_evaluation_environment),
        (execution_worker, "to_json_str", to_json_str),
    ]

"""The context object (`$$`) as AWS fills it, where moto 5.2.5 differs:

- start_time: `$$.Execution.StartTime` is the execution's start as ISO 8601 text with milliseconds
  and `Z` ("2023-11-21T06:27:31.545Z"), the same instant as DescribeExecution's startDate. moto put
  the Python datetime there, so a state reading it failed to serialise (DescribeExecution answered
  500: "Object of type datetime is not JSON serializable").
- redrive_count: a STANDARD execution's `$$.Execution.RedriveCount` is 0 until it is redriven
  (stepfunctions/api/redrive_execution.py sets it then); moto left it out. An EXPRESS execution has none (it cannot be
  redriven; LocalStack's express/test_express_sync.snapshot.json, test_query_runtime_memory).

https://docs.aws.amazon.com/step-functions/latest/dg/input-output-contextobject.html; AWS's
recordings: LocalStack's base/test_base.snapshot.json (test_execution_dateformat,
test_query_context_object_values).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.api import StateMachineType
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [need(Execution, "get_start_execution_details"), need(ExecutionWorker, "_get_evaluation_environment")]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these (stepfunctions/api/stop_execution.py wraps the environment too)."""
    return [*start_time(), *redrive_count(before)]


def iso_millis(moment: datetime.datetime) -> str:
    """AWS's text for an instant in the context object: UTC, milliseconds, `Z`."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def start_time() -> list[Patch]:
    original = Execution.get_start_execution_details

    def get_start_execution_details(self: Execution) -> Any:
        details = original(self)
        if isinstance(details.start_time, datetime.datetime):
            details.start_time = iso_millis(details.start_time)  # type: ignore[misc]
        return details

    return [(Execution, "get_start_execution_details", get_start_execution_details)]


def redrive_count(before: Sequence[Patch]) -> list[Patch]:
    original = current(before, ExecutionWorker, "_get_evaluation_environment")

    def _get_evaluation_environment(self: ExecutionWorker) -> Any:
        env = original(self)
        if self._evaluation_details.state_machine_details.typ != StateMachineType.EXPRESS:  # not redrivable
            env.states.context_object.context_object_data["Execution"].setdefault("RedriveCount", 0)
        return env

    return [(ExecutionWorker, "_get_evaluation_environment", _get_evaluation_environment)]

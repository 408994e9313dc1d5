"""A `states:startExecution.sync` task's result is the nested execution as AWS describes it there:
without the redrive fields.

The optimised Step Functions integration's `.sync` and `.sync:2` patterns return the nested
execution's DescribeExecution fields (https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html):
AWS's recordings (LocalStack's callback/test_callback.snapshot.json test_start_execution_sync,
test_start_execution_sync2) carry ExecutionArn, Input, InputDetails, Name, Output, OutputDetails,
StartDate, StateMachineArn, Status and StopDate, and no RedriveCount, RedriveStatus or
RedriveStatusReason. The engine's DescribeExecution answers those (api/executions.py), as AWS's
API does, so moto's resolver passed them on into the task's result (and a failed nested
execution's cause).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
    StateTaskServiceSfn,
)

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
NOT_IN_SYNC_RESULTS = ("redriveCount", "redriveStatus", "redriveStatusReason", "redriveDate")


def moto_needs() -> list[Need]:
    return [
        need(StateTaskService, "_normalise_response", "response", "boto_service_name", "service_action_name"),
        need(StateTaskServiceSfn, "_build_sync_resolver"),
        need(StateTaskServiceSfn, "_build_sync2_resolver"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, StateTaskService, "_normalise_response")

    def _normalise_response(
        self: StateTaskService,
        response: Any,
        boto_service_name: str | None = None,
        service_action_name: str | None = None,
    ) -> None:
        # The optimised `states:` integration describes an execution only to resolve .sync/.sync:2.
        if isinstance(self, StateTaskServiceSfn) and service_action_name == "describe_execution":
            for field in NOT_IN_SYNC_RESULTS:
                response.pop(field, None)
        original(self, response=response, boto_service_name=boto_service_name, service_action_name=service_action_name)

    return [(StateTaskService, "_normalise_response", _normalise_response)]

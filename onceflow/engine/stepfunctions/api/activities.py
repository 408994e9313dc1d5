"""GetActivityTask and DescribeActivity answer a worker's mistakes as AWS does.

- get_activity_task: moto 5.2.5 has no GetActivityTask (HTTP 500, "not been implemented"). An ARN
  that does not start with `arn:` is InvalidArn "Invalid Arn: 'Invalid ARN prefix: <arn>'" (the
  engine's check of every ARN, api/executions.py), an activity that does not exist (or was deleted)
  is ActivityDoesNotExist "Activity Does Not Exist: '<arn>'", and an activity that exists answers
  that no task is there (no `taskToken`), which is what a worker's poll gets when the 60 s it may
  wait pass without one. The engine runs no Activity task states (moto's executions are given no
  activity store), so no task ever is there; the wait is not emulated.
- activity_names: DescribeActivity of an activity that does not exist words it the same way (moto's
  message was the bare ARN).

AWS's recordings: LocalStack's test_sfn_api_activities.snapshot.json
(test_get_activity_task_invalid_arn, test_get_activity_task_deleted, test_describe_deleted_activity,
2024); https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetActivityTask.html
"""

from __future__ import annotations

from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.exceptions import ActivityDoesNotExist
from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(StepFunctionBackend, "_validate_activity_arn", "activity_arn"),
        need(StepFunctionBackend, "describe_activity", "activity_arn"),
        need(StepFunctionResponse, "stepfunction_backend"),
        need(StepFunctionResponse, "_get_param"),
    ]


def patches() -> list[Patch]:
    return [*get_activity_task(), *activity_names()]


def _existing(backend: StepFunctionBackend, activity_arn: str) -> Any:
    backend._validate_activity_arn(activity_arn)
    activity = backend.activities.get(activity_arn)
    if activity is None:
        raise ActivityDoesNotExist(f"Activity Does Not Exist: '{activity_arn}'")
    return activity


def get_activity_task() -> list[Patch]:
    def get_activity_task(self: StepFunctionResponse) -> ActionResult:
        _existing(self.stepfunction_backend, self._get_param("activityArn") or "")
        return ActionResult({})  # no task (the engine runs no activity task states)

    return [(StepFunctionResponse, "get_activity_task", get_activity_task)]


def activity_names() -> list[Patch]:
    def describe_activity(self: StepFunctionBackend, activity_arn: str) -> Any:
        return _existing(self, activity_arn)

    return [(StepFunctionBackend, "describe_activity", describe_activity)]

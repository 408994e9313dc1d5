"""Service errors reach the workflow under the service's own error name, never as a Python exception.

- sqs_errors: an `sqs:sendMessage` task whose MessageBody is missing or empty fails with
  `SQS.AmazonSQSException` and AWS's cause (MissingParameter), which a Catch handles; moto's SQS
  raised a Python TypeError there, which became an uncatchable States.Runtime on the embedded
  engine. Any other Python exception out of the SQS integration is named SQS.AmazonSQSException
  too. AWS's recording: LocalStack's error_handling/test_task_service_sqs.snapshot.json
  (test_send_message_empty_body); error names: https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
"""

from __future__ import annotations

import uuid
from typing import Any

from botocore.exceptions import ClientError
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs import (
    StateTaskServiceSqs,
)
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

from onceflow.local.engine.shape import Need, need

Patch = tuple[Any, str, Any]
SQS_EXCEPTION = "SQS.AmazonSQSException"


class _SqsRequestRefused(Exception):
    """What SQS answers a request it refuses, in the words of AWS's SDK message."""

    def __init__(self, message: str, code: str):
        super().__init__(
            f"{message} (Service: AmazonSQS; Status Code: 400; Error Code: {code}; "
            f"Request ID: {uuid.uuid4()}; Proxy: null)"
        )


def moto_needs() -> list[Need]:
    return [
        need(StateTaskServiceSqs, "_eval_service_task", "env", "resource_runtime_part", "normalised_parameters"),
        need(StateTaskServiceSqs, "_from_error", "env", "ex"),
        need(StateTaskServiceSqs, "_get_sfn_resource"),
        need(StateTaskServiceSqs, "_get_sfn_resource_type"),
    ]


def patches() -> list[Patch]:
    return [*sqs_errors()]


def sqs_errors() -> list[Patch]:
    original_eval = StateTaskServiceSqs._eval_service_task
    original_from_error = StateTaskServiceSqs._from_error

    def _eval_service_task(
        self: StateTaskServiceSqs,
        env: Any,
        resource_runtime_part: Any,
        normalised_parameters: dict,
        state_credentials: Any = None,
    ) -> None:
        if self.resource.api_action.lower() == "sendmessage" and not normalised_parameters.get("MessageBody"):
            raise _SqsRequestRefused("The request must contain the parameter MessageBody.", "MissingParameter")
        original_eval(self, env, resource_runtime_part, normalised_parameters, state_credentials)

    def _from_error(self: StateTaskServiceSqs, env: Any, ex: Exception) -> FailureEvent:
        if isinstance(ex, (ClientError, FailureEventException)):
            return original_from_error(self, env=env, ex=ex)
        return FailureEvent(
            env=env,
            error_name=CustomErrorName(SQS_EXCEPTION),
            event_type=HistoryEventType.TaskFailed,
            event_details=EventDetails(
                taskFailedEventDetails=TaskFailedEventDetails(
                    error=SQS_EXCEPTION,
                    cause=str(ex),
                    resource=self._get_sfn_resource(),
                    resourceType=self._get_sfn_resource_type(),
                )
            ),
        )

    return [
        (StateTaskServiceSqs, "_eval_service_task", _eval_service_task),
        (StateTaskServiceSqs, "_from_error", _from_error),
    ]

"""A service task's parameters and result in the casing of the service's API model, as AWS maps them.

- normalised_requests: a task's parameters are Step Functions' PascalCase (`StateMachineArn`,
  `Input`); before the call they are matched to the API model's member names whatever their case
  (Step Functions' own API: `stateMachineArn`), values of string members that are not text become
  JSON text and blob members bytes of compact JSON. moto 5.2.5 ships this code but the step that
  applies it (`_normalise_parameters`) is empty: a task calling Step Functions itself (aws-sdk:sfn
  or the optimised `states:startExecution`) failed with States.Runtime "'StateMachineArn'". A null
  member is not sent (the service answers as for a member left out: DynamoDB's "Value null at
  'item' …", dynamodb/validation.py); moto's mapping failed on it with a Python error.
- normalised_results: the result's members come back PascalCase (`ExecutionArn`, `StartDate`),
  as AWS's recordings show; moto returned the SDK's own (`executionArn`). Only the first letter
  changes: S3's `ChecksumCRC32` stays so (AWS's recording test_s3_put_object, 2025; moto wrote
  `ChecksumCrc32`). A timestamp member is
  ISO 8601 text (UTC, milliseconds, `Z`, as the context object's times); moto's datetime did not
  serialise, and the task failed with a Python TypeError.

The service's API model is botocore's (moto ported LocalStack's code, whose model loader it lacks).
AWS's recordings: LocalStack's services/test_aws_sdk_task_service.snapshot.json
(test_sfn_start_execution) and services/test_sfn_task_service.snapshot.json
(test_start_execution_input_json); https://docs.aws.amazon.com/step-functions/latest/dg/supported-services-awssdk.html
("use PascalCase for the API's parameters").
"""

from __future__ import annotations

import datetime
from typing import Any

from botocore.model import OperationModel
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.utils import camel_to_snake_case

from onceflow.engine.bookkeeping.once_per_key import once_per_key
from onceflow.engine.bookkeeping.service_models import service_model
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.interpreter.context_object import iso_millis

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(StateTaskService, "_normalise_parameters", "parameters", "boto_service_name", "service_action_name"),
        need(StateTaskService, "_normalise_response", "response", "boto_service_name", "service_action_name"),
        need(StateTaskService, "_to_boto_request", "parameters", "structure_shape"),
        need(StateTaskService, "_from_boto_response", "response", "structure_shape"),
        need(StateTaskService, "_get_boto_service_name", "boto_service_name"),
        need(StateTaskService, "_get_boto_service_action", "service_action_name"),
        need(StateTaskService, "_to_sfn_cased", "member_key"),
    ]


def patches() -> list[Patch]:
    return [*normalised_requests(), *normalised_results()]


@once_per_key
def operation_model(service_name: str, action: str) -> OperationModel | None:
    """The API model's operation for a boto service name and a snake_case action, else None."""
    try:
        service = service_model(service_name)
    except Exception:  # an unknown service: the call fails with its own error
        return None
    names = {camel_to_snake_case(name): name for name in service.operation_names}
    name = names.get(camel_to_snake_case(action))
    return service.operation_model(name) if name is not None else None


def _operation(task: StateTaskService, boto_service_name: str | None, service_action_name: str | None) -> Any:
    service = task._get_boto_service_name(boto_service_name=boto_service_name)
    action = task._get_boto_service_action(service_action_name=service_action_name)
    return operation_model(service, action)


def normalised_requests() -> list[Patch]:
    def _normalise_parameters(
        self: StateTaskService,
        parameters: dict,
        boto_service_name: str | None = None,
        service_action_name: str | None = None,
    ) -> None:
        _without_nulls(parameters)
        operation = _operation(self, boto_service_name, service_action_name)
        if operation is not None and operation.input_shape is not None:
            self._to_boto_request(parameters, operation.input_shape)

    return [(StateTaskService, "_normalise_parameters", _normalise_parameters)]


def _without_nulls(parameters: dict) -> None:
    """Drop null members (in place, nested too): the SDK Step Functions calls with does not send a
    member that is null, so the service answers as for a member left out."""
    for key, value in list(parameters.items()):
        if value is None:
            del parameters[key]
        elif isinstance(value, dict):
            _without_nulls(value)


def normalised_results() -> list[Patch]:
    def _normalise_response(
        self: StateTaskService,
        response: Any,
        boto_service_name: str | None = None,
        service_action_name: str | None = None,
    ) -> None:
        operation = _operation(self, boto_service_name, service_action_name)
        if operation is not None and operation.output_shape is not None:
            self._from_boto_response(response, operation.output_shape)
        _timestamps_as_text(response)

    return [
        (StateTaskService, "_normalise_response", _normalise_response),
        (StateTaskService, "_to_sfn_cased", staticmethod(_sfn_cased)),
    ]


def _sfn_cased(member_key: str) -> str:
    """A result member as Step Functions names it: the model's spelling, its first letter upper case
    (`executionArn` → `ExecutionArn`, `ChecksumCRC32` stays; moto made that `ChecksumCrc32`)."""
    return member_key[:1].upper() + member_key[1:]


def _timestamps_as_text(value: Any) -> None:
    """Every datetime in a result (dicts and lists, in place) as ISO 8601 text."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, member in list(items):
        if isinstance(member, datetime.datetime):
            value[key] = iso_millis(member)
        else:
            _timestamps_as_text(member)

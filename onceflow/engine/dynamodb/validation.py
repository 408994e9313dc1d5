"""DynamoDB's request validation where moto 5.2.5 skips it, and the name Step Functions gives it.

- table_names: a TableName outside DynamoDB's pattern `[a-zA-Z0-9_.-]+` is refused with
  ValidationException "1 validation error detected: Value '<name>' at 'tableName' failed to
  satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" (moto looked
  the name up and answered ResourceNotFoundException). A table ARN is a TableName too.
- required_members: an optimised `dynamodb:*` or an `aws-sdk:dynamodb:*` task whose parameters lack
  a member the API requires, or give it null (putItem without Item, or `"Item": null`), fails as
  DynamoDB answers the call, ValidationException "Value null at 'item' failed to satisfy constraint:
  Member must not be null" (the aws-sdk task: `DynamoDb.DynamoDbException`, "… (Service: DynamoDb,
  Status Code: 400, Request ID: …)"); on the embedded engine botocore's client-side check (or a
  Python error: States.Runtime "'NoneType' object has no attribute 'items'") stood in for it.
- error_names: a DynamoDB error the API model does not name (ValidationException) reaches the
  workflow as `DynamoDB.AmazonDynamoDBException`, the SDK's base exception; modeled ones keep their
  code (`DynamoDB.ResourceNotFoundException`).

AWS's recordings: LocalStack's error_handling/test_task_service_dynamodb.snapshot.json
(test_invalid_param, test_put_item_invalid_table_name) and error_handling/test_aws_sdk.snapshot.json
(test_dynamodb_invalid_param, July 2023);
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html (TableName's
pattern), https://docs.aws.amazon.com/step-functions/latest/dg/connect-ddb.html
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from botocore.exceptions import ClientError
from moto.core.utils import camelcase_to_underscores
from moto.dynamodb.exceptions import MockValidationException
from moto.dynamodb.responses import DynamoHandler
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk import (
    StateTaskServiceAwsSdk,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb import (
    StateTaskServiceDynamoDB,
)

from onceflow.engine.bookkeeping.service_models import service_model
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.integrations.sdk_shapes import operation_model

Patch = tuple[Any, str, Any]
TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]+")
BASE_EXCEPTION = "AmazonDynamoDBException"


def moto_needs() -> list[Need]:
    return [
        need(DynamoHandler, "call_action"),
        need(DynamoHandler, "_get_action"),
        need(StateTaskServiceDynamoDB, "_eval_service_task", "env", "resource_runtime_part", "normalised_parameters"),
        need(StateTaskServiceAwsSdk, "_eval_service_task", "env", "resource_runtime_part", "normalised_parameters"),
        need(StateTaskServiceDynamoDB, "_error_cause_from_client_error", "client_error"),
    ]


def patches() -> list[Patch]:
    return [*table_names(), *required_members(), *error_names()]


def table_names() -> list[Patch]:
    original = DynamoHandler.call_action

    def call_action(self: DynamoHandler) -> Any:
        name = (getattr(self, "params", None) or {}).get("TableName")
        if isinstance(name, str) and not name.startswith("arn:") and not TABLE_NAME.fullmatch(name):
            message = (
                f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: "
                f"Member must satisfy regular expression pattern: {TABLE_NAME.pattern}"
            )

            refuse_action(self, MockValidationException(message))
        return original(self)

    return [(DynamoHandler, "call_action", call_action)]


def refuse_action(handler: DynamoHandler, error: Exception) -> None:
    """Make the handler answer its request with `error`: moto's call_action looks the action up on the
    handler and answers its errors as DynamoDB does."""

    def refuse() -> Any:
        raise error

    setattr(handler, camelcase_to_underscores(handler._get_action()), refuse)


def _validation_error(message: str, action: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "ValidationException", "Message": message},
            "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": uuid.uuid4().hex.upper()},
        },
        action,
    )


def _refuse_missing_members(action: str, parameters: dict) -> None:
    """DynamoDB's ValidationException for the members its API requires that the call lacks (or has null)."""
    operation = operation_model("dynamodb", action)
    if operation is None or operation.input_shape is None:
        return
    missing = [m for m in operation.input_shape.required_members if parameters.get(m) is None]
    if missing:
        problems = [
            f"Value null at '{m[0].lower() + m[1:]}' failed to satisfy constraint: Member must not be null"
            for m in missing
        ]
        count = f"{len(problems)} validation error{'s' if len(problems) > 1 else ''} detected"
        raise _validation_error(f"{count}: {'; '.join(problems)}", operation.name)


def required_members() -> list[Patch]:
    original = StateTaskServiceDynamoDB._eval_service_task
    original_sdk = StateTaskServiceAwsSdk._eval_service_task

    def _eval_service_task(
        self: StateTaskServiceDynamoDB,
        env: Any,
        resource_runtime_part: Any,
        normalised_parameters: dict,
        state_credentials: Any = None,
    ) -> None:
        _refuse_missing_members(self.resource.api_action, normalised_parameters)
        original(self, env, resource_runtime_part, normalised_parameters, state_credentials)

    def _eval_sdk_task(
        self: StateTaskServiceAwsSdk,
        env: Any,
        resource_runtime_part: Any,
        normalised_parameters: dict,
        state_credentials: Any = None,
    ) -> None:
        if self.resource.api_name.lower() == "dynamodb":
            _refuse_missing_members(self.resource.api_action, normalised_parameters)
        original_sdk(self, env, resource_runtime_part, normalised_parameters, state_credentials)

    return [
        (StateTaskServiceDynamoDB, "_eval_service_task", _eval_service_task),
        (StateTaskServiceAwsSdk, "_eval_service_task", _eval_sdk_task),
    ]


def _modeled_errors() -> set[str]:
    return {shape.name for shape in service_model("dynamodb").error_shapes}


def error_names() -> list[Patch]:
    original = StateTaskServiceDynamoDB._error_cause_from_client_error
    modeled = _modeled_errors()

    def _error_cause_from_client_error(client_error: ClientError) -> tuple[str, str]:
        error, cause = original(client_error)
        if client_error.response["Error"]["Code"] not in modeled:
            error = f"DynamoDB.{BASE_EXCEPTION}"
        return error, cause

    return [(StateTaskServiceDynamoDB, "_error_cause_from_client_error", staticmethod(_error_cause_from_client_error))]

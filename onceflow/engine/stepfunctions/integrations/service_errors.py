"""Service errors reach the workflow under the service's own error name, never as a Python exception.

- sqs_errors: an `sqs:sendMessage` task whose MessageBody is missing or empty fails with
  `SQS.AmazonSQSException` and AWS's cause (MissingParameter), which a Catch handles; moto's SQS
  raised a Python TypeError there, which became an uncatchable States.Runtime on the embedded
  engine. Any other Python exception out of the SQS call itself is named SQS.AmazonSQSException
  too; an error before the call (Parameters or Arguments that do not evaluate: States.Runtime, a
  timeout: States.Timeout) keeps its own name, so no Catch on States.ALL handles a States.Runtime.
  AWS's recording: LocalStack's error_handling/test_task_service_sqs.snapshot.json
  (test_send_message_empty_body); error names: https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
- aws_sdk_errors: an `aws-sdk:<service>` task's error is named after the service's SDK service id
  without spaces (`S3.NoSuchBucketException`, `SecretsManager.SecretsManagerException`), as AWS
  names them; moto named them after the lower-case ARN part (`s3.NoSuchBucketException`), so a
  Catch on AWS's name never matched. DynamoDB and SFN keep their own spellings (`DynamoDb.`,
  `Sfn.`). An S3 error's cause ends with S3's `Extended Request ID` (the x-amz-id-2 host id every S3
  response carries; moto's S3 sends none, so one is made in S3's format). AWS's recordings:
  LocalStack's error_handling/test_aws_sdk.snapshot.json (test_no_such_bucket, test_s3_no_such_key,
  test_invalid_secret_name); https://docs.aws.amazon.com/step-functions/latest/dg/supported-services-awssdk.html
  An `aws-sdk:sfn` task's service error cause ends with the SDK's ` (SDK Attempt Count: 1)`, as
  AWS recorded it in 2025 (LocalStack's services/test_aws_sdk_task_service.snapshot.json,
  test_sfn_send_task_outcome_with_no_such_token: "Invalid Token: 'Invalid token' (Service: Sfn,
  Status Code: 400, Request ID: …) (SDK Attempt Count: 1)"). Only there: AWS's S3, DynamoDB and
  Secrets Manager recordings (test_s3_no_such_key, 2025 included) carry no such suffix.
"""

from __future__ import annotations

import base64
import functools
import os
import uuid
from typing import Any

from botocore.exceptions import ClientError
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk import (
    StateTaskServiceAwsSdk,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs import (
    StateTaskServiceSqs,
)
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

from onceflow.engine.bookkeeping.service_models import service_model
from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]
SQS_EXCEPTION = "SQS.AmazonSQSException"


class _SqsRequestRefused(Exception):
    """What SQS answers a request it refuses, in the words of AWS's SDK message."""

    def __init__(self, message: str, code: str):
        super().__init__(
            f"{message} (Service: AmazonSQS; Status Code: 400; Error Code: {code}; "
            f"Request ID: {uuid.uuid4()}; Proxy: null)"
        )


class _SqsCallFailed(Exception):
    """A Python exception out of the SQS call itself (not out of the state's own evaluation)."""


def moto_needs() -> list[Need]:
    return [
        need(StateTaskServiceSqs, "_eval_service_task", "env", "resource_runtime_part", "normalised_parameters"),
        need(StateTaskServiceSqs, "_from_error", "env", "ex"),
        need(StateTaskServiceSqs, "_get_sfn_resource"),
        need(StateTaskServiceSqs, "_get_sfn_resource_type"),
        need(StateTaskServiceAwsSdk, "_normalise_service_error_name", "service_name"),
        need(StateTaskServiceAwsSdk, "_from_error", "env", "ex"),
    ]


def patches() -> list[Patch]:
    return [*sqs_errors(), *aws_sdk_errors()]


# Step Functions' own spellings, kept where they differ from the service id (moto's table).
_OWN_SPELLINGS = {"dynamodb": "DynamoDb", "sfn": "Sfn"}
# The services whose aws-sdk error causes AWS records with the SDK's attempt count.
_ATTEMPT_COUNTED = frozenset({"Sfn"})
ATTEMPT_COUNT = " (SDK Attempt Count: 1)"


@functools.cache
def aws_sdk_error_prefix(service_name: str) -> str:
    """The prefix of an aws-sdk task's error names: the SDK service id without its spaces."""
    own = _OWN_SPELLINGS.get(service_name.lower())
    if own:
        return own
    try:
        service_id = service_model(service_name.lower()).service_id
    except Exception:  # an unknown service: the call itself fails with its own error first
        return service_name
    return str(service_id).replace(" ", "")


def _s3_host_id() -> str:
    """A host id in S3's format (x-amz-id-2: base64 of random bytes)."""
    return base64.b64encode(os.urandom(57)).decode()


def aws_sdk_errors() -> list[Patch]:
    original_from_error = StateTaskServiceAwsSdk._from_error

    def _from_error(self: StateTaskServiceAwsSdk, env: Any, ex: Exception) -> FailureEvent:
        prefix = aws_sdk_error_prefix(self.resource.api_name)
        if isinstance(ex, ClientError) and prefix == "S3":
            metadata = ex.response.setdefault("ResponseMetadata", {})
            metadata.setdefault("HostId", metadata.get("HTTPHeaders", {}).get("x-amz-id-2") or _s3_host_id())
        event = original_from_error(self, env=env, ex=ex)
        details = (event.event_details or {}).get("taskFailedEventDetails")
        if isinstance(ex, ClientError) and prefix in _ATTEMPT_COUNTED and details and "cause" in details:
            details["cause"] += ATTEMPT_COUNT
        return event

    return [
        (StateTaskServiceAwsSdk, "_normalise_service_error_name", staticmethod(aws_sdk_error_prefix)),
        (StateTaskServiceAwsSdk, "_from_error", _from_error),
    ]


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
        try:
            original_eval(self, env, resource_runtime_part, normalised_parameters, state_credentials)
        except (ClientError, FailureEventException, TimeoutError):
            raise
        except Exception as ex:
            raise _SqsCallFailed(str(ex)) from ex

    def _from_error(self: StateTaskServiceSqs, env: Any, ex: Exception) -> FailureEvent:
        if not isinstance(ex, (_SqsRequestRefused, _SqsCallFailed)):
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

"""The execution APIs answered as AWS answers them where moto 5.2.5 differs in ways a caller sees.

- unnamed_executions: StartExecution without `name` names the execution with a UUID (moto names it
  `None`: a second unnamed start fails with ExecutionAlreadyExists and `$$.Execution.Name` is null).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
  ("If you don't provide a name for the execution, Step Functions automatically generates a UUID").
- execution_data_details: DescribeExecution answers `inputDetails` {included: true} (and
  `outputDetails` with the output), as AWS does for a STANDARD execution.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html;
  AWS's recording: LocalStack's test_sfn_api.snapshot.json (test_describe_execution).
- timed_out_stop_date: a TIMED_OUT execution has its `stopDate` in DescribeExecution and
  ListExecutions (moto 5.2.5 answers it for SUCCEEDED, FAILED and ABORTED only, though it keeps the
  date): "If the execution ended, the date the execution stopped"
  (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html,
  API_ExecutionListItem.html). Its test: tests/engine/test_timed_out_stop_date.py.
- reverse_history: GetExecutionHistory honours `reverseOrder` (moto answered oldest first always).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetExecutionHistory.html;
  AWS's recording: LocalStack's test_sfn_api.snapshot.json (test_get_execution_history_reversed).
- arn_prefix: an ARN that does not start with `arn:` is InvalidArn "Invalid Arn: 'Invalid ARN
  prefix: <arn>'" for every API (moto: "Invalid State Machine Arn: ..." or, for an execution,
  "Execution Does Not Exist: ..." under the InvalidArn code). AWS's recording: LocalStack's
  test_sfn_api.snapshot.json (test_describe_invalid_arn_sm, test_describe_execution_invalid_arn, ...).
- task_failure_cause: SendTaskFailure passes its `cause` on to the waiting task (moto's handler read
  `error` only, so the TaskFailed had no cause and a Catch's error output `"Cause": null`).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskFailure.html; AWS's
  recording: LocalStack's error_handling/test_task_service_sqs.snapshot.json
  (test_sqs_failure_in_wait_for_task_tok: TaskFailed cause "Failure cause", the Catch's output
  {"Error": "Failure error", "Cause": "Failure cause"}).

Each has a conformance test in tests/engine/test_conformance.py citing the page (or the AWS
recording) it follows.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from typing import Any

from moto.core.responses import EmptyResult
from moto.stepfunctions.exceptions import InvalidArn
from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(
            StepFunctionsParserBackend,
            "start_execution",
            "state_machine_arn",
            "name",
            "execution_input",
            "trace_header",
        ),
        need(StepFunctionResponse, "describe_execution"),
        need(StepFunctionResponse, "list_executions"),
        need(StepFunctionsParserBackend, "describe_execution", "execution_arn"),
        need(StepFunctionResponse, "get_execution_history"),
        need(StepFunctionResponse, "_get_param"),
        need(StepFunctionBackend, "_validate_arn", "arn", "regex", "invalid_msg"),
        need(StepFunctionResponse, "send_task_failure"),
        need(StepFunctionsParserBackend, "send_task_failure", "task_token", "error", "cause"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these (they are applied together, after the list is
    built): a replacement of the same attribute there is the one wrapped."""
    described = execution_data_details(before)
    return [
        *unnamed_executions(before),
        *described,
        *timed_out_stop_date([*before, *described]),
        *reverse_history(),
        *arn_prefix(),
        *task_failure_cause(),
    ]


def unnamed_executions(before: Sequence[Patch]) -> list[Patch]:
    # The mocked integrations' `arn#TestCase` wrapper (mocking/moto_engine.py) is the one wrapped.
    original = current(before, StepFunctionsParserBackend, "start_execution")

    def start_execution(
        self: StepFunctionsParserBackend,
        state_machine_arn: str,
        name: str | None = None,
        execution_input: str | None = None,
        trace_header: str | None = None,
    ) -> Any:
        return original(self, state_machine_arn, name or str(uuid.uuid4()), execution_input, trace_header)

    # Keeps what the wrapped function carries (the mocked integrations' mark: mocking.is_enabled()).
    functools.update_wrapper(start_execution, original)

    return [(StepFunctionsParserBackend, "start_execution", start_execution)]


def execution_data_details(before: Sequence[Patch]) -> list[Patch]:
    original = current(before, StepFunctionResponse, "describe_execution")  # stepfunctions/strict.py's compact output

    def describe_execution(self: StepFunctionResponse) -> Any:
        result = original(self)
        response = getattr(result, "result", None)
        if isinstance(response, dict):
            response.setdefault("inputDetails", {"included": True})
            if "output" in response:
                response["outputDetails"] = {"included": True}
        return result

    return [(StepFunctionResponse, "describe_execution", describe_execution)]


def _with_stop_date(response: StepFunctionResponse, item: dict[str, Any]) -> None:
    """The date a TIMED_OUT execution stopped, which moto keeps but does not answer."""
    if item.get("status") != "TIMED_OUT" or item.get("stopDate") is not None:
        return
    stopped = response.stepfunction_backend.describe_execution(item["executionArn"]).stop_date
    if stopped is not None:
        item["stopDate"] = stopped


def timed_out_stop_date(before: Sequence[Patch]) -> list[Patch]:
    original_describe = current(before, StepFunctionResponse, "describe_execution")
    original_list = current(before, StepFunctionResponse, "list_executions")

    def describe_execution(self: StepFunctionResponse) -> Any:
        result = original_describe(self)
        response = getattr(result, "result", None)
        if isinstance(response, dict):
            _with_stop_date(self, response)
        return result

    def list_executions(self: StepFunctionResponse) -> Any:
        result = original_list(self)
        response = getattr(result, "result", None)
        for item in response.get("executions", []) if isinstance(response, dict) else []:
            _with_stop_date(self, item)
        return result

    return [
        (StepFunctionResponse, "describe_execution", describe_execution),
        (StepFunctionResponse, "list_executions", list_executions),
    ]


def reverse_history() -> list[Patch]:
    original = StepFunctionResponse.get_execution_history

    def get_execution_history(self: StepFunctionResponse) -> Any:
        result = original(self)
        response = getattr(result, "result", None)
        if self._get_param("reverseOrder") and isinstance(response, dict) and "events" in response:
            response["events"] = list(reversed(response["events"]))
        return result

    return [(StepFunctionResponse, "get_execution_history", get_execution_history)]


def arn_prefix() -> list[Patch]:
    original = StepFunctionBackend._validate_arn

    def _validate_arn(self: StepFunctionBackend, arn: str, regex: Any, invalid_msg: str) -> None:
        if not (arn or "").startswith("arn:"):
            raise InvalidArn(f"Invalid Arn: 'Invalid ARN prefix: {arn}'")
        original(self, arn=arn, regex=regex, invalid_msg=invalid_msg)

    return [(StepFunctionBackend, "_validate_arn", _validate_arn)]


def task_failure_cause() -> list[Patch]:
    def send_task_failure(self: StepFunctionResponse) -> Any:
        self.stepfunction_backend.send_task_failure(
            self._get_param("taskToken"), error=self._get_param("error"), cause=self._get_param("cause")
        )
        return EmptyResult()

    return [(StepFunctionResponse, "send_task_failure", send_task_failure)]

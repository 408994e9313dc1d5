"""Strictness patches: moto's Step Functions made as strict as AWS where moto is more lenient in
ways that hide defects. Always on (none is a speed-up); each is its own small function returning
(owner, attribute, replacement) triples, and each has a conformance test in
tests/engine/test_conformance.py citing the AWS page it follows.

- uncatchable_errors: `States.ALL` (and `States.TaskFailed`) in Retry and Catch match neither
  `States.Runtime` nor the terminal `States.DataLimitExceeded`; no Retry or Catch handles them.
  https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
- choice_absent_variable: a Choice rule whose `Variable` selects nothing raises `States.Runtime`
  (moto evaluates it to false and takes Default); `IsPresent` is the one test of absence, and And/Or
  stop at the first rule that decides them, so `IsPresent` guards the rules after it.
  https://docs.aws.amazon.com/step-functions/latest/dg/state-choice.html
- no_choice_matched: a Choice with no rule true and no Default fails with States.NoChoiceMatched
  (moto raises a Python error, which becomes States.Runtime).
  https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
- execution_input: StartExecution refuses input that is not JSON text (`NaN`, `Infinity`, trailing
  text) with InvalidExecutionInput, input over 256 KiB with ValidationException, a name with a
  character AWS forbids with InvalidName and one over 80 characters with ValidationException.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
- payload_limits: a task's input after Parameters over 256 KiB fails with States.DataLimitExceeded
  (moto checks only results and outputs), and exactly 256 KiB fits (moto refuses it).
  https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
- execution_output: DescribeExecution.output is the compact JSON text of the result, a string
  result quoted (moto returns a string result bare and other results with spaces); TaskSucceeded
  history events carry compact JSON too.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
- stop_keeps_reason: StopExecution keeps its error and cause (moto drops them).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html
- api_error_codes: the errors of moto's Step Functions parser (ported from LocalStack, where they
  name their code in `code`) answer with that code; moto reads `TYPE`, so CreateStateMachine with a
  definition that does not parse answered with an empty code instead of InvalidDefinition.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html
"""

from __future__ import annotations

import json
from typing import Any

from moto.core.exceptions import AWSError
from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.stepfunctions.exceptions import InvalidExecutionInput, InvalidName, ValidationException
from moto.stepfunctions.parser import api as parser_api
from moto.stepfunctions.parser import quotas
from moto.stepfunctions.parser.api import ExecutionFailedEventDetails, ExecutionStatus, HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.error_equals_decl import ErrorEqualsDecl
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.state.choice.comparison.comparison_operator_type import (
    ComparisonOperatorType,
)
from moto.stepfunctions.parser.asl.component.state.choice.comparison.comparison_variable import (
    ComparisonVariable,
)
from moto.stepfunctions.parser.asl.component.state.choice.comparison.variable import NoSuchVariable
from moto.stepfunctions.parser.asl.component.state.choice.state_choice import StateChoice
from moto.stepfunctions.parser.asl.component.state.exec.state_task import state_task_lambda
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
    state_task_service,
    state_task_service_callback,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.bookkeeping import retention
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.api.jackson_errors import syntax_error

Patch = tuple[Any, str, Any]

# "Maximum input or output size for a task, state, or execution: 256 KiB of data as a UTF-8
# encoded string" (Step Functions service quotas); StartExecution's `input` has the same bound.
MAX_PAYLOAD_BYTES = 256 * 1024
# Errors no Retry or Catch handles: they always fail the execution.
UNCATCHABLE = frozenset({StatesErrorNameType.StatesRuntime.to_name(), "States.DataLimitExceeded"})


def moto_needs() -> list[Need]:
    return [
        need(parser_api, "InvalidDefinition"),  # one of the errors api_error_codes gives their code
        need(AWSError, "__init__", "message", "exception_type", "status"),
        need(ErrorEqualsDecl, "_eval_body", "env"),
        need(ComparisonVariable, "_eval_body", "env"),
        need(NoSuchVariable, "__init__", "path"),
        need(StateChoice, "_eval_state", "env"),
        need(StateChoice, "__init__"),
        need(StepFunctionResponse, "start_execution"),
        need(StepFunctionResponse, "describe_execution"),
        need(StepFunctionResponse, "stop_execution"),
        need(StepFunctionResponse, "_get_param"),
        need(StepFunctionResponse, "stepfunction_backend"),
        need(Execution, "stop", "stop_date", "error", "cause"),
        need(quotas, "is_within_size_quota", "value"),
        need(state_task_service, "is_within_size_quota"),
        need(state_task_lambda, "is_within_size_quota"),
        need(CommonStateField, "_verify_size_quota", "env", "value"),
        need(
            StateTaskService,
            "_before_eval_execution",
            "env",
            "resource_runtime_part",
            "raw_parameters",
            "state_credentials",
        ),
        need(state_task_service, "to_json_str"),
        need(state_task_service_callback, "to_json_str"),
        need(StateTaskService, "_verify_size_quota", "env", "value"),
    ]


def patches() -> list[Patch]:
    return [
        *uncatchable_errors(),
        *choice_absent_variable(),
        *no_choice_matched(),
        *execution_input(),
        *payload_limits(),
        *execution_output(),
        *stop_keeps_reason(),
        *api_error_codes(),
    ]


# -- Retry and Catch ---------------------------------------------------------------------------------


def _error_text(error_name: Any) -> str | None:
    return getattr(error_name, "error_name", None)


def uncatchable_errors() -> list[Patch]:
    original = ErrorEqualsDecl._eval_body

    def _eval_body(self: ErrorEqualsDecl, env: Any) -> None:
        if _error_text(env.stack[-1]) in UNCATCHABLE:
            env.stack.pop()
            env.stack.append(False)
            return
        original(self, env)

    return [(ErrorEqualsDecl, "_eval_body", _eval_body)]


# -- Choice ------------------------------------------------------------------------------------------


def _failure(env: Any, error: StatesErrorNameType, cause: str) -> FailureEventException:
    return FailureEventException(
        failure_event=FailureEvent(
            env=env,
            error_name=StatesErrorName(typ=error),
            event_type=HistoryEventType.ExecutionFailed,
            event_details=EventDetails(
                executionFailedEventDetails=ExecutionFailedEventDetails(error=error.to_name(), cause=cause)
            ),
        )
    )


def choice_absent_variable() -> list[Patch]:
    def _eval_body(self: ComparisonVariable, env: Any) -> None:
        self.variable.eval(env)
        value = env.stack[-1]
        if isinstance(value, NoSuchVariable) and self.comparison_function.operator_type != (
            ComparisonOperatorType.IsPresent
        ):
            env.stack.pop()
            path = self.variable.string_sampler.literal_value
            # The cause AWS gives (moto prefixes the state and the event it was entered at).
            raise _failure(
                env,
                StatesErrorNameType.StatesRuntime,
                f"Invalid path '{path}': The choice state's condition path references an invalid value.",
            )
        self.comparison_function.eval(env)

    return [(ComparisonVariable, "_eval_body", _eval_body)]


def no_choice_matched() -> list[Patch]:
    def _eval_state(self: StateChoice, env: Any) -> None:
        if self.default_state is not None:
            return original(self, env)
        for rule in self.choices_decl.rules:
            rule.eval(env)
            if env.stack.pop() is True:
                env.stack.append(rule.next_stmt.name)
                return None
        raise _failure(env, StatesErrorNameType.StatesNoChoiceMatched, "No Matches!")

    original = StateChoice._eval_state
    return [(StateChoice, "_eval_state", _eval_state)]


# -- StartExecution input ----------------------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity; JSON (RFC 8259) has no such tokens.
    raise ValueError(f"Non-standard token '{name}': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow")


def invalid_execution_input(text: str) -> Exception | None:
    """The error AWS gives StartExecution (and StartSyncExecution) for this input, or None."""
    if len(text.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        return ValidationException(
            "1 validation error detected: Value at 'input' failed to satisfy constraint: "
            f"Member must have length less than or equal to {MAX_PAYLOAD_BYTES}"
        )
    if not text.strip():
        return InvalidExecutionInput("Invalid State Machine Execution Input: 'Invalid execution input.'")
    try:
        json.loads(text, parse_constant=_refuse_constant)
    except ValueError as error:
        # In the words of AWS's JSON parser where we know them (stepfunctions/api/jackson_errors.py).
        detail = syntax_error(text, error).message if isinstance(error, json.JSONDecodeError) else str(error)
        return InvalidExecutionInput(f"Invalid State Machine Execution Input: '{detail}'")
    return None


# "A name must not contain: white space, brackets < > { } [ ], wildcard characters ? *, special
# characters " # % \ ^ | ~ ` $ & , ; : /, control characters (U+0000-001F, U+007F-009F)".
_NAME_FORBIDDEN = frozenset(' <>{}[]?*"#%\\^|~`$&,;:/') | {chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))}
MAX_NAME_LENGTH = 80


def invalid_execution_name(name: str) -> Exception | None:
    """The error AWS gives StartExecution for this execution name, or None."""
    if len(name) > MAX_NAME_LENGTH:
        return ValidationException(
            f"1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: "
            f"Member must have length less than or equal to {MAX_NAME_LENGTH}"
        )
    if any(char in _NAME_FORBIDDEN or char.isspace() for char in name):
        return InvalidName(f"Invalid Name: '{name}'")
    return None


def execution_input() -> list[Patch]:
    original = StepFunctionResponse.start_execution

    def start_execution(self: StepFunctionResponse) -> Any:
        name, text = self._get_param("name"), self._get_param("input")
        error = (invalid_execution_name(name) if name is not None else None) or (
            invalid_execution_input(text) if text is not None else None
        )
        if error is not None:
            raise error
        return original(self)

    return [(StepFunctionResponse, "start_execution", start_execution)]


# -- payload size quota ------------------------------------------------------------------------------


def is_within_size_quota(value: Any) -> bool:
    # Measured as the JSON text AWS keeps (compact); moto measures it with spaces.
    text = value if isinstance(value, str) else to_json_str(value, separators=(",", ":"))
    return len(text.encode("utf-8")) <= MAX_PAYLOAD_BYTES


def payload_limits() -> list[Patch]:
    original_before = StateTaskService._before_eval_execution

    def _before_eval_execution(
        self: StateTaskService,
        env: Any,
        resource_runtime_part: Any,
        raw_parameters: dict,
        state_credentials: Any,
    ) -> None:
        # "The input of a state after Parameters processing" is also bound by the quota.
        self._verify_size_quota(env=env, value=raw_parameters)
        original_before(
            self,
            env=env,
            resource_runtime_part=resource_runtime_part,
            raw_parameters=raw_parameters,
            state_credentials=state_credentials,
        )

    return [
        (quotas, "is_within_size_quota", is_within_size_quota),
        (state_task_service, "is_within_size_quota", is_within_size_quota),
        (state_task_lambda, "is_within_size_quota", is_within_size_quota),
        (CommonStateField, "_verify_size_quota", _state_size_check(CommonStateField._verify_size_quota)),
        (StateTaskService, "_before_eval_execution", _before_eval_execution),
    ]


def _state_size_check(original: Any) -> Any:
    # moto's state-level check imports the quota function by name: route it through the strict one.
    def _verify_size_quota(self: CommonStateField, env: Any, value: Any) -> None:
        if not is_within_size_quota(value):
            original(self, env, value)

    return _verify_size_quota


# -- DescribeExecution output and history ------------------------------------------------------------


def _compact_json(obj: Any, separators: tuple[str, str] | None = None) -> str:
    return to_json_str(obj, separators=separators or (",", ":"))


def execution_output() -> list[Patch]:
    original_describe = StepFunctionResponse.describe_execution

    def describe_execution(self: StepFunctionResponse) -> Any:
        try:
            execution = self.stepfunction_backend.describe_execution(self._get_param("executionArn"))
        except Exception:  # moto's own answer below says why (no such execution, an invalid ARN)
            return original_describe(self)
        kept = retention.compact_output(execution)  # a pruned execution's: not parsed and written again
        if kept is None:
            result = original_describe(self)
        else:
            with retention.output_as_text(execution):
                result = original_describe(self)
        response = getattr(result, "result", None)
        if isinstance(response, dict) and response.get("status") == ExecutionStatus.SUCCEEDED:
            response["output"] = kept if kept is not None else _compact_json(execution.output)
        return result

    return [
        (StepFunctionResponse, "describe_execution", describe_execution),
        # TaskScheduled parameters and TaskSucceeded output are compact JSON text on AWS too.
        (state_task_service, "to_json_str", _compact_json),
        (state_task_service_callback, "to_json_str", _compact_json),
    ]


# -- StopExecution -----------------------------------------------------------------------------------


def stop_keeps_reason() -> list[Patch]:
    def stop_execution(self: StepFunctionResponse) -> Any:
        arn = self._get_param("executionArn")
        error, cause = self._get_param("error"), self._get_param("cause")
        execution = self.stepfunction_backend.describe_execution(arn)
        stop_date = utcnow()
        if execution.exec_status == ExecutionStatus.RUNNING:
            # DescribeExecution of the aborted execution reports them, as the history does.
            execution.error, execution.cause = error, cause
        execution.stop(stop_date=stop_date, error=error, cause=cause)
        return ActionResult({"stopDate": execution.stop_date or stop_date})

    return [(StepFunctionResponse, "stop_execution", stop_execution)]


# -- API errors --------------------------------------------------------------------------------------


def _coded_parser_errors() -> list[type[AWSError]]:
    """The parser's error classes that name a code moto never reads."""
    return [
        error
        for error in vars(parser_api).values()
        if isinstance(error, type)
        and issubclass(error, AWSError)
        and error is not AWSError
        and isinstance(error.__dict__.get("code"), str)
        and error.TYPE is None
    ]


def api_error_codes() -> list[Patch]:
    patches: list[Patch] = []
    for error in _coded_parser_errors():
        patches.append((error, "TYPE", error.__dict__["code"]))
        status = error.__dict__.get("status_code")
        if isinstance(status, int):
            patches.append((error, "STATUS", status))
    return patches

"""`TestState` on the embedded endpoint, shaped like the API of November 2025.

Reference: https://docs.aws.amazon.com/step-functions/latest/apireference/API_TestState.html and the
developer guide's "Testing state machines with TestState API" (test-state-isolation.html); the
request and response members follow botocore's service model exactly.

moto 5.2.5 carries an early port of LocalStack's TestState interpreter (one state, no mocks, no
Retry/Catch outcome) but never routes the action. This module adds the action to moto's Step
Functions responses and runs the state with moto's own parser and evaluator, adding what the API
now does:

- a whole definition with `stateName` (the named state is tested, with the definition's
  QueryLanguage; the whole definition must be valid);
- `mock.result` / `mock.errorOutput` replace the service call of a Task, and a mocked result is
  checked against the API's output shape (`fieldValidationMode` STRICT, PRESENT or NONE);
- one attempt only: an error a Retrier would retry ends with status RETRIABLE (attempt number from
  `stateConfiguration.retrierRetryCount`), one a Catcher catches with CAUGHT_ERROR, the catcher's
  `Next` and its output, and `inspectionData.errorDetails` says which Retrier or Catcher;
- `status`, `nextState`, `output`, `error`, `cause` and `inspectionData` (DEBUG and TRACE; TRACE
  adds request/response for HTTP tasks only, which this engine does not run).

Validation messages are those LocalStack's parity tests recorded against AWS.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from botocore.model import ListShape, MapShape, Shape, StructureShape
from botocore.session import get_session
from moto.core.exceptions import AWSError
from moto.stepfunctions.parser.api import HistoryEventType, StateMachineType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.antlr.runtime.ASLLexer import ASLLexer
from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
from moto.stepfunctions.parser.asl.component.common.catch.catch_outcome import CatchOutcome
from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.error_name import ErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task import StateTask
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.asl.component.test_state.program.test_state_program import TestStateProgram
from moto.stepfunctions.parser.asl.eval.evaluation_details import AWSExecutionDetails
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventHistoryContext
from moto.stepfunctions.parser.asl.eval.program_state import (
    ProgramEnded,
    ProgramError,
    ProgramRunning,
    ProgramTimedOut,
)
from moto.stepfunctions.parser.asl.eval.states import ContextObjectData, ExecutionData, StateMachineData
from moto.stepfunctions.parser.asl.eval.test_state.environment import TestStateEnvironment
from moto.stepfunctions.parser.asl.eval.test_state.program_state import ProgramChoiceSelected
from moto.stepfunctions.parser.asl.parse.asl_parser import (
    AmazonStateLanguageParser,
    ASLParserException,
    SyntaxErrorListener,
)
from moto.stepfunctions.parser.asl.parse.test_state.preprocessor import TestStatePreprocessor
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str
from moto.stepfunctions.responses import StepFunctionResponse

Patch = tuple[Any, str, Any]


class InvalidDefinition(AWSError):
    TYPE = "InvalidDefinition"


class InvalidExecutionInput(AWSError):
    TYPE = "InvalidExecutionInput"


class ValidationException(AWSError):
    TYPE = "ValidationException"


SUCCEEDED: Final = "SUCCEEDED"
FAILED: Final = "FAILED"
RETRIABLE: Final = "RETRIABLE"
CAUGHT_ERROR: Final = "CAUGHT_ERROR"

INSPECTION_LEVELS: Final = ("INFO", "DEBUG", "TRACE")
FIELD_VALIDATION_MODES: Final = ("STRICT", "PRESENT", "NONE")
# The API runs any state but these; Map and Parallel only with a mock, which this engine does not offer.
_TESTABLE_TYPES: Final = {"Task", "Pass", "Wait", "Choice", "Succeed", "Fail"}
_MOCKABLE_TYPES: Final = {"Task", "Map", "Parallel"}
_MOCK_REJECTING_TYPES: Final = {"Pass", "Fail", "Succeed"}
_MOCK_MAX_CHARS: Final = 262144
_NO_MOCK_RESULT: Final = object()  # `null` is a valid mocked result


@dataclass(frozen=True)
class TestStateRequest:
    """One TestState call, checked as the API checks it."""

    __test__ = False  # not a pytest test class

    state: dict[str, Any]
    state_name: str
    state_definition: str
    role_arn: str | None
    input_value: Any
    inspection_level: str
    variables: dict[str, Any]
    mock_result: Any = _NO_MOCK_RESULT
    mock_error: dict[str, str] | None = None
    field_validation_mode: str = "STRICT"
    retrier_retry_count: int = 0
    context: dict[str, Any] | None = None

    @property
    def mocked(self) -> bool:
        return self.mock_error is not None or self.mock_result is not _NO_MOCK_RESULT


def _json_param(text: str | None, default: Any, error: type[Exception], what: str) -> Any:
    if text is None:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{what} must be valid JSON: {exc}") from exc


def parse_request(params: dict[str, Any]) -> TestStateRequest:
    definition_text = params.get("definition")
    if not definition_text:
        raise ValidationException(
            "1 validation error detected: Value null at 'definition' failed to satisfy constraint: Member must not be null"
        )
    definition = _json_param(definition_text, None, InvalidDefinition, "Definition")
    if not isinstance(definition, dict):
        raise InvalidDefinition("Definition must be a JSON object")
    state_name = params.get("stateName")
    state, name, state_text = _select_state(definition, definition_text, state_name)

    inspection_level = params.get("inspectionLevel") or "INFO"
    if inspection_level not in INSPECTION_LEVELS:
        raise ValidationException(
            f"1 validation error detected: Value '{inspection_level}' at 'inspectionLevel' failed to satisfy "
            f"constraint: Member must satisfy enum value set: [{', '.join(INSPECTION_LEVELS)}]"
        )
    input_value = _json_param(params.get("input"), {}, InvalidExecutionInput, "Input")
    variables = _json_param(params.get("variables"), {}, ValidationException, "Variables")
    if not isinstance(variables, dict):
        raise ValidationException("Variables must be a JSON object")

    state_type = state.get("Type")
    mock = params.get("mock")
    mock_result, mock_error, field_validation_mode = _parse_mock(mock, state_type, params)
    if state_type in {"Map", "Parallel"}:
        # A mock of a whole Map or Parallel needs the iteration machinery AWS has and moto lacks.
        raise InvalidDefinition(
            "TestState API does not support Map or Parallel states. Supported state types include: "
            "[Task, Wait, Pass, Succeed, Fail, Choice]"
        )
    if state_type not in _TESTABLE_TYPES:
        raise InvalidDefinition(f"Unsupported state type for TestState runs '{state_type}'.")
    context = _parse_context(params.get("context"), mocked=mock is not None)
    role_arn = params.get("roleArn")
    if role_arn is None and state_type == "Task" and mock is None:
        raise ValidationException("RoleArn must be specified when testing a Task state")
    retrier_retry_count = _parse_configuration(params.get("stateConfiguration") or {}, state_type)

    return TestStateRequest(
        state=state,
        state_name=name,
        state_definition=state_text,
        role_arn=role_arn,
        input_value=input_value,
        inspection_level=inspection_level,
        variables=variables,
        mock_result=mock_result,
        mock_error=mock_error,
        field_validation_mode=field_validation_mode,
        retrier_retry_count=retrier_retry_count,
        context=context,
    )


def _parse_mock(mock: dict[str, Any] | None, state_type: str, params: dict[str, Any]) -> tuple[Any, Any, str]:
    """(mocked result or _NO_MOCK_RESULT, mocked error or None, fieldValidationMode)."""
    if mock is None:
        return _NO_MOCK_RESULT, None, "STRICT"
    if state_type in _MOCK_REJECTING_TYPES or state_type not in _MOCKABLE_TYPES:
        raise ValidationException(f"State type '{state_type}' is not supported when a mock is specified")
    if params.get("revealSecrets"):
        raise ValidationException("TestState does not support RevealSecrets when a mock is specified.")
    if "result" in mock and "errorOutput" in mock:
        raise ValidationException("A test mock should have only one of the following fields: [result, errorOutput].")
    mode = mock.get("fieldValidationMode") or "STRICT"
    if mode not in FIELD_VALIDATION_MODES:
        raise ValidationException(
            f"1 validation error detected: Value '{mode}' at 'mock.fieldValidationMode' failed "
            f"to satisfy constraint: Member must satisfy enum value set: [{', '.join(FIELD_VALIDATION_MODES)}]"
        )
    if "result" in mock:
        if len(mock["result"]) > _MOCK_MAX_CHARS:
            raise ValidationException("Mocked result must be at most 262144 characters")
        return _json_param(mock["result"], None, ValidationException, "Mocked result"), None, mode
    error_output = mock.get("errorOutput")
    if error_output is None:
        return _NO_MOCK_RESULT, None, mode
    if error_output.get("error") is None:
        raise ValidationException("mock.errorOutput.error is required when mock.errorOutput is specified")
    return _NO_MOCK_RESULT, {"error": error_output["error"], "cause": error_output.get("cause", "")}, mode


def _parse_context(text: str | None, mocked: bool) -> dict[str, Any] | None:
    if text is None:
        return None
    if not mocked:
        raise ValidationException("The context field may only be specified together with a mock")
    context = _json_param(text, None, ValidationException, "Context")
    if not isinstance(context, dict):
        raise ValidationException("Invalid Context object provided: the Context object must be a JSON object")
    if "Map" in context:
        raise ValidationException(
            "Invalid Context object provided: 'Map' field is not supported when mocking a Context object"
        )
    return context


def _parse_configuration(configuration: dict[str, Any], state_type: str) -> int:
    """stateConfiguration: the retrier retry count; the Map and Parallel fields do not apply to other states."""
    retrier_retry_count = int(configuration.get("retrierRetryCount", 0))
    if retrier_retry_count < 0:
        raise ValidationException("stateConfiguration.retrierRetryCount must be at least 0")
    for map_only in ("mapIterationFailureCount", "mapItemReaderData"):
        if map_only in configuration and state_type != "Map":
            raise ValidationException(f"stateConfiguration.{map_only} applies to Map states only")
    if configuration.get("errorCausedByState") is not None and state_type not in {"Map", "Parallel"}:
        raise ValidationException("stateConfiguration.errorCausedByState applies to Map and Parallel states only")
    return retrier_retry_count


def _select_state(
    definition: dict[str, Any], definition_text: str, state_name: str | None
) -> tuple[dict[str, Any], str, str]:
    """The state under test, its name and its definition text (with the machine's QueryLanguage)."""
    if state_name is None:
        if "States" in definition and "Type" not in definition:
            raise InvalidDefinition("A state machine definition needs stateName to say which state to test")
        return definition, TestStatePreprocessor.STATE_NAME, definition_text
    try:
        AmazonStateLanguageParser.parse(definition_text)
    except ASLParserException as exc:
        raise InvalidDefinition(repr(exc)) from exc
    except Exception as exc:  # moto's preprocessor reports semantic errors as plain exceptions
        raise InvalidDefinition(f"Error={type(exc).__name__} Args={list(exc.args)}") from exc
    states = definition.get("States")
    if not isinstance(states, dict) or state_name not in states:
        raise ValidationException("State not found in definition")
    state = dict(states[state_name])
    if "QueryLanguage" in definition and "QueryLanguage" not in state:
        state["QueryLanguage"] = definition["QueryLanguage"]
    return state, state_name, json.dumps(state)


class _NamedTestStatePreprocessor(TestStatePreprocessor):
    def __init__(self, state_name: str):
        super().__init__()
        self.STATE_NAME = state_name  # read by visitState_decl_body for the state's name ($$.State.Name)


def _parse_state(request: TestStateRequest) -> TestStateProgram:
    """moto's TestState parse, with the state's own name instead of "TestState"."""
    from antlr4 import CommonTokenStream, InputStream

    listener = SyntaxErrorListener()
    parser = ASLParser(CommonTokenStream(ASLLexer(InputStream(request.state_definition))))
    parser.removeErrorListeners()
    parser.addErrorListener(listener)
    tree = parser.state_decl_body()
    if listener.errors:
        raise InvalidDefinition(repr(ASLParserException(errors=listener.errors)))
    try:
        return _NamedTestStatePreprocessor(request.state_name).visit(tree)
    except Exception as exc:
        raise InvalidDefinition(f"Error={type(exc).__name__} Args={list(exc.args)}") from exc


@dataclass
class _Outcome:
    """What one attempt of the state ended with, beyond moto's program states."""

    status: str | None = None
    error: str | None = None
    cause: str | None = None
    error_details: dict[str, int] = field(default_factory=dict)


def _error_name(name: str) -> ErrorName:
    try:
        return StatesErrorName.from_name(name)
    except Exception:  # not one of the States.* names
        return CustomErrorName(name) if not name.startswith("States.") else ErrorName(error_name=name)


def _mock_service_task(task: StateTaskService, request: TestStateRequest) -> None:
    def eval_service_task(
        env: Any, resource_runtime_part: Any, normalised_parameters: Any, state_credentials: Any
    ) -> None:
        if request.mock_error is not None:
            failure_event = FailureEvent(
                env=env,
                error_name=_error_name(request.mock_error["error"]),
                event_type=HistoryEventType.TaskFailed,
                event_details=EventDetails(
                    taskFailedEventDetails=TaskFailedEventDetails(
                        error=request.mock_error["error"], cause=request.mock_error["cause"]
                    )
                ),
            )
            raise FailureEventException(failure_event=failure_event)
        env.stack.append(json.loads(json.dumps(request.mock_result)))

    task._eval_service_task = eval_service_task  # type: ignore[method-assign]
    # The mocked result is the result: the integration's own response normalisation does not apply.
    task._normalise_response = lambda response, *args, **kwargs: None  # type: ignore[method-assign]


def _matching_index(env: Any, handlers: list[Any], failure_event: FailureEvent) -> int | None:
    for index, handler in enumerate(handlers):
        env.stack.append(failure_event.error_name)
        handler.error_equals.eval(env)
        if env.stack.pop():
            return index
    return None


def _backoff_seconds(retrier: Any, retry_count: int) -> int:
    """The un-jittered delay before the next attempt: IntervalSeconds x BackoffRate^count, capped."""
    delay = retrier.interval_seconds.seconds * retrier.backoff_rate.rate**retry_count
    cap = getattr(retrier.max_delay_seconds, "max_delays_seconds", None)
    if cap:
        delay = min(delay, cap)
    return int(delay)


def _single_attempt(state: ExecutionState, request: TestStateRequest, outcome: _Outcome) -> None:
    """One attempt of an execution state; Retry and Catch are reported, not run."""

    def eval_state(env: Any) -> None:
        state_context = env.states.context_object.context_object_data["State"]
        given = (request.context or {}).get("State", {})
        if not (isinstance(given, dict) and "RetryCount" in given):  # the request's Context object wins
            state_context["RetryCount"] = request.retrier_retry_count
        try:
            state._evaluate_with_timeout(env)
            return
        except Exception as exc:  # any failure of the attempt becomes a FailureEvent, as in moto's loop
            failure_event = state._from_error(env=env, ex=exc)
        env.event_manager.add_event(
            context=env.event_history_context,
            event_type=failure_event.event_type,
            event_details=failure_event.event_details,
        )
        error_output = state._construct_error_output_value(failure_event=failure_event)
        env.states.set_error_output(error_output)
        env.states.set_result(error_output)
        outcome.error, outcome.cause = error_output["Error"], error_output["Cause"]

        if state.retry is not None:
            index = _matching_index(env, state.retry.retriers, failure_event)
            if index is not None:
                retrier = state.retry.retriers[index]
                if request.retrier_retry_count < retrier.max_attempts.attempts:
                    outcome.status = RETRIABLE
                    outcome.error_details = {
                        "retryIndex": index,
                        "retryBackoffIntervalSeconds": _backoff_seconds(retrier, request.retrier_retry_count),
                    }
                    raise FailureEventException(failure_event=failure_event)
        if state.catch is not None:
            index = _matching_index(env, state.catch.catchers, failure_event)
            if index is not None:
                state._handle_catch(env=env, failure_event=failure_event)
                if env.stack[-1] == CatchOutcome.Caught:
                    outcome.status = CAUGHT_ERROR
                    outcome.error_details = {"catchIndex": index}
                    return
        state._handle_uncaught(env=env, failure_event=failure_event)

    state._eval_state = eval_state  # type: ignore[method-assign]


def _apply_context(state: CommonStateField, context: dict[str, Any]) -> None:
    """The request's Context object over the one the engine builds, once the state is entered
    (entering a state sets $$.State, which the request may override too)."""
    original = state._eval_state_input

    def eval_state_input(env: Any) -> None:
        data = env.states.context_object.context_object_data
        for section, values in context.items():
            if isinstance(values, dict) and isinstance(data.get(section), dict):
                data[section].update(values)
            else:
                data[section] = values
        original(env)

    state._eval_state_input = eval_state_input  # type: ignore[method-assign]


def _environment(request: TestStateRequest, account_id: str, region: str) -> TestStateEnvironment:
    run_id = uuid.uuid4().hex
    machine_arn = f"arn:aws:states:{region}:{account_id}:stateMachine:TestState-{run_id}"
    role_arn = request.role_arn or f"arn:aws:iam::{account_id}:role/TestState-{run_id}"
    env = TestStateEnvironment(
        aws_execution_details=AWSExecutionDetails(account=account_id, region=region, role_arn=role_arn),
        execution_type=StateMachineType.STANDARD,
        context=ContextObjectData(
            Execution=ExecutionData(
                Id=f"arn:aws:states:{region}:{account_id}:execution:TestState-{run_id}:{run_id}",
                Input=request.input_value,
                Name=run_id,
                RoleArn=role_arn,
                StartTime=_now_iso(),
            ),
            StateMachine=StateMachineData(Id=machine_arn, Name=f"TestState-{run_id}"),
        ),
        event_history_context=EventHistoryContext.of_program_start(),
        activity_store={},
    )
    env.states.reset(input_value=request.input_value)
    for name, value in request.variables.items():
        env.variable_store.set(name, value)
    return env


def _now_iso() -> str:
    import datetime

    return datetime.datetime.now(tz=datetime.UTC).isoformat()


def run(request: TestStateRequest, account_id: str, region: str) -> dict[str, Any]:
    """Evaluate the state once and answer as TestState does."""
    program = _parse_state(request)
    state: CommonStateField = program.test_state
    if request.mocked and isinstance(state, StateTaskService):
        validate_mock_result(state, request)
        _mock_service_task(state, request)
    elif request.mocked and isinstance(state, StateTask):
        raise ValidationException("Only service integration Task states can be mocked on the embedded engine")
    outcome = _Outcome()
    if isinstance(state, ExecutionState):
        _single_attempt(state, request, outcome)
    if request.context:
        _apply_context(state, request.context)

    env = _environment(request, account_id, region)
    program.eval(env)
    return _response(env, state, request, outcome)


def _response(
    env: TestStateEnvironment, state: CommonStateField, request: TestStateRequest, outcome: _Outcome
) -> dict[str, Any]:
    program_state = env.program_state()
    response: dict[str, Any]
    if outcome.status == RETRIABLE:
        response = {"status": RETRIABLE, "error": outcome.error, "cause": outcome.cause}
    elif isinstance(program_state, ProgramError):
        response = {
            "status": FAILED,
            "error": program_state.error.get("error"),
            "cause": program_state.error.get("cause"),
        }
    elif isinstance(program_state, ProgramTimedOut):
        response = {"status": FAILED, "error": "States.Timeout", "cause": "TestState ran longer than five minutes"}
    else:
        response = {"status": SUCCEEDED, "output": to_json_str(env.states.get_input(), separators=(",", ":"))}
        next_state = _next_state(env, program_state, state)
        if next_state is not None:
            response["nextState"] = next_state
        if outcome.status == CAUGHT_ERROR:
            response.update(status=CAUGHT_ERROR, error=outcome.error, cause=outcome.cause)
    if request.inspection_level in ("DEBUG", "TRACE"):
        response["inspectionData"] = _inspection_data(env, state, request, outcome, response["status"] == SUCCEEDED)
    return {key: value for key, value in response.items() if value is not None}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _inspection_data(
    env: TestStateEnvironment, state: CommonStateField, request: TestStateRequest, outcome: _Outcome, succeeded: bool
) -> dict[str, Any]:
    """The data flow as the API shows it: each step's JSON text, a step the state does not declare
    passing its input through (InputPath "$", no Parameters, no ResultSelector, ResultPath "$")."""
    flow: dict[str, Any] = {
        key: json.loads(value) for key, value in env.inspection_data.items() if isinstance(value, str)
    }
    flow.setdefault("input", request.input_value)
    state_type = request.state.get("Type")
    jsonpath = state._is_language_query_jsonpath()
    if jsonpath and state_type != "Fail":
        flow.setdefault("afterInputPath", flow["input"])
    if jsonpath and succeeded and state_type in ("Task", "Pass"):
        flow.setdefault("afterParameters", flow["afterInputPath"])
        if state_type == "Pass":
            flow.setdefault("result", flow["afterParameters"])
        if "result" in flow:
            flow.setdefault("afterResultSelector", flow["result"])
            flow.setdefault("afterResultPath", flow["afterResultSelector"])
    inspection: dict[str, Any] = {key: _compact(value) for key, value in flow.items()}
    if request.variables:
        inspection["variables"] = _compact(request.variables)
    if outcome.error_details:
        inspection["errorDetails"] = dict(outcome.error_details)
    return inspection


def _next_state(env: TestStateEnvironment, program_state: Any, state: CommonStateField) -> str | None:
    if isinstance(program_state, ProgramChoiceSelected):
        return program_state.next_state_name
    if isinstance(program_state, ProgramRunning):
        name = program_state.next_state_name
        return name if name and name != state.name else None
    if isinstance(program_state, ProgramEnded):
        return None
    return None


_SERVICE_MODELS: dict[str, Any] = {}


def _operation_output_shape(task: StateTaskService) -> StructureShape | None:
    service = task._get_boto_service_name()
    action = task.resource.api_action
    if service not in _SERVICE_MODELS:
        _SERVICE_MODELS[service] = get_session().get_service_model(service)
    model = _SERVICE_MODELS[service]
    operation = action[0].upper() + action[1:]
    if operation not in model.operation_names:
        return None
    return model.operation_model(operation).output_shape


def validate_mock_result(task: StateTaskService, request: TestStateRequest) -> None:
    """A mocked result must fit the API's output shape (the API's fieldValidationMode)."""
    if request.mock_result is _NO_MOCK_RESULT or request.field_validation_mode == "NONE":
        return
    try:
        shape = _operation_output_shape(task)
    except Exception:  # a service botocore does not know: nothing to validate against
        return
    if shape is None:
        return
    _validate(request.mock_result, shape, None, strict=request.field_validation_mode == "STRICT")


def _schema_error(message: str) -> ValidationException:
    return ValidationException(f"Mock result schema validation error: {message}")


def _validate(value: Any, shape: Shape, name: str | None, strict: bool) -> None:
    if shape.type_name == "document":
        return
    if isinstance(shape, StructureShape):
        if not isinstance(value, dict):
            if name is None:
                raise ValidationException(f"Mock result must be a valid JSON object, but got '{type(value)}' instead")
            raise _schema_error(f"Field '{name}' must be an object")
        members = {StateTaskService._to_sfn_cased(key): member for key, member in shape.members.items()}
        if strict:
            for required in shape.required_members:
                key = StateTaskService._to_sfn_cased(required)
                if key not in value:
                    raise _schema_error(f"Required field '{key}' is missing")
        for key, item in value.items():
            if key in members:  # fields the model does not know are let through, as AWS does
                _validate(item, members[key], key, strict)
        return
    if isinstance(shape, ListShape):
        if not isinstance(value, list):
            raise _schema_error(f"Field '{name}' must be an array")
        for item in value:
            _validate(item, shape.member, name, strict)
        return
    if isinstance(shape, MapShape):
        if not isinstance(value, dict):
            raise _schema_error(f"Field '{name}' must be an object")
        for item in value.values():
            _validate(item, shape.value, name, strict)
        return
    kind = shape.type_name
    if kind in ("string", "timestamp", "blob"):
        if not isinstance(value, str):
            raise _schema_error(f"Field '{name}' must be a string")
        enum = shape.enum if kind == "string" else None
        if enum and value not in enum:
            raise _schema_error(f"Field '{name}' is not an expected value")
    elif kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _schema_error(f"Field '{name}' must be a number")
    elif kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _schema_error(f"Field '{name}' must be a number")
    elif kind == "boolean" and not isinstance(value, bool):
        raise _schema_error(f"Field '{name}' must be a boolean")


@contextlib.contextmanager
def _released(lock: Any) -> Iterator[None]:
    """The embedded server's request lock, let go while the state runs: a Task's service call
    comes back to the same server (another request), which would otherwise wait for this one."""
    if lock is None:
        yield
        return
    try:
        lock.release()
    except RuntimeError:  # not held by this thread (a server without the request lock)
        yield
        return
    try:
        yield
    finally:
        lock.acquire()


def _test_state_action(self: StepFunctionResponse, request_lock: Any = None) -> Any:
    from moto.core.responses import ActionResult

    params = {
        name: self._get_param(name)
        for name in (
            "definition",
            "roleArn",
            "input",
            "inspectionLevel",
            "revealSecrets",
            "variables",
            "stateName",
            "mock",
            "context",
            "stateConfiguration",
        )
    }
    request = parse_request(params)
    with _released(request_lock):
        output = run(request, account_id=self.current_account, region=self.region)
    return ActionResult(output)


def moto_needs() -> list[Any]:
    """What this module calls or replaces in the pinned moto (checked by engine/shape.py)."""
    from moto.core.responses import BaseResponse
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager

    from onceflow.local.engine.shape import need

    return [
        need(BaseResponse, "_get_param", "param_name"),
        need(TestStatePreprocessor, "STATE_NAME"),
        need(TestStatePreprocessor, "visit"),
        need(ASLParser, "state_decl_body"),
        need(TestStateProgram, "eval", "env"),
        need(TestStateEnvironment, "__init__", "aws_execution_details", "execution_type", "context"),
        need(TestStateEnvironment, "__init__", "event_history_context", "activity_store"),
        need(ExecutionState, "_evaluate_with_timeout", "env"),
        need(ExecutionState, "_from_error", "env", "ex"),
        need(ExecutionState, "_construct_error_output_value", "failure_event"),
        need(ExecutionState, "_handle_catch", "env", "failure_event"),
        need(ExecutionState, "_handle_uncaught", "env", "failure_event"),
        need(ExecutionState, "_eval_state", "env"),
        need(CommonStateField, "_eval_state_input", "env"),
        need(StateTaskService, "_eval_service_task", "env", "resource_runtime_part", "normalised_parameters"),
        need(StateTaskService, "_normalise_response"),
        need(StateTaskService, "_get_boto_service_name"),
        need(StateTaskService, "_to_sfn_cased", "member_key"),
        need(StatesErrorName, "from_name", "error_name"),
        need(EventManager, "add_event", "context", "event_type", "event_details"),
    ]


def moto_patches(request_lock: Any = None) -> list[Patch]:
    """TestState routed to this module (moto 5.2.5 has no `test_state` response method)."""

    def test_state(self: StepFunctionResponse) -> Any:
        return _test_state_action(self, request_lock)

    return [(StepFunctionResponse, "test_state", test_state)]

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

The request is parsed and checked, and a mocked result validated, in request.py.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from moto.stepfunctions.parser.api import (
    EvaluationFailedEventDetails,
    HistoryEventType,
    StateMachineType,
    TaskFailedEventDetails,
)
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
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import StatesErrorNameType
from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState
from moto.stepfunctions.parser.asl.component.state.exec.state_map.state_map import StateMap
from moto.stepfunctions.parser.asl.component.state.exec.state_parallel.state_parallel import StateParallel
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (
    StateTaskServiceCallback,
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
    ASLParserException,
    SyntaxErrorListener,
)
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
from moto.stepfunctions.parser.asl.parse.test_state.preprocessor import TestStatePreprocessor
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.stepfunctions.test_state import context as test_state_context
from onceflow.engine.stepfunctions.test_state.request import (
    BARE_STATE_NAME,
    InvalidDefinition,
    TestStateRequest,
    ValidationException,
    parse_request,
    validate_mock_result,
)

Patch = tuple[Any, str, Any]

SUCCEEDED: Final = "SUCCEEDED"
FAILED: Final = "FAILED"
RETRIABLE: Final = "RETRIABLE"
CAUGHT_ERROR: Final = "CAUGHT_ERROR"


class _NamedTestStatePreprocessor(TestStatePreprocessor):
    def __init__(self, state_name: str):
        super().__init__()
        self.STATE_NAME = state_name  # read by visitState_decl_body for the state's name ($$.State.Name)
        self._tested_state_seen = False

    def visitState_decl_body(self, ctx: ASLParser.State_decl_bodyContext) -> Any:  # noqa: N802 (moto's visitor name)
        # The state under test is the outermost body; the states of a Map's or Parallel's own
        # machines inside it are parsed as in any definition.
        if self._tested_state_seen:
            return Preprocessor.visitState_decl_body(self, ctx)
        self._tested_state_seen = True
        return super().visitState_decl_body(ctx)


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
    structured: dict[str, Any] = field(default_factory=dict)  # a Map's maxConcurrency and tolerances
    items_flow: dict[str, Any] = field(default_factory=dict)  # a JSONPath Map's afterInputPath, afterItemsPath


def _error_name(name: str) -> ErrorName:
    try:
        return StatesErrorName.from_name(name)
    except Exception:  # not one of the States.* names
        return CustomErrorName(name) if not name.startswith("States.") else ErrorName(error_name=name)


def _raise_mocked_error(env: Any, error: str, cause: str) -> None:
    failure_event = FailureEvent(
        env=env,
        error_name=_error_name(error),
        event_type=HistoryEventType.TaskFailed,
        event_details=EventDetails(taskFailedEventDetails=TaskFailedEventDetails(error=error, cause=cause)),
    )
    raise FailureEventException(failure_event=failure_event)


def _mock_service_task(task: StateTaskService, request: TestStateRequest) -> None:
    def eval_service_task(
        env: Any, resource_runtime_part: Any, normalised_parameters: Any, state_credentials: Any
    ) -> None:
        if request.mock_error is not None:
            _raise_mocked_error(env, request.mock_error["error"], request.mock_error["cause"])
        env.stack.append(json.loads(json.dumps(request.mock_result)))

    task._eval_service_task = eval_service_task  # type: ignore[method-assign]
    if hasattr(task, "_eval_integration_pattern"):
        # .sync / .waitForTaskToken: the mocked result is what the task completes with; nothing to wait for.
        task._eval_integration_pattern = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    # The mocked result is the result: the integration's own response normalisation does not apply.
    task._normalise_response = lambda response, *args, **kwargs: None  # type: ignore[method-assign]


THRESHOLD_CAUSE: Final = "The specified tolerated failure threshold was exceeded"


def _mock_structured_state(state: StateMap | StateParallel, request: TestStateRequest, outcome: _Outcome) -> None:
    """A Map or Parallel under TestState: the mocked result (or error) stands for its iterations or
    branches; a Map's MaxConcurrency and tolerated failures are evaluated, and reported, as AWS does,
    and `stateConfiguration.mapIterationFailureCount` failed iterations over the tolerated ones fail
    it with States.ExceedToleratedFailureThreshold."""

    def eval_execution(env: Any) -> None:
        if isinstance(state, StateMap):
            _record_items(state, env, outcome)
            state.max_concurrency_decl.eval(env=env)
            outcome.structured["maxConcurrency"] = env.stack.pop()
            tolerance = _map_tolerance(state, env, request, outcome)
        if request.mock_error is not None:
            _raise_mocked_error(env, request.mock_error["error"], request.mock_error["cause"])
        if isinstance(state, StateMap) and tolerance is not None:
            failures, iterations = request.map_iteration_failure_count, len(request.mock_result or [])
            count, percentage = tolerance
            if failures > count and (percentage is None or failures * 100 > percentage * max(iterations, 1)):
                error_name = StatesErrorName(typ=StatesErrorNameType.StatesExceedToleratedFailureThreshold)
                raise FailureEventException(
                    failure_event=FailureEvent(
                        env=env,
                        error_name=error_name,
                        event_type=HistoryEventType.MapStateFailed,
                        event_details=EventDetails(
                            evaluationFailedEventDetails=EvaluationFailedEventDetails(
                                error=error_name.error_name, cause=THRESHOLD_CAUSE
                            )
                        ),
                    )
                )
        env.stack.append(json.loads(json.dumps(request.mock_result)))

    state._eval_execution = eval_execution  # type: ignore[method-assign]


def _record_items(state: StateMap, env: Any, outcome: _Outcome) -> None:
    """A JSONPath Map's input after InputPath and its items after ItemsPath (default `$`), as AWS's
    inspectionData shows them before the iterations (LocalStack's test_state_configuration.snapshot.json,
    test_state_machine_with_state_error: afterInputPath and afterItemsPath beside the error of an
    iteration's state). Items that are no array are left to the Map's own evaluation."""
    if state.items_path is None:  # JSONata: `Items`, no such steps
        return
    outcome.items_flow["afterInputPath"] = env.stack[-1]  # the state's input after InputPath, as moto's Map reads it
    try:
        state.items_path.eval(env=env)
    except Exception:  # a path that selects nothing: reported by the Map's own evaluation, not here
        return
    items = env.stack.pop()
    if isinstance(items, list):
        outcome.items_flow["afterItemsPath"] = items


def _map_tolerance(
    state: StateMap, env: Any, request: TestStateRequest, outcome: _Outcome
) -> tuple[int, float | None] | None:
    """(tolerated count, tolerated percentage or None) when the Map declares either, else None."""
    declared_count = any(key.startswith("ToleratedFailureCount") for key in request.state)
    declared_percentage = any(key.startswith("ToleratedFailurePercentage") for key in request.state)
    if not (declared_count or declared_percentage):
        return None
    state.tolerated_failure_count_decl.eval(env=env)
    count = env.stack.pop()
    state.tolerated_failure_percentage_decl.eval(env=env)
    percentage = env.stack.pop()
    if declared_count:
        outcome.structured["toleratedFailureCount"] = count
    if declared_percentage:
        outcome.structured["toleratedFailurePercentage"] = float(percentage)
    return (count if declared_count else 0), (float(percentage) if declared_percentage else None)


def _record_arguments(state: CommonStateField) -> None:
    """JSONata `Arguments` as evaluated: inspectionData.afterArguments."""
    arguments = getattr(state, "parargs", None)
    if arguments is None or state._is_language_query_jsonpath():
        return
    original = arguments._eval_body

    def eval_body(env: Any) -> None:
        original(env)
        env.inspection_data["afterArguments"] = to_json_str(env.stack[-1])

    arguments._eval_body = eval_body


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
            if isinstance(state, StateParallel) and state.parargs is not None:
                state.parargs.eval(env=env)  # the branches' input (moto's Parallel evaluates it before its attempts)
            state._evaluate_with_timeout(env)
            return
        except FailureEventException as exc:
            # As raised (a mocked error among them): some integrations' _from_error (moto's optimized
            # DynamoDB one) would rename any exception that is not a ClientError.
            failure_event = exc.failure_event
        except Exception as exc:  # any other failure of the attempt becomes a FailureEvent, as in moto's loop
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
                # The matching retrier is named even when its attempts are used up (AWS's recording:
                # LocalStack's test_state/test_state_configuration.snapshot.json, exceeds_tolerated_retry_count).
                outcome.error_details = {"retryIndex": index}
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
    (entering a state sets $$.State, which the request may override too); `$$` reads the request's
    own, as given (test_state/context.py)."""
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


def _bare_state_name(state: CommonStateField) -> None:
    """`$$.State.Name` is "StateName" even for a state that `stateName` picked out of a definition
    (AWS's recording: LocalStack's test_state/test_test_state_scenarios.snapshot.json,
    test_state_with_variables[base_expressions], 2026: stateName "State0", `$states.context.State.Name`
    "StateName"); the state keeps its own name for the rest (nextState, error texts)."""
    original = state._eval_state_input

    def eval_state_input(env: Any) -> None:
        env.states.context_object.context_object_data["State"]["Name"] = BARE_STATE_NAME
        original(env)

    state._eval_state_input = eval_state_input  # type: ignore[method-assign]


def _environment(request: TestStateRequest, account_id: str, region: str) -> TestStateEnvironment:
    # As AWS shows it: an Express-style execution of a state machine of its own (both named with a
    # UUID), the request's role (null without one).
    execution_name, machine_name = str(uuid.uuid4()), str(uuid.uuid4())
    machine_arn = f"arn:aws:states:{region}:{account_id}:stateMachine:{machine_name}"
    env = TestStateEnvironment(
        aws_execution_details=AWSExecutionDetails(
            account=account_id, region=region, role_arn=request.role_arn or f"arn:aws:iam::{account_id}:role/TestState"
        ),
        execution_type=StateMachineType.STANDARD,
        context=ContextObjectData(
            Execution=ExecutionData(
                Id=f"arn:aws:states:{region}:{account_id}:express:{machine_name}:{execution_name}",
                Input=request.input_value,
                Name=execution_name,
                RoleArn=request.role_arn,
                StartTime=_now_iso(),
            ),
            StateMachine=StateMachineData(Id=machine_arn, Name=machine_name),
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
    if isinstance(state, (StateMap, StateParallel)):
        _mock_structured_state(state, request, outcome)
    _record_arguments(state)
    if isinstance(state, ExecutionState):
        _single_attempt(state, request, outcome)
    if request.context is not None:
        _apply_context(state, request.context)
    else:
        _bare_state_name(state)

    env = _environment(request, account_id, region)
    if request.context is None:
        program.eval(env)
    else:
        with test_state_context.given(env.states.context_object.context_object_data, request.context):
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
        response = {"status": SUCCEEDED, "output": _text(env.states.get_input(), request)}
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


def _text(value: Any, request: TestStateRequest) -> str:
    """JSON text as TestState answers it: the mocked result as the caller wrote it when it passes
    through unchanged (AWS keeps the caller's text), else compact JSON."""
    if request.mock_text is not None and value == request.mock_result:
        return request.mock_text
    return _compact(value)


def _inspection_data(
    env: TestStateEnvironment, state: CommonStateField, request: TestStateRequest, outcome: _Outcome, succeeded: bool
) -> dict[str, Any]:
    """The data flow as AWS shows it (LocalStack's TestState snapshots, recorded against AWS): each
    step's JSON text, a step the state does not declare passing its input through."""
    recorded: dict[str, Any] = {
        key: json.loads(value) for key, value in env.inspection_data.items() if isinstance(value, str)
    }
    flow: dict[str, Any] = {"input": request.input_value}
    state_type = request.state.get("Type")
    if state._is_language_query_jsonpath():
        flow.update(_jsonpath_flow(state_type, request, recorded, succeeded))
    elif state_type == "Task":
        if "afterArguments" in recorded:
            flow["afterArguments"] = recorded["afterArguments"]
        if succeeded and "result" in recorded:  # the result before Output (the recorded blogpost scenario)
            flow["result"] = recorded["result"]
    inspection: dict[str, Any] = {key: _text(value, request) for key, value in flow.items()}
    # As AWS's recordings write them: `", "` between items (LocalStack's test_state_machine_with_state_error).
    inspection.update({key: json.dumps(value, ensure_ascii=False) for key, value in outcome.items_flow.items()})
    inspection.update(outcome.structured)  # numbers, not JSON text
    if request.variables:
        inspection["variables"] = _compact(request.variables)
    if outcome.error_details:
        inspection["errorDetails"] = dict(outcome.error_details)
    return inspection


def _jsonpath_flow(state_type: str, request: TestStateRequest, recorded: dict[str, Any], succeeded: bool) -> dict:
    flow: dict[str, Any] = {}
    source = request.input_value
    if state_type in ("Map", "Parallel") or (state_type == "Pass" and "Result" in request.state):
        # These show no InputPath/Parameters steps: their result stands alone.
        if succeeded:
            result = recorded.get("result", request.mock_result if request.mocked else None)
            if state_type == "Pass":
                flow["result"] = result
            flow["afterResultSelector"] = recorded.get("afterResultSelector", result)
            flow["afterResultPath"] = recorded.get("afterResultPath", flow["afterResultSelector"])
        return flow
    flow["afterInputPath"] = recorded.get("afterInputPath", source)
    if succeeded and state_type in ("Task", "Pass"):
        flow["afterParameters"] = recorded.get("afterParameters", flow["afterInputPath"])
        if state_type == "Task":
            if "result" not in recorded:
                return flow
            flow["result"] = recorded["result"]
            after_result = flow["result"]
        else:
            after_result = flow["afterParameters"]
        flow["afterResultSelector"] = recorded.get("afterResultSelector", after_result)
        flow["afterResultPath"] = recorded.get("afterResultPath", flow["afterResultSelector"])
    elif state_type == "Task" and "afterParameters" in recorded:
        flow["afterParameters"] = recorded["afterParameters"]
    return flow


def _next_state(env: TestStateEnvironment, program_state: Any, state: CommonStateField) -> str | None:
    if isinstance(program_state, ProgramChoiceSelected):
        return program_state.next_state_name
    if isinstance(program_state, ProgramRunning):
        name = program_state.next_state_name
        return name if name and name != state.name else None
    if isinstance(program_state, ProgramEnded):
        return None
    return None


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
    """What this module calls or replaces in the pinned moto (checked by engine/moto_shape.py)."""
    from moto.core.responses import BaseResponse
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager

    from onceflow.engine.moto_shape import need

    return [
        need(BaseResponse, "_get_param", "param_name"),
        need(TestStatePreprocessor, "STATE_NAME"),
        need(TestStatePreprocessor, "visit"),
        need(Preprocessor, "visitState_decl_body", "ctx"),
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
        need(StateTaskServiceCallback, "_eval_integration_pattern"),
        need(StateTaskService, "_get_boto_service_name"),
        need(StateTaskService, "_to_sfn_cased", "member_key"),
        need(StatesErrorName, "from_name", "error_name"),
        need(EventManager, "add_event", "context", "event_type", "event_details"),
    ]


def patches(request_lock: Any = None) -> list[Patch]:
    """TestState routed to this module (moto 5.2.5 has no `test_state` response method)."""

    def test_state(self: StepFunctionResponse) -> Any:
        return _test_state_action(self, request_lock)

    return [(StepFunctionResponse, "test_state", test_state)]

"""Step Functions Local's mocked service integrations on moto's Step Functions engine.

moto 5.2.5 carries the interpreter side of LocalStack's port (a mocked Task evaluates a `Return` or
`Throw` instead of calling the service), but its backend never reads a mock configuration: starting
`stateMachineArn#TestCase` fails with StateMachineDoesNotExist. Three small patches switch it on, each
checked against the pinned moto version before it is applied:

1. `StepFunctionsParserBackend.start_execution`: a `#TestCase` suffix selects a test case of the file named
   by SFN_MOCK_CONFIG (the variable Step Functions Local reads). The file is read on every such start, so an
   edit is picked up; what the selected test case uses is validated against the state machine's definition,
   and a problem there is an error of that StartExecution call, not a silently unmocked run. Problems in
   other test cases are logged as warnings (logger `onceflow.engine.stepfunctions.mocking`): Step Functions Local and
   LocalStack run such a file, so this engine does too.
2. `Execution._get_start_execution_worker`: hands the test case to the execution's worker (moto's backend
   does not pass it on).
3. `Environment.get_current_mocked_response`: moto indexes mocked responses by the state's RetryCount,
   which restarts at 0 every time the state is entered again (a loop back to it, a Map iteration).
   Step Functions Local keeps one invocation counter per state per execution, retries included; so
   does this patch.

States a test case does not name run for real against the embedded services (hybrid).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moto.stepfunctions.exceptions import InvalidName, ValidationException
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import StatesErrorNameType
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.parser.mocking import mock_config as moto_mock_config
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.engine.moto_shape import Need, check, need
from onceflow.engine.stepfunctions.mocking.errors import MockConfigError, MockedResponsesExhausted
from onceflow.engine.stepfunctions.mocking.loader import load_test_case
from onceflow.engine.stepfunctions.mocking.model import MockTestCase, Return

SFN_MOCK_CONFIG = "SFN_MOCK_CONFIG"
LOG = logging.getLogger("onceflow.engine.stepfunctions.mocking")
_MARK = "_onceflow_mocked_integrations"


def moto_needs() -> list[Need]:
    """What these patches replace or call in the pinned moto (checked by onceflow/engine/moto_shape.py)."""
    return [
        need(
            StepFunctionsParserBackend,
            "start_execution",
            "state_machine_arn",
            "name",
            "execution_input",
            "trace_header",
        ),
        need(StepFunctionsParserBackend, "describe_state_machine", "arn"),
        need(Execution, "_get_start_execution_worker"),
        need(ExecutionWorker, "__init__", "mock_test_case"),
        need(Environment, "__init__", "mock_test_case"),
        need(Environment, "get_current_mocked_response"),
        need(Environment, "is_mocked_mode"),
        need(FailureEvent, "__init__", "env", "error_name", "event_type", "event_details"),
        need(
            moto_mock_config.MockTestCase,
            "__init__",
            "state_machine_name",
            "test_case_name",
            "state_mocked_responses_list",
        ),
        need(
            moto_mock_config.StateMockedResponses, "__init__", "state_name", "mocked_response_name", "mocked_responses"
        ),
        need(moto_mock_config.MockedResponseReturn, "__init__", "range_start", "range_end", "payload"),
        need(moto_mock_config.MockedResponseThrow, "__init__", "range_start", "range_end", "error", "cause"),
    ]


def check_moto_shape() -> None:
    """Fail loudly if moto is not the version, or no longer has the shape, these patches were written for."""
    check(moto_needs(), __name__)


class ExecutionMocks(moto_mock_config.MockTestCase):
    """One execution's test case, in moto's form, with Step Functions Local's per-state invocation counter."""

    def __init__(self, case: MockTestCase):
        super().__init__(
            state_machine_name=case.state_machine,
            test_case_name=case.name,
            state_mocked_responses_list=[
                moto_mock_config.StateMockedResponses(
                    state_name=state,
                    mocked_response_name=response.name,
                    mocked_responses=[
                        moto_mock_config.MockedResponseReturn(r.first, r.last, r.outcome.payload)
                        if isinstance(r.outcome, Return)
                        else moto_mock_config.MockedResponseThrow(r.first, r.last, r.outcome.error, r.outcome.cause)
                        for r in response.ranges
                    ],
                )
                for state, response in case.states.items()
            ],
        )
        self.case = case
        self._lock = threading.Lock()
        self._invocations: dict[str, int] = {}

    def next_response(self, state: str) -> moto_mock_config.MockedResponse:
        with self._lock:
            invocation = self._invocations.get(state, 0)
            self._invocations[state] = invocation + 1
        responses = self.state_mocked_responses[state]
        if invocation >= len(responses.mocked_responses):
            raise MockedResponsesExhausted(
                f"mock test case {self.case.name!r}: state {state!r} was invoked a {_ordinal(invocation + 1)} time "
                f"(invocation {invocation}) but its mocked response {responses.mocked_response_name!r} answers only "
                f"invocations 0-{len(responses.mocked_responses) - 1}"
            )
        return responses.mocked_responses[invocation]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class _Pending(threading.local):
    mocks: ExecutionMocks | None = None


_pending = _Pending()


def _test_case_for(backend: StepFunctionsParserBackend, state_machine_arn: str, test_case: str) -> ExecutionMocks:
    state_machine = backend.describe_state_machine(state_machine_arn)
    config_path = os.environ.get(SFN_MOCK_CONFIG)
    if not config_path:
        raise ValidationException(
            f"{state_machine_arn}#{test_case} asks for the mocked test case {test_case!r}, but {SFN_MOCK_CONFIG} "
            "does not name a mock configuration file"
        )
    try:
        case, warnings = load_test_case(Path(config_path), state_machine.definition, state_machine.name, test_case)
    except MockConfigError as error:
        if set(error.rules) <= {"test-case-exists", "state-machine-exists"}:
            raise InvalidName(str(error)) from None
        raise ValidationException(str(error)) from None
    for problem in warnings:
        # Not this test case's: Step Functions Local and LocalStack run it, so this engine does too.
        LOG.warning("mock configuration, not used by %s#%s: %s", state_machine.name, test_case, problem)
    return ExecutionMocks(case)


def _wrap_start_execution(original: Any) -> Any:
    def start_execution(
        self: StepFunctionsParserBackend,
        state_machine_arn: str,
        name: str | None = None,
        execution_input: str | None = None,
        trace_header: str | None = None,
    ) -> Any:
        base_arn, hash_sign, test_case = state_machine_arn.partition("#")
        if not hash_sign:
            return original(self, state_machine_arn, name, execution_input, trace_header)
        _pending.mocks = _test_case_for(self, base_arn, test_case)
        try:
            return original(self, base_arn, name, execution_input, trace_header)
        finally:
            _pending.mocks = None

    setattr(start_execution, _MARK, True)
    return start_execution


def _wrap_start_execution_worker(original: Any) -> Any:
    def _get_start_execution_worker(self: Execution) -> ExecutionWorker:
        worker = original(self)
        if _pending.mocks is not None:
            worker._mock_test_case = _pending.mocks
        return worker

    return _get_start_execution_worker


def _wrap_get_current_mocked_response(original: Any) -> Any:
    def get_current_mocked_response(self: Environment) -> moto_mock_config.MockedResponse:
        mocks = self.mock_test_case
        if isinstance(mocks, ExecutionMocks) and self.next_state_name in mocks.state_mocked_responses:
            try:
                return mocks.next_response(self.next_state_name)
            except MockedResponsesExhausted as exhausted:
                # States.Runtime whatever the Task's Resource: a bare Lambda function ARN's integration
                # would otherwise name the Python exception (`Exception`), which States.ALL retries and catches.
                raise _runtime_failure(self, str(exhausted)) from exhausted
        return original(self)

    return get_current_mocked_response


def _runtime_failure(env: Environment, cause: str) -> FailureEventException:
    runtime = StatesErrorName(typ=StatesErrorNameType.StatesRuntime)
    return FailureEventException(
        failure_event=FailureEvent(
            env=env,
            error_name=runtime,
            event_type=HistoryEventType.TaskFailed,
            event_details=EventDetails(
                taskFailedEventDetails=TaskFailedEventDetails(error=runtime.error_name, cause=cause)
            ),
        )
    )


def patches() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, replacement) for each patch; apply them with setattr and restore the originals after.
    Checks moto's version and shape first."""
    check_moto_shape()
    return [
        (
            StepFunctionsParserBackend,
            "start_execution",
            _wrap_start_execution(StepFunctionsParserBackend.start_execution),
        ),
        (Execution, "_get_start_execution_worker", _wrap_start_execution_worker(Execution._get_start_execution_worker)),
        (
            Environment,
            "get_current_mocked_response",
            _wrap_get_current_mocked_response(Environment.get_current_mocked_response),
        ),
    ]


def is_enabled() -> bool:
    return bool(getattr(StepFunctionsParserBackend.start_execution, _MARK, False))


@contextmanager
def mocked_integrations() -> Iterator[None]:
    """Switch mocked integrations on for the duration (a no-op if something already did, e.g. EmbeddedAws)."""
    if is_enabled():
        yield
        return
    saved: list[tuple[Any, str, Any]] = []
    try:
        for owner, name, replacement in patches():
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, replacement)
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)

"""`RedriveExecution` on the embedded endpoint, as AWS documents it for Standard workflows.

References: https://docs.aws.amazon.com/step-functions/latest/apireference/API_RedriveExecution.html
and the developer guide's "Restarting state machine executions with redrive"
(https://docs.aws.amazon.com/step-functions/latest/dg/redrive-executions.html):

- only a STANDARD execution that FAILED, TIMED_OUT or ABORTED is redriven, within 14 days of its
  stop, not past one year of open time, and with fewer than 24,999 history events; anything else
  is `ExecutionNotRedrivable` with the reason DescribeExecution gives as `redriveStatusReason`;
- the execution keeps its ARN, definition, input and history: an `ExecutionRedriven` event (with
  `redriveCount`) is appended and the run continues from the unsuccessful state, with the input
  that state was entered with; states that succeeded are not rerun; the state machine's
  TimeoutSeconds starts again;
- `redriveCount`, `redriveDate`, `redriveStatus` (and `redriveStatusReason`) in
  DescribeExecution, `redriveCount` / `redriveDate` in ListExecutions and its `redriveFilter`;
- `clientToken`: the last 10 tokens of successful redrives, for 15 minutes, answer again with the
  same `redriveDate` and do not redrive twice.

moto 5.2.5 has no RedriveExecution; this module adds the action and a worker that resumes a
parsed program at a named state, sharing the execution's event history.
"""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final

from moto.core.exceptions import AWSError
from moto.core.responses import ActionResult, BaseResponse
from moto.stepfunctions.parser.api import (
    ExecutionRedrivenEventDetails,
    ExecutionStatus,
    HistoryEventType,
    StateMachineType,
)
from moto.stepfunctions.parser.asl.component.program.program import Program
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.parser.utils import TMP_THREADS
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.bookkeeping import retention
from onceflow.engine.stepfunctions.interpreter import deadlines

Patch = tuple[Any, str, Any]

REDRIVABLE_PERIOD: Final = datetime.timedelta(days=14)
MAX_OPEN_TIME: Final = datetime.timedelta(days=365)
MAX_HISTORY_EVENTS: Final = 24999
CLIENT_TOKENS_KEPT: Final = 10
CLIENT_TOKEN_LIFETIME: Final = datetime.timedelta(minutes=15)
REDRIVABLE_STATUSES: Final = {ExecutionStatus.FAILED, ExecutionStatus.TIMED_OUT, ExecutionStatus.ABORTED}

REDRIVABLE: Final = "REDRIVABLE"
NOT_REDRIVABLE: Final = "NOT_REDRIVABLE"


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC)


# What "now" is for the 14-day and one-year limits; tests replace it to step past them.
clock: Callable[[], datetime.datetime] = _utc_now


class ExecutionNotRedrivable(AWSError):
    TYPE = "ExecutionNotRedrivable"


@dataclass
class RedriveRecord:
    """What the engine keeps per execution, beside moto's Execution."""

    count: int = 0
    date: datetime.datetime | None = None
    # (clientToken, the redrive it started): kept for CLIENT_TOKEN_LIFETIME, at most CLIENT_TOKENS_KEPT
    tokens: list[tuple[str, datetime.datetime]] = field(default_factory=list)


_RECORD = "_onceflow_redrive"
# What an execution never redriven reads: shared, never written (a record is made at its first redrive:
# ListExecutions and DescribeExecution read every execution they answer, and a record each was kept for
# every execution of a long run, issue 21).
_NEVER_REDRIVEN = RedriveRecord()


def record_of(execution: Execution) -> RedriveRecord:
    """The execution's record, to write: made at its first redrive."""
    record = getattr(execution, _RECORD, None)
    if record is None:
        record = RedriveRecord()
        setattr(execution, _RECORD, record)
    return record


def _read_record(execution: Execution) -> RedriveRecord:
    record: RedriveRecord = getattr(execution, _RECORD, None) or _NEVER_REDRIVEN
    return record


def workflow_type(execution: Execution) -> str:
    """moto keeps the type the state machine was created with in `type`; its `sm_type` is always STANDARD."""
    return str(getattr(execution.state_machine, "type", None) or execution.sm_type)


def not_redrivable_reason(execution: Execution, now: datetime.datetime) -> str | None:
    """The reason AWS gives (redriveStatusReason) when RedriveExecution would be refused, else None."""
    if workflow_type(execution) == StateMachineType.EXPRESS:
        return "Execution is of type EXPRESS and cannot be redriven"
    status = execution.exec_status
    if status not in REDRIVABLE_STATUSES:
        return f"Execution is {status.value if status else 'RUNNING'} and cannot be redriven"
    if execution.stop_date is not None and now - execution.stop_date > REDRIVABLE_PERIOD:
        return "Execution redrivable period exceeded"
    if now - execution.start_date > MAX_OPEN_TIME:
        return "Execution has exceeded the max execution time"
    if _history_length(execution) >= MAX_HISTORY_EVENTS:
        return "Execution history event limit exceeded"
    if not isinstance(execution.exec_worker, ExecutionWorker) or execution.exec_worker.env is None:
        # A long local run's history budget (engine/bookkeeping/retention.py) pruned it: nothing to resume from.
        return "Execution history is no longer kept by this endpoint (history budget)"
    return None


def _history_length(execution: Execution) -> int:
    """The number of events, counted under the history's lock (get_event_history deep-copies them all:
    a DescribeExecution paid a copy of the whole history for this count)."""
    env = getattr(execution.exec_worker, "env", None)
    if env is None:
        return 0
    manager = env.event_manager
    if not isinstance(manager, EventManager):  # a pruned history's stand-in (bookkeeping/retention.py)
        return len(manager.get_event_history())
    with manager._mutex:
        return len(manager._history_event_list)


def resume_point(execution: Execution) -> tuple[str, Any]:
    """The top-level state that did not finish, and the input it was entered with."""
    top_level = set(json.loads(execution.state_machine.definition).get("States", {}))
    open_states: dict[str, Any] = {}
    last_open: str | None = None
    for event in execution.exec_worker.env.event_manager.get_event_history():
        kind: str = event["type"]
        if kind.endswith("StateEntered"):
            details = event.get("stateEnteredEventDetails", {})
            if details.get("name") in top_level:
                open_states[details["name"]] = json.loads(details.get("input") or "null")
                last_open = details["name"]
        elif kind.endswith("StateExited"):
            name = event.get("stateExitedEventDetails", {}).get("name")
            open_states.pop(name, None)
            if name == last_open:
                last_open = None
    if last_open is not None:
        return last_open, open_states[last_open]
    # Nothing was running when it ended (it failed before its first state): start again.
    return json.loads(execution.state_machine.definition)["StartAt"], execution.input_data


class RedriveWorker(ExecutionWorker):
    """Runs a parsed program from `state_name`, appending to the previous attempt's history."""

    def __init__(self, previous: ExecutionWorker, state_name: str, state_input: Any, redrive_count: int, when: str):
        super().__init__(
            evaluation_details=previous._evaluation_details,
            exec_comm=previous._execution_communication,
            cloud_watch_logging_session=previous._cloud_watch_logging_session,
            activity_store=previous._activity_store,
            mock_test_case=previous._mock_test_case,
        )
        self._state_name = state_name
        self._state_input = state_input
        # Built before the thread starts, so a StopExecution that comes at once finds it.
        self.env = self._get_evaluation_environment()
        self.env.event_manager = previous.env.event_manager
        deadlines.forget(self.env.event_manager)  # the ended run's TimeoutSeconds (interpreter/deadlines.py)
        execution_context = self.env.states.context_object.context_object_data["Execution"]
        execution_context["RedriveCount"] = redrive_count
        execution_context["RedriveTime"] = when
        history = previous.env.event_manager.get_event_history()
        self.env.event_history_context.source_event_id = history[-1]["id"] if history else 0
        self.env.event_manager.add_event(
            context=self.env.event_history_context,
            event_type=HistoryEventType.ExecutionRedriven,
            event_details=EventDetails(
                executionRedrivenEventDetails=ExecutionRedrivenEventDetails(redriveCount=redrive_count)
            ),
        )

    def _execution_logic(self) -> None:
        program = self._get_evaluation_entrypoint()
        self.env.states.reset(input_value=self._state_input)
        with suppress(RuntimeError):  # stopped already: no state runs, the body records ExecutionAborted
            self.env.next_state_name = self._state_name
        # moto's Program.eval, started at the unsuccessful state instead of StartAt; the body is run
        # even when a stop came first (EvalComponent.eval would skip it, and ExecutionAborted with
        # it), as stop_execution.py does for a first run. TimeoutSeconds starts again, on a new time
        # line of the execution's seconds (interpreter/deadlines.py), as the first run's.
        if program.timeout_seconds is not None:
            timeout = program.timeout_seconds.timeout_seconds
            rate = deadlines.rate_of(self.env.event_manager)
            deadlines.run_on_time_line(self.env, timeout, rate, lambda: program._eval_body(self.env))
        else:
            evaluation = threading.Thread(target=program._eval_body, args=(self.env,), daemon=True)
            TMP_THREADS.append(evaluation)
            evaluation.start()
            evaluation.join()
        self._execution_communication.terminated()


def redrive(execution: Execution, client_token: str | None, now: datetime.datetime) -> datetime.datetime:
    tokens = [(token, date) for token, date in _read_record(execution).tokens if now - date <= CLIENT_TOKEN_LIFETIME]
    for token, redrive_date in tokens if client_token else []:
        if token == client_token:
            return redrive_date
    reason = not_redrivable_reason(execution, now)
    if reason is not None:
        raise ExecutionNotRedrivable(f"{reason}: '{execution.exec_arn}'")
    state_name, state_input = resume_point(execution)
    record = record_of(execution)
    record.tokens = tokens
    record.count += 1
    record.date = now
    if client_token:
        record.tokens = [*record.tokens, (client_token, now)][-CLIENT_TOKENS_KEPT:]
    worker = RedriveWorker(execution.exec_worker, state_name, state_input, record.count, now.isoformat())
    execution.exec_status = ExecutionStatus.RUNNING
    # Running again: a history budget (engine/bookkeeping/retention.py) must not prune it until it ends again.
    setattr(execution, retention._SETTLED, False)
    execution.stop_date = None
    execution.output = None
    execution.error = None
    execution.cause = None
    execution.exec_worker = worker
    worker.start()
    return now


def _redrive_execution_action(self: StepFunctionResponse) -> ActionResult:
    execution = self.stepfunction_backend.describe_execution(self._get_param("executionArn"))
    if not isinstance(execution, Execution):  # execution of state machines is switched off
        raise ExecutionNotRedrivable("Executions are not run by this endpoint: nothing to redrive")
    return ActionResult({"redriveDate": redrive(execution, self._get_param("clientToken"), clock())})


def redrive_fields(execution: Any, now: datetime.datetime, with_status: bool) -> dict[str, Any]:
    if not isinstance(execution, Execution) or workflow_type(execution) != StateMachineType.STANDARD:
        return {}
    record = _read_record(execution)
    fields: dict[str, Any] = {"redriveCount": record.count}
    if record.date is not None:
        fields["redriveDate"] = record.date
    if with_status:
        reason = not_redrivable_reason(execution, now)
        fields["redriveStatus"] = REDRIVABLE if reason is None else NOT_REDRIVABLE
        if reason is not None:
            fields["redriveStatusReason"] = reason
    return fields


def _serialized(self: StepFunctionResponse, action_result: ActionResult) -> Any:
    """DescribeExecution and ListExecutions carry the redrive fields, whoever built the response."""
    action = self._get_action()
    result = action_result.result
    if action in ("DescribeExecution", "ListExecutions") and isinstance(result, dict):
        backend = self.stepfunction_backend
        now = clock()
        if action == "DescribeExecution" and "executionArn" in result:
            result.update(redrive_fields(backend.describe_execution(result["executionArn"]), now, True))
        elif action == "ListExecutions":
            for item in result.get("executions", []):
                item.update(redrive_fields(backend.describe_execution(item["executionArn"]), now, False))
            wanted = self._get_param("redriveFilter")
            if wanted in ("REDRIVEN", "NOT_REDRIVEN"):
                result["executions"] = [
                    item for item in result["executions"] if (item.get("redriveCount", 0) > 0) == (wanted == "REDRIVEN")
                ]
    return BaseResponse.serialized(self, action_result)


def moto_needs() -> list[Any]:
    """What this module calls or replaces in the pinned moto (checked by engine/moto_shape.py)."""
    from moto.stepfunctions.parser.asl.eval.environment import Environment
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager

    from onceflow.engine.moto_shape import need

    return [
        need(BaseResponse, "serialized", "action_result"),
        need(BaseResponse, "_get_action"),
        need(StepFunctionResponse, "stepfunction_backend"),
        need(
            ExecutionWorker,
            "__init__",
            "evaluation_details",
            "exec_comm",
            "cloud_watch_logging_session",
            "activity_store",
            "mock_test_case",
        ),
        need(ExecutionWorker, "_get_evaluation_entrypoint"),
        need(Program, "_eval_body", "env"),
        need(ExecutionWorker, "_get_evaluation_environment"),
        need(ExecutionWorker, "_execution_logic"),
        need(ExecutionWorker, "start"),
        need(Execution, "__init__", "sm_type", "start_date", "input_data"),
        need(Environment, "set_timed_out"),
        need(EventManager, "add_event", "context", "event_type", "event_details"),
        need(EventManager, "get_event_history"),
        need(EventManager, "__init__"),  # its _mutex and _history_event_list, read by _history_length
        need(HistoryEventType, "ExecutionRedriven"),
    ]


def patches() -> list[Patch]:
    """RedriveExecution routed to this module; redrive fields added to DescribeExecution/ListExecutions."""
    return [
        (StepFunctionResponse, "redrive_execution", _redrive_execution_action),
        (StepFunctionResponse, "serialized", _serialized),
    ]

"""Execution lookups that do not walk every execution (the `execution_index` speed-up).

moto keeps a state machine's executions in one list and finds one by walking it: DescribeExecution,
GetExecutionHistory and StopExecution by ARN, StartExecution's name check (ExecutionAlreadyExists)
by name, and ListExecutions sorts the whole list again for every page. A local run of thousands of
events pays for all of them on every call: the cost of an event grew with the number that ran
before it (issue 21). Here each state machine gets an index by ARN and by name, brought up to date
from the list's new tail on each lookup (moto only ever appends to it), and ListExecutions reuses
the list's own order when it is already the order moto would sort it into.

Answers are moto's own: the first execution of a name or an ARN wins, as moto's walk finds it, and
an execution is listed newest first exactly as `sorted(..., reverse=True)` orders it.
"""

from __future__ import annotations

from typing import Any

from moto.stepfunctions import models as sfn_models
from moto.stepfunctions.exceptions import ExecutionAlreadyExists, ExecutionDoesNotExist
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.utils import PAGINATION_MODEL
from moto.utilities.paginator import paginate

Patch = tuple[Any, str, Any]
_ATTRIBUTE = "_onceflow_execution_index"
_STATUSES = {status.value: status for status in ExecutionStatus}


def moto_needs() -> list[Any]:
    from onceflow.local.engine.shape import need

    return [
        need(sfn_models.StateMachine, "_handle_name_input_idempotency", "name", "execution_input"),
        need(sfn_models.StateMachine, "stop_execution", "execution_arn"),
        need(sfn_models.StepFunctionBackend, "describe_execution", "execution_arn"),
        need(sfn_models.StepFunctionBackend, "describe_state_machine_for_execution", "execution_arn"),
        need(sfn_models.StepFunctionBackend, "list_executions", "state_machine_arn", "status_filter"),
        need(sfn_models.StepFunctionBackend, "_validate_execution_arn", "execution_arn"),
        need(sfn_models.StepFunctionBackend, "_get_state_machine_for_execution", "execution_arn"),
        need(sfn_models.StepFunctionBackend, "describe_state_machine", "arn"),
        need(sfn_models, "utcnow"),
        need(sfn_models, "ResourceNotFound"),
    ]


class _Index:
    """One state machine's executions by ARN and by name, as of the first `seen` of its list."""

    def __init__(self, executions: list[Any]):
        self.executions = executions
        self.seen = 0
        self.by_arn: dict[str, Any] = {}
        self.by_name: dict[str, Any] = {}
        self.ascending = True  # start dates strictly increasing along the list so far
        self._last_start: Any = None

    def __deepcopy__(self, memo: dict[int, Any]) -> None:
        # moto deep-copies a state machine for each execution it starts (a snapshot of its
        # definition): the snapshot gets no index, and this one is not copied with its executions.
        return None

    def sync(self) -> _Index:
        executions = self.executions
        for execution in executions[self.seen :]:
            self.by_arn.setdefault(execution.execution_arn, execution)
            self.by_name.setdefault(execution.name, execution)
            start = execution.start_date
            if self._last_start is not None and not start > self._last_start:
                self.ascending = False
            self._last_start = start
        self.seen = len(executions)
        return self


def index_of(state_machine: Any) -> _Index:
    index = state_machine.__dict__.get(_ATTRIBUTE)
    executions = state_machine.executions
    if index is None or index.executions is not executions or index.seen > len(executions):
        index = state_machine.__dict__[_ATTRIBUTE] = _Index(executions)
    return index.sync()


def _does_not_exist(execution_arn: str) -> ExecutionDoesNotExist:
    return ExecutionDoesNotExist("Execution Does Not Exist: '" + execution_arn + "'")


def _handle_name_input_idempotency(self: Any, name: str, execution_input: str) -> Any:
    execution = index_of(self).by_name.get(name)
    if execution is None:
        return None
    # Executions with the same name and input are idempotent while it runs (moto's rule).
    if execution_input == execution.execution_input and execution.status == "RUNNING":
        return execution
    raise ExecutionAlreadyExists("Execution Already Exists: '" + execution.execution_arn + "'")


def _state_machine_stop_execution(self: Any, execution_arn: str) -> Any:
    execution = index_of(self).by_arn.get(execution_arn)
    if not execution:
        raise _does_not_exist(execution_arn)
    execution.stop(stop_date=sfn_models.utcnow(), error="", cause="")
    return execution


def _describe_execution(self: Any, execution_arn: str) -> Any:
    self._validate_execution_arn(execution_arn)
    state_machine = self._get_state_machine_for_execution(execution_arn)
    execution = index_of(state_machine).by_arn.get(execution_arn)
    if not execution:
        raise _does_not_exist(execution_arn)
    return execution


def _describe_state_machine_for_execution(self: Any, execution_arn: str) -> Any:
    for state_machine in self.state_machines:
        if execution_arn in index_of(state_machine).by_arn:
            return state_machine
    raise sfn_models.ResourceNotFound(execution_arn)


@paginate(pagination_model=PAGINATION_MODEL)
def list_executions(self: Any, state_machine_arn: str, status_filter: str | None = None) -> list[Any]:
    state_machine = self.describe_state_machine(state_machine_arn)
    index = index_of(state_machine)
    executions = state_machine.executions
    if status_filter:
        wanted = _STATUSES.get(status_filter)
        if wanted is not None and all(hasattr(e, "exec_status") for e in executions[-1:]):
            # The parser's executions: compare the enum member, not the `status` property (an Enum
            # value lookup per execution was most of a filtered call's cost).
            executions = [e for e in executions if e.exec_status is wanted]
        else:
            executions = [e for e in executions if e.status == status_filter]
    if index.ascending:
        # Strictly increasing start dates: newest first is the list reversed (no ties to keep in order).
        return executions[::-1]
    return sorted(executions, key=lambda x: x.start_date, reverse=True)


def patches() -> list[Patch]:
    return [
        (sfn_models.StateMachine, "_handle_name_input_idempotency", _handle_name_input_idempotency),
        (sfn_models.StateMachine, "stop_execution", _state_machine_stop_execution),
        (sfn_models.StepFunctionBackend, "describe_execution", _describe_execution),
        (sfn_models.StepFunctionBackend, "describe_state_machine_for_execution", _describe_state_machine_for_execution),
        (sfn_models.StepFunctionBackend, "list_executions", list_executions),
    ]

"""Execution lookups that do not walk every execution (the `execution_index` speed-up).

moto keeps a state machine's executions in one list and finds one by walking it: DescribeExecution,
GetExecutionHistory and StopExecution by ARN, StartExecution's name check (ExecutionAlreadyExists)
by name, and ListExecutions sorts the whole list again for every page. A local run of thousands of
events pays for all of them on every call: the cost of an event grew with the number that ran
before it (issue 21). Here each state machine gets an index by ARN and by name, brought up to date
from the list's new tail on each lookup (moto only ever appends to it), and ListExecutions reuses
the list's own order when it is already the order moto would sort it into. A statusFilter tests
every execution's status in moto; here it reads the executions that may still change status and
keeps those that have ended in a list per status (the reconciler lists FAILED, TIMED_OUT and
ABORTED on every run, and `onceflow start`'s clients list RUNNING).

Answers are moto's own: the first execution of a name or an ARN wins, as moto's walk finds it, and
an execution is listed newest first exactly as `sorted(..., reverse=True)` orders it.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from moto.stepfunctions import models as sfn_models
from moto.stepfunctions.exceptions import ExecutionAlreadyExists, ExecutionDoesNotExist
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.backend import execution as sfn_parser_execution
from moto.stepfunctions.utils import PAGINATION_MODEL
from moto.utilities.paginator import Paginator

from onceflow.engine.speedups import EXECUTION_INDEX

Patch = tuple[Any, str, Any]
SPEEDUPS = (EXECUTION_INDEX,)
_ATTRIBUTE = "_onceflow_execution_index"
_STATUSES = {status.value: status for status in ExecutionStatus}
# A status an execution keeps unless it is redriven (stepfunctions/api/redrive_execution.py; the index notices, below).
_REDRIVES = [0]  # RedriveExecutions so far (the wrapper in `patches`): ended executions ran again
_ENDED = frozenset(
    {ExecutionStatus.SUCCEEDED, ExecutionStatus.FAILED, ExecutionStatus.TIMED_OUT, ExecutionStatus.ABORTED}
)


def moto_needs() -> list[Any]:
    from onceflow.engine.moto_shape import need

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
        need(sfn_parser_execution.Execution, "__init__", "name"),  # exec_status: an ExecutionStatus or None
    ]


class _Index:
    """One state machine's executions by ARN and by name, and by status, as of the first `seen` of its list.

    By status: the executions that may still change status (`live`, in list order) are looked at
    again on each filtered list; one that has ended moves to its status's list (`ended`, in list
    order) and is not looked at again, so a filtered ListExecutions costs the executions still
    running, not every execution ever (the reconciler lists FAILED, TIMED_OUT and ABORTED on
    every run: issue 21). A redriven execution leaves FAILED, TIMED_OUT or ABORTED: its status
    lists are then built again (RedriveExecution counts its redrives in `_REDRIVES`).
    """

    def __init__(self, executions: list[Any]):
        self.executions = executions
        self.seen = 0
        self.by_arn: dict[str, Any] = {}
        self.by_name: dict[str, Any] = {}
        self.ascending = True  # start dates strictly increasing along the list so far
        self._last_start: Any = None
        self.live: dict[int, Any] = {}  # position in the list -> execution whose status may change
        self.ended: dict[Any, tuple[list[int], list[Any]]] = {}  # status -> (positions, executions)
        self.looked_at = 0  # executions whose status a filtered list read (what a cost test counts)
        self.redrives = _REDRIVES[0]

    def __deepcopy__(self, memo: dict[int, Any]) -> None:
        # moto deep-copies a state machine for each execution it starts (a snapshot of its
        # definition): the snapshot gets no index, and this one is not copied with its executions.
        return None

    def sync(self) -> _Index:
        executions = self.executions
        for position in range(self.seen, len(executions)):
            execution = executions[position]
            self.by_arn.setdefault(execution.execution_arn, execution)
            self.by_name.setdefault(execution.name, execution)
            self.live[position] = execution
            start = execution.start_date
            if self._last_start is not None and not start > self._last_start:
                self.ascending = False
            self._last_start = start
        self.seen = len(executions)
        return self

    def _settle(self) -> None:
        """Move the live executions that have ended to their status's list."""
        settled = []
        for position, execution in self.live.items():
            self.looked_at += 1
            status = execution.exec_status
            if status in _ENDED:
                positions, ended = self.ended.setdefault(status, ([], []))
                at = bisect_right(positions, position)
                positions.insert(at, position)
                ended.insert(at, execution)
                settled.append(position)
        for position in settled:
            del self.live[position]

    def with_status(self, wanted: Any) -> list[Any] | None:
        """This state machine's executions whose status is `wanted` now, in list order; None: the
        executions are not the parser's (no `exec_status`), the caller filters them itself."""
        if self.executions[-1:] and not hasattr(self.executions[-1], "exec_status"):
            return None
        if self.redrives != _REDRIVES[0]:  # an ended execution may be running again: sort them again
            self.live, self.ended, self.redrives = dict(enumerate(self.executions[: self.seen])), {}, _REDRIVES[0]
        self._settle()
        if wanted in _ENDED:
            return list(self.ended.get(wanted, ([], []))[1])
        return [e for e in self.live.values() if e.exec_status is wanted]


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


class _IndexedPaginator(Paginator):
    """moto's Paginator (its tokens, pages and errors), finding a token's execution in the results by
    identity (`list.index`, in C) instead of testing every execution listed before it in Python:
    moto's walk made each page cost more the further it was, so listing everything since a point
    (the safety net's sweep after a busy spell, `trace`) cost the square of what was listed."""

    def __init__(self, find: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self._find = find

    def paginate(self, results: list[Any]) -> tuple[list[Any], str | None]:
        if self._starting_token and self._parsed_token is not None:
            # moto's token holds "<start date>|<execution ARN>" of the page's first execution.
            execution = self._find(str(self._parsed_token.get("uniqueAttributes", "")).split("|", 1)[-1])
            at = _position(results, execution)
            if at >= 0 and self._check_predicate(results[at]):  # ARNs are unique: the one moto's walk finds
                end = min(at + self._max_results, len(results))
                token = self._build_next_token(results[end]) if end < len(results) else None
                return results[at:end], token
        return super().paginate(results)


def _position(results: list[Any], execution: Any) -> int:
    try:
        return results.index(execution) if execution is not None else -1
    except ValueError:
        return -1


def list_executions(
    self: Any, state_machine_arn: str, status_filter: str | None = None, **pagination: Any
) -> tuple[list[Any], str | None]:
    """moto's `list_executions` under its `@paginate` (PAGINATION_MODEL), answered from the index."""
    config = PAGINATION_MODEL["list_executions"]
    state_machine = self.describe_state_machine(state_machine_arn)
    index = index_of(state_machine)
    paginator = _IndexedPaginator(
        index.by_arn.get,
        max_results=pagination.pop(config["limit_key"], None),
        max_results_default=config.get("limit_default"),
        starting_token=pagination.pop(config["input_token"], None),
        unique_attribute=config.get("unique_attribute"),
        param_values_to_check={"status_filter": status_filter, **pagination},
        fail_on_invalid_token=config.get("fail_on_invalid_token", True),
    )
    executions = state_machine.executions
    if status_filter:
        wanted = _STATUSES.get(status_filter)
        indexed = index.with_status(wanted) if wanted is not None else None  # in list order, as filtered
        executions = indexed if indexed is not None else [e for e in executions if e.status == status_filter]
    if index.ascending:
        # Strictly increasing start dates: newest first is the list reversed (no ties to keep in order).
        return paginator.paginate(executions[::-1])
    return paginator.paginate(sorted(executions, key=lambda x: x.start_date, reverse=True))


def patches() -> list[Patch]:
    from onceflow.engine.stepfunctions.api import redrive_execution

    original_redrive = redrive_execution.redrive

    def redrive(*args: Any, **kwargs: Any) -> Any:
        try:
            return original_redrive(*args, **kwargs)
        finally:
            _REDRIVES[0] += 1  # counted even when refused: a cheap rebuild, never a stale list

    return [
        (redrive_execution, "redrive", redrive),
        (sfn_models.StateMachine, "_handle_name_input_idempotency", _handle_name_input_idempotency),
        (sfn_models.StateMachine, "stop_execution", _state_machine_stop_execution),
        (sfn_models.StepFunctionBackend, "describe_execution", _describe_execution),
        (sfn_models.StepFunctionBackend, "describe_state_machine_for_execution", _describe_state_machine_for_execution),
        (sfn_models.StepFunctionBackend, "list_executions", list_executions),
    ]

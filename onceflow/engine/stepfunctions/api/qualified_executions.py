"""Executions started with a version or alias ARN, as AWS runs and reports them (moto 5.2.5 cannot
start one: its version objects have no executions, and an alias ARN is no state machine to it).

https://docs.aws.amazon.com/step-functions/latest/dg/execution-alias-version-associate.html and the
API reference pages of StartExecution, DescribeExecution, ListExecutions and
DescribeStateMachineForExecution:

- StartExecution with a version ARN runs that version's definition (and role); with an alias ARN,
  one of the alias's versions, chosen at random by the routing weights. The execution belongs to
  the state machine: its ARN is `...:execution:<machine>:<name>`, names are unique across the
  machine and its versions, and ListExecutions of the machine lists it.
- DescribeExecution and ListExecutions report `stateMachineArn` (the machine's),
  `stateMachineVersionArn` (the version that ran) and, for a start through an alias,
  `stateMachineAliasArn`; none of them for a start with the machine's own ARN.
- ListExecutions with a version ARN lists the executions of that version (through an alias too),
  with an alias ARN those started through the alias, newest first, page by page.
- DescribeStateMachineForExecution answers the version the execution ran (its definition, role,
  configuration and revisionId) under the machine's ARN.
- The ExecutionStarted history event carries `stateMachineVersionArn` (and `stateMachineAliasArn`
  for a start through an alias), the fields GetExecutionHistory's ExecutionStartedEventDetails has.
- `$$.StateMachine.Id` is the ARN of the version that runs (AWS documents no other value; see
  docs/TESTING.md).

AWS's recordings: LocalStack's test_sfn_api_versioning.snapshot.json (test_start_version_execution,
test_describe_state_machine_for_execution_of_version*), test_sfn_api_aliasing.snapshot.json
(test_base_lifecycle_create_invoke_describe_list), test_sfn_api.snapshot.json
(test_list_executions_versions_pagination). Tests: tests/engine/test_conformance_versions.py.
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Sequence
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.exceptions import StateMachineDoesNotExist
from moto.stepfunctions.parser.api import ExecutionStatus, HistoryEventType
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow.engine.stepfunctions.api import qualified_arns
from onceflow.engine.stepfunctions.api.state_machines import DEFAULT_LOGGING, revision_of

Patch = tuple[Any, str, Any]
VERSION = "_onceflow_version_arn"  # on an execution: the version that ran it
ALIAS = "_onceflow_alias_arn"  # on an execution: the alias it was started through
_ENDED = (ExecutionStatus.SUCCEEDED, ExecutionStatus.FAILED, ExecutionStatus.ABORTED, ExecutionStatus.TIMED_OUT)
STARTED = "_onceflow_started_arns"  # on a worker and its event manager: ExecutionStarted's extra fields
_choice = random.Random()
_starting = threading.local()  # (version ARN, alias ARN or None) while StartExecution makes the execution


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
        need(StepFunctionsParserBackend, "describe_execution", "execution_arn"),
        need(StepFunctionsParserBackend, "list_executions", "state_machine_arn", "status_filter"),
        need(StepFunctionsParserBackend, "_validate_machine_arn", "machine_arn"),
        need(StepFunctionResponse, "describe_execution"),
        need(StepFunctionResponse, "list_executions"),
        need(StepFunctionResponse, "describe_state_machine_for_execution"),
        need(StepFunctionResponse, "_get_param"),
        need(StepFunctionResponse, "_get_int_param"),
        need(Execution, "_get_start_execution_worker"),
        need(ExecutionWorker, "_get_evaluation_environment"),
        need(
            EventManager, "add_event", "context", "event_type", "event_details", "timestamp", "update_source_event_id"
        ),
        need(HistoryEventType, "ExecutionStarted"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these; each wrapped attribute's replacement there is the
    one wrapped (executions.py's unnamed executions, its inputDetails, state_machines.py's
    DescribeStateMachineForExecution)."""
    return [
        (StepFunctionsParserBackend, "start_execution", _start(before)),
        (StepFunctionResponse, "describe_execution", _describe(before)),
        (StepFunctionResponse, "list_executions", _list(before)),
        (StepFunctionResponse, "describe_state_machine_for_execution", _for_execution(before)),
        *_started_event(before),
    ]


def version_arn_of(execution: Any) -> str | None:
    return getattr(execution, VERSION, None)


def alias_arn_of(execution: Any) -> str | None:
    return getattr(execution, ALIAS, None)


def _routed_version(machine: Any, alias: Any) -> Any:
    routes = alias.routing_configuration
    arn = _choice.choices([r["stateMachineVersionArn"] for r in routes], weights=[r["weight"] for r in routes])[0]
    found = qualified_arns.resolve(machine.backend, arn)
    return found[1] if found is not None else None


def _start(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionsParserBackend, "start_execution")

    def start_execution(
        self: StepFunctionsParserBackend,
        state_machine_arn: str,
        name: str | None = None,
        execution_input: str | None = None,
        trace_header: str | None = None,
    ) -> Any:
        arn, hash_sign, test_case = (state_machine_arn or "").partition("#")
        found = qualified_arns.resolve(self, arn)
        if found is None:
            return original(self, state_machine_arn, name, execution_input, trace_header)
        self._validate_machine_arn(arn)
        machine, version, alias = found
        if alias is not None:
            version = _routed_version(machine, alias)
        if version is None:
            raise StateMachineDoesNotExist(f"State Machine Does Not Exist: '{arn}'")
        # moto runs the version as it runs a machine: its executions are the machine's own list.
        version.executions = machine.executions
        _starting.arns = (version.arn, alias.arn if alias is not None else None)
        try:
            return original(self, version.arn + hash_sign + test_case, name, execution_input, trace_header)
        finally:
            _starting.arns = None

    functools.update_wrapper(start_execution, original)  # keeps the mocked integrations' mark
    return start_execution


def _started_event(before: Sequence[Patch]) -> list[Patch]:
    """Marks the execution as its worker is made (before it runs), and ExecutionStarted with it."""
    original_worker = current(before, Execution, "_get_start_execution_worker")  # the mocked integrations'
    original_environment = current(before, ExecutionWorker, "_get_evaluation_environment")
    original_add = current(before, EventManager, "add_event")

    def _get_start_execution_worker(self: Execution) -> Any:
        worker = original_worker(self)
        arns = getattr(_starting, "arns", None)
        if arns is not None and self.state_machine_arn == arns[0] and version_arn_of(self) is None:
            setattr(self, VERSION, arns[0])
            setattr(self, ALIAS, arns[1])
            started = {"stateMachineVersionArn": arns[0]}
            if arns[1]:
                started["stateMachineAliasArn"] = arns[1]
            setattr(worker, STARTED, started)
        return worker

    def _get_evaluation_environment(self: ExecutionWorker) -> Any:
        env = original_environment(self)
        if getattr(self, STARTED, None):
            setattr(env.event_manager, STARTED, getattr(self, STARTED))
        return env

    def add_event(
        self: EventManager,
        context: Any,
        event_type: Any,
        event_details: Any = None,
        timestamp: Any = None,
        update_source_event_id: bool = True,
    ) -> Any:
        started = getattr(self, STARTED, None)
        if started and event_type == HistoryEventType.ExecutionStarted and event_details:
            event_details.get("executionStartedEventDetails", {}).update(started)
        return original_add(
            self,
            context=context,
            event_type=event_type,
            event_details=event_details,
            timestamp=timestamp,
            update_source_event_id=update_source_event_id,
        )

    return [
        (Execution, "_get_start_execution_worker", _get_start_execution_worker),
        (ExecutionWorker, "_get_evaluation_environment", _get_evaluation_environment),
        (EventManager, "add_event", add_event),
    ]


def qualified_fields(execution: Any) -> dict[str, str]:
    fields = {}
    if version_arn_of(execution):
        fields["stateMachineArn"] = qualified_arns.split(version_arn_of(execution))[0]
        fields["stateMachineVersionArn"] = version_arn_of(execution)
    if alias_arn_of(execution):
        fields["stateMachineAliasArn"] = alias_arn_of(execution)
    return fields


def _describe(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionResponse, "describe_execution")

    def describe_execution(self: StepFunctionResponse) -> Any:
        result = original(self)
        response = getattr(result, "result", None)
        # moto answers the ARN the execution ran: qualified only for a version's (no look-up otherwise).
        if isinstance(response, dict) and qualified_arns.split(response.get("stateMachineArn", ""))[1] is not None:
            response.update(
                qualified_fields(self.stepfunction_backend.describe_execution(self._get_param("executionArn")))
            )
        return result

    return describe_execution


def _item(execution: Any) -> dict[str, Any]:
    item = {
        "executionArn": execution.execution_arn,
        "name": execution.name,
        "startDate": execution.start_date,
        "status": execution.status,
        **qualified_fields(execution),
    }
    if execution.exec_status in _ENDED:
        item["stopDate"] = execution.stop_date
    return item


def _list(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionResponse, "list_executions")

    def list_executions(self: StepFunctionResponse) -> Any:
        backend = self.stepfunction_backend
        arn = self._get_param("stateMachineArn")
        found = qualified_arns.resolve(backend, arn) if arn else None
        if found is None:
            result = original(self)
            machine = qualified_arns.machine(backend, arn) if arn else None
            if machine is not None and machine.latest_version_number and isinstance(result.result, dict):
                for item in result.result.get("executions", []):
                    item.update(qualified_fields(backend.describe_execution(item["executionArn"])))
            return result
        backend._validate_machine_arn(arn)
        machine, version, alias = found
        if machine is None or (version is None and alias is None):
            raise StateMachineDoesNotExist(f"State Machine Does Not Exist: '{arn}'")
        wanted = self._get_param("statusFilter")
        attribute = VERSION if version is not None else ALIAS
        executions = [
            e
            for e in sorted(machine.executions, key=lambda e: e.start_date, reverse=True)
            if getattr(e, attribute, None) == arn and (wanted is None or e.status == wanted)
        ]
        return ActionResult(qualified_arns.listed(self, executions, lambda e: e.execution_arn, "executions", _item))

    return list_executions


def _for_execution(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionResponse, "describe_state_machine_for_execution")

    def describe_state_machine_for_execution(self: StepFunctionResponse) -> Any:
        result = original(self)
        response = getattr(result, "result", None)
        execution = self.stepfunction_backend.describe_execution(self._get_param("executionArn"))
        if isinstance(response, dict) and version_arn_of(execution):
            ran = execution.state_machine  # the snapshot of the version the execution ran
            response.update(
                stateMachineArn=qualified_arns.split(version_arn_of(execution))[0],
                definition=ran.definition,
                roleArn=ran.roleArn,
                loggingConfiguration={**DEFAULT_LOGGING, **(ran.loggingConfiguration or {})},
                tracingConfiguration=ran.tracingConfiguration,
                encryptionConfiguration=ran.encryptionConfiguration,
            )
            response.pop("revisionId", None)
            if revision_of(ran):
                response["revisionId"] = revision_of(ran)
        return result

    return describe_state_machine_for_execution

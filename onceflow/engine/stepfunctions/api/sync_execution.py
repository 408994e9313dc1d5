"""`StartSyncExecution` on the embedded endpoint, as AWS documents it for Express workflows.

References: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartSyncExecution.html
and "Choosing workflow type" (https://docs.aws.amazon.com/step-functions/latest/dg/choosing-workflow-type.html):

- only for EXPRESS state machines: a STANDARD one is `StateMachineTypeNotSupported`; an unknown one
  `StateMachineDoesNotExist`; a name over 80 characters or with a forbidden character
  `InvalidName`; an input that is not JSON `InvalidExecutionInput`, over 256 KiB `ValidationException`;
- the call returns when the execution ends, with `status` SUCCEEDED, FAILED or TIMED_OUT, `output`
  (SUCCEEDED only), `error` and `cause`, `input`, `startDate`/`stopDate`, `executionArn`
  (`arn:...:express:<state machine>:<name>:<id>`), `stateMachineArn`, `name` and `billingDetails`
  (duration rounded up to the next 100 ms, memory in 64 MB steps: Step Functions pricing);
- names are not deduplicated (a synchronous Express execution runs at most once per call), and the
  execution is not listed by ListExecutions nor described by DescribeExecution, which AWS does not
  support for Express workflows: its record is the response (and, on AWS, CloudWatch Logs).

moto 5.2.5 has no StartSyncExecution. Its execution engine runs the workflow on a worker thread, as
for StartExecution; the request waits for the end on a condition of the server's request lock,
which releases the lock meanwhile, so other requests (and the execution's own service calls, when
they go through the server) are served while it runs.
"""

from __future__ import annotations

import copy
import datetime
import math
import re
import threading
import uuid
from typing import Any, Final

from moto.core.exceptions import AWSError
from moto.core.responses import ActionResult
from moto.stepfunctions.exceptions import InvalidName
from moto.stepfunctions.parser.api import ExecutionStatus, StateMachineType
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication, Execution
from moto.stepfunctions.responses import StepFunctionResponse

Patch = tuple[Any, str, Any]

MAX_NAME_LENGTH: Final = 80
# "A name must not contain: white space, brackets < > { } [ ], wildcard characters ? *, special
# characters " # % \ ^ | ~ ` $ & , ; : /, control characters (U+0000-001F, U+007F-009F)" (API_StartExecution).
_FORBIDDEN_IN_NAME: Final = re.compile(r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/\x00-\x1f\x7f-\x9f]")
BILLED_DURATION_STEP_MS: Final = 100
BILLED_MEMORY_STEP_MB: Final = 64
# The longest an Express execution may run (its TimeoutSeconds is at most this); a wait never outlasts it.
EXPRESS_MAX_SECONDS: Final = 300


class StateMachineTypeNotSupported(AWSError):
    TYPE = "StateMachineTypeNotSupported"
    STATUS = 400


class _EndNotifyingCommunication(BaseExecutionWorkerCommunication):
    """moto's end-of-execution bookkeeping, then a wake-up for the request waiting on it."""

    def __init__(self, execution: Execution, ended: threading.Condition):
        super().__init__(execution)
        self._ended = ended

    def terminated(self) -> None:
        super().terminated()
        with self._ended:
            self._ended.notify_all()


class SyncExpressExecution(Execution):
    """An Express execution whose caller waits for its end."""

    ended: threading.Condition

    def _get_start_execution_worker_comm(self) -> BaseExecutionWorkerCommunication:
        return _EndNotifyingCommunication(self, self.ended)

    @property
    def running(self) -> bool:
        return self.exec_status == ExecutionStatus.RUNNING


def _check_name(name: str) -> None:
    if not 1 <= len(name) <= MAX_NAME_LENGTH or _FORBIDDEN_IN_NAME.search(name):
        raise InvalidName(f"Invalid Name: '{name}'")


def express_execution_arn(state_machine_arn: str, name: str) -> str:
    return f"{state_machine_arn.replace(':stateMachine:', ':express:', 1)}:{name}:{uuid.uuid4()}"


def billing_details(execution: Execution) -> dict[str, int]:
    elapsed = (execution.stop_date or execution.start_date) - execution.start_date
    duration_ms = max(1, math.ceil(elapsed / datetime.timedelta(milliseconds=1)))
    data = len(execution.state_machine.definition) + len(to_json_str(execution.input_data))
    memory_mb = max(1, math.ceil(data / (1024 * 1024 * BILLED_MEMORY_STEP_MB))) * BILLED_MEMORY_STEP_MB
    return {
        "billedDurationInMilliseconds": math.ceil(duration_ms / BILLED_DURATION_STEP_MS) * BILLED_DURATION_STEP_MS,
        "billedMemoryUsedInMB": memory_mb,
    }


def sync_output(execution: Execution) -> dict[str, Any]:
    """The StartSyncExecution response of an ended execution."""
    # The synchronous statuses are SUCCEEDED, FAILED and TIMED_OUT; an execution stopped locally
    # (test teardown) ends FAILED, as moto's own synchronous worker reports it.
    status = execution.exec_status
    sync_status = status.value if status in (ExecutionStatus.SUCCEEDED, ExecutionStatus.TIMED_OUT) else "FAILED"
    output: dict[str, Any] = {
        "executionArn": execution.exec_arn,
        "stateMachineArn": execution.state_machine_arn,
        "name": execution.name,
        "startDate": execution.start_date,
        "stopDate": execution.stop_date,
        "status": sync_status,
        # The caller's own text, as DescribeExecution answers it (api/executions.py).
        "input": getattr(execution, "execution_input", None)
        or to_json_str(execution.input_data, separators=(",", ":")),
        "inputDetails": {"included": True},
        # Also when the execution failed (no output): AWS's recording, LocalStack's
        # express/test_express_sync.snapshot.json (test_base[BASE_RAISE_FAILURE]).
        "outputDetails": {"included": True},
        "billingDetails": billing_details(execution),
    }
    if sync_status == "SUCCEEDED":
        output["output"] = to_json_str(execution.output, separators=(",", ":"))
    if execution.error is not None:
        output["error"] = execution.error
    if execution.cause is not None:
        output["cause"] = execution.cause
    if execution.trace_header:
        output["traceHeader"] = execution.trace_header
    return output


def start(
    backend: Any, state_machine_arn: str, name: str | None, input_text: str | None, ended: threading.Condition
) -> SyncExpressExecution:
    """Validate as AWS does and start the execution on a worker thread."""
    from onceflow.engine.stepfunctions.strict import invalid_execution_input

    state_machine = backend.describe_state_machine(state_machine_arn)  # InvalidArn, StateMachineDoesNotExist
    if state_machine.type != StateMachineType.EXPRESS:
        # AWS's words exactly (LocalStack's test_sfn_api.snapshot.json, test_start_sync_execution).
        raise StateMachineTypeNotSupported("This operation is not supported by this type of state machine")
    name = name if name is not None else str(uuid.uuid4())
    _check_name(name)
    text = "{}" if input_text is None else input_text
    error = invalid_execution_input(text)
    if error is not None:
        raise error
    # A snapshot of the definition, as moto's StartExecution takes one (without its executions).
    snapshot = copy.deepcopy(state_machine, {id(state_machine.executions): [], id(state_machine.backend): backend})
    snapshot.sm_type = StateMachineType.EXPRESS  # the engine's execution type (moto keeps "STANDARD" there)
    execution = SyncExpressExecution(
        name=name,
        sm_type=StateMachineType.EXPRESS,
        role_arn=snapshot.roleArn,
        exec_arn=express_execution_arn(state_machine.arn, name),
        account_id=backend.account_id,
        region_name=backend.region_name,
        state_machine=snapshot,
        start_date=datetime.datetime.now(tz=datetime.UTC),
        cloud_watch_logging_session=None,
        input_data=text,
        trace_header=None,
        activity_store={},
    )
    execution.ended = ended
    execution.start()
    return execution


def action(request_lock: threading.RLock) -> Any:
    def start_sync_execution(self: StepFunctionResponse) -> ActionResult:
        # The request holds the (re-entrant) request lock; waiting on a condition of it releases
        # it entirely until the execution's worker says it ended.
        ended = threading.Condition(request_lock)
        with ended:
            execution = start(
                self.stepfunction_backend,
                self._get_param("stateMachineArn"),
                self._get_param("name"),
                self._get_param("input"),
                ended,
            )
            if not ended.wait_for(lambda: not execution.running, timeout=EXPRESS_MAX_SECONDS * 2):
                raise AWSError("the execution did not end in time", exception_type="ServiceUnavailable", status=503)
        output = sync_output(execution)
        trace_header = self._get_param("traceHeader")
        if trace_header:
            output["traceHeader"] = trace_header
        return ActionResult(output)

    return start_sync_execution


def moto_needs() -> list[Any]:
    """What this module calls or replaces in the pinned moto (checked by engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(StepFunctionResponse, "stepfunction_backend"),
        need(StepFunctionResponse, "_get_param"),
        need(
            Execution,
            "__init__",
            "name",
            "sm_type",
            "role_arn",
            "exec_arn",
            "account_id",
            "region_name",
            "state_machine",
            "start_date",
            "cloud_watch_logging_session",
            "activity_store",
            "input_data",
            "trace_header",
        ),
        need(Execution, "_get_start_execution_worker_comm"),
        need(Execution, "start"),
        need(BaseExecutionWorkerCommunication, "terminated"),
    ]


def patches(request_lock: threading.RLock | None) -> list[Patch]:
    """StartSyncExecution routed to this module (it needs the server's request lock to wait without it)."""
    if request_lock is None:
        return []
    return [(StepFunctionResponse, "start_sync_execution", action(request_lock))]

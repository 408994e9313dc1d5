"""Hand one event to the state machine.

STANDARD: StartExecution, named per delivery; a delivery that was already handed over
(ExecutionAlreadyExists) is a success. EXPRESS: StartSyncExecution, which returns when the
execution ends; the record is done only if the execution finished the event or dead-lettered it
itself, so anything else goes back to SQS. Express does not deduplicate names (the workflow's own
idempotency does; the name only helps a person find the execution).

Throttling is waited out in the invocation (starter/throttling.py), the SDK's own retries counted. Errors that no redelivery can cure (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html,
API_StartSyncExecution.html): InvalidExecutionInput and InvalidName concern the message itself, so
they raise ExecutionRejected and the record is dead-lettered with the reason. Throttling that
outlasts the invocation raises StillThrottled (app.py re-queues the record). 5xx and the configuration errors (StateMachineDoesNotExist, AccessDenied, KMS) are not the message's fault:
the record is reported failed and stays on the queue until the cause is fixed or the redrive
policy moves it.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import ClientError

from onceflow_common.status_change import DEAD_LETTERED_ERROR
from starter.messages import PipelineEvent
from starter.naming import execution_name
from starter.throttling import call_seconds, call_waiting_out_throttling, is_throttling

Outcome = Literal["started", "already_started", "finished", "dead_lettered_by_workflow"]
PERMANENT_ERRORS = {"InvalidExecutionInput": "input", "InvalidName": "name"}
# Time the function keeps after the longest StartSyncExecution call, to report the batch.
SAFETY_MARGIN_SECONDS = 5
# FIFO STANDARD: DescribeExecution after 0.1 s, then 1.5 times longer each time, at most 1 s apart:
# an execution of about 0.5 s costs 4 calls, each further second one.
FIRST_POLL_SECONDS, POLL_GROWTH, MAX_POLL_SECONDS = 0.1, 1.5, 1.0
# Two waits, replaced apart in tests and by the local pipeline: `sleep` is the throttling backoff
# (time passing: a local run records it on its clock instead), `poll_sleep` the pause between two
# DescribeExecution polls (work happening: a local run waits on the engine for an execution's end).
sleep = time.sleep
poll_sleep = time.sleep
monotonic = time.monotonic
# Told of each throttled call (app.py counts them per invocation for its metrics).
on_throttled: contextvars.ContextVar[Callable[[], None]] = contextvars.ContextVar("on_throttled", default=lambda: None)


class ExecutionRejected(Exception):
    """Step Functions refused this message's execution for a reason no redelivery changes."""

    def __init__(self, code: str, field: str, message: str):
        self.code, self.field, self.message = code, field, message
        super().__init__(f"StartExecution refused the execution: {code}: {message}")


class ExecutionNotFinished(Exception):
    """An EXPRESS execution ended without finishing or dead-lettering its event, or a waited-for
    execution is still running when the invocation's time runs out: SQS redelivers the record."""


class ExecutionEndedBadly(Exception):
    """A waited-for STANDARD execution ended outside the workflow's paths (timed out, aborted, an
    uncaught error): no redelivery reruns it (the name exists), so the record is dead-lettered."""

    def __init__(self, execution_arn: str, status: str, error: str | None, cause: str | None):
        self.execution_arn, self.status, self.error = execution_arn, status, error
        super().__init__(f"execution {execution_arn} ended {status} ({error or 'no error'}: {cause or 'no cause'})")


@dataclass(frozen=True)
class Handover:
    name: str
    outcome: Outcome
    execution_arn: str | None = None


def _error_code(error: Exception) -> str | None:
    response = getattr(error, "response", None)
    code = (response.get("Error") or {}).get("Code") if isinstance(response, dict) else None
    return code if isinstance(code, str) else None


def _rejected(error: Exception) -> ExecutionRejected | None:
    code = _error_code(error)
    if code not in PERMANENT_ERRORS:
        return None
    message = str((getattr(error, "response", {}).get("Error") or {}).get("Message") or error)
    return ExecutionRejected(code, PERMANENT_ERRORS[code], message)


def _call(
    sfn: Any, call: Callable[[], dict[str, Any]], remaining_seconds: Callable[[], float], reserve: float
) -> dict[str, Any]:
    """`call()` with throttling waited out while a call of `sfn` (its SDK retries counted) and
    `reserve` seconds of the invocation would remain; a refusal no redelivery cures raises
    ExecutionRejected; NotStarted (throttling.py) when not even one call fits."""
    try:
        return call_waiting_out_throttling(
            call, remaining_seconds, reserve, lambda seconds: sleep(seconds), on_throttled.get(), call_seconds(sfn)
        )
    except ClientError as error:
        rejected = _rejected(error)
        if rejected is not None:
            raise rejected from error
        raise


def start_execution(
    sfn: Any,
    state_machine_arn: str,
    event: PipelineEvent,
    message_id: str,
    remaining_seconds: Callable[[], float] = lambda: 0.0,
) -> Handover:
    """StartExecution; throttling is waited out while the invocation has time (throttling.py)."""
    name = execution_name(event.event_id, message_id)
    try:
        started = _call(
            sfn,
            lambda: sfn.start_execution(stateMachineArn=state_machine_arn, name=name, input=event.execution_input),
            remaining_seconds,
            SAFETY_MARGIN_SECONDS,
        )
    except sfn.exceptions.ExecutionAlreadyExists:
        return Handover(name, "already_started")
    return Handover(name, "started", started.get("executionArn"))


def run_sync_execution(
    sfn: Any,
    state_machine_arn: str,
    event: PipelineEvent,
    message_id: str,
    call_timeout_seconds: int,
    remaining_seconds: Callable[[], float],
) -> Handover:
    """StartSyncExecution, retried on throttling while the function still has time for a whole call."""
    name = execution_name(event.event_id, message_id)
    reserve = call_timeout_seconds + SAFETY_MARGIN_SECONDS
    if remaining_seconds() < reserve:
        raise ExecutionNotFinished(
            f"not started: {remaining_seconds():.0f} s left in this invocation, "
            f"a synchronous execution may take {call_timeout_seconds} s"
        )
    result = _call(
        sfn,
        lambda: sfn.start_sync_execution(stateMachineArn=state_machine_arn, name=name, input=event.execution_input),
        remaining_seconds,
        reserve,
    )
    status, error_name = result.get("status"), result.get("error")
    arn = result.get("executionArn")
    if status == "SUCCEEDED":
        return Handover(name, "finished", arn)
    if status == "FAILED" and error_name == DEAD_LETTERED_ERROR:
        return Handover(name, "dead_lettered_by_workflow", arn)
    raise ExecutionNotFinished(
        f"execution {arn} ended {status} ({error_name or 'no error'}: {result.get('cause') or 'no cause'})"
    )


def execution_arn(state_machine_arn: str, name: str) -> str:
    """arn:<partition>:states:<region>:<account>:execution:<state machine>:<name>."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


def wait_for_execution(
    sfn: Any,
    handover: Handover,
    state_machine_arn: str,
    wait_timeout_seconds: int,
    remaining_seconds: Callable[[], float],
) -> Handover:
    """FIFO STANDARD: poll DescribeExecution until the execution ended (or it was already there).

    Gives up, leaving the record to SQS, when the invocation has only SAFETY_MARGIN_SECONDS left or
    the wait reached `wait_timeout_seconds`: the redelivery finds the execution by its name and
    waits again, so the group's next record never starts before this one ended."""
    arn = handover.execution_arn or execution_arn(state_machine_arn, handover.name)
    deadline = monotonic() + wait_timeout_seconds
    delay = FIRST_POLL_SECONDS
    describing = call_seconds(sfn)  # a DescribeExecution, the SDK's own retries counted
    while True:
        budget = min(remaining_seconds() - SAFETY_MARGIN_SECONDS - describing, deadline - monotonic())
        if budget <= 0:
            raise ExecutionNotFinished(
                f"execution {arn} still running when the wait ran out; SQS redelivers the record"
            )
        poll_sleep(min(delay, budget))
        delay = min(delay * POLL_GROWTH, MAX_POLL_SECONDS)
        try:
            described = sfn.describe_execution(executionArn=arn)
        except Exception as error:
            if not is_throttling(error):
                raise
            on_throttled.get()()  # DescribeExecution's bucket is small (15/s): poll again later
            continue
        status = described.get("status")
        if status == "RUNNING" or status == "PENDING_REDRIVE":
            continue
        if status == "SUCCEEDED":
            return Handover(handover.name, "finished", arn)
        if status == "FAILED" and described.get("error") == DEAD_LETTERED_ERROR:
            return Handover(handover.name, "dead_lettered_by_workflow", arn)
        raise ExecutionEndedBadly(arn, str(status), described.get("error"), described.get("cause"))

"""SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat with the token of a closed task: TaskTimedOut.

AWS's API reference lists TaskTimedOut for the three: "The task token has either expired or the
task associated with the token has already been closed"; InvalidToken is "The provided token is not
valid" (a token Step Functions never issued: "Invalid Token: 'Invalid token'", LocalStack's recording
test_sfn_send_task_outcome_with_no_such_token, 2025). moto answered a second SendTaskSuccess to a task
that had its answer as if it were the first (and the task kept the first), and a token whose task
was aborted or whose execution had ended InvalidToken. Here a token the engine issued is closed once
its task stopped waiting (answered, timed out, aborted) or its execution ended, and answers
TaskTimedOut with the API's description for message (no recording of AWS's text).
https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from moto.stepfunctions.parser.api import ExecutionStatus, TaskTimedOut
from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
CLOSED = "The task token has either expired or the task associated with the token has already been closed."


def moto_needs() -> list[Need]:
    return [
        need(StepFunctionsParserBackend, "send_task_success", "task_token", "outcome"),
        need(StepFunctionsParserBackend, "send_task_failure", "task_token", "error", "cause"),
        need(StepFunctionsParserBackend, "send_task_heartbeat", "task_token"),
        need(StepFunctionsParserBackend, "_get_executions", "execution_status"),
        need(CallbackEndpoint, "__init__", "callback_id"),  # its _notify_event, set when the task stops waiting
    ]


def _closed(backend: StepFunctionsParserBackend, token: str) -> bool:
    """The token was issued (by an execution of any status) and its task no longer waits for it."""
    for execution in backend._get_executions():
        pool = getattr(getattr(getattr(execution, "exec_worker", None), "env", None), "callback_pool_manager", None)
        endpoint = pool.get(token) if pool is not None else None
        if endpoint is not None:
            stopped_waiting = endpoint._notify_event.is_set() or endpoint.consumer_error is not None
            return stopped_waiting or execution.exec_status != ExecutionStatus.RUNNING
    return False


def checked(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)  # its parameters, as the modules that wrap it after this one ask for them
    def send(self: StepFunctionsParserBackend, task_token: str, *args: Any, **kwargs: Any) -> Any:
        if _closed(self, task_token):
            raise TaskTimedOut(CLOSED)
        return original(self, task_token, *args, **kwargs)

    return send


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    names = ("send_task_success", "send_task_failure", "send_task_heartbeat")
    return [
        (StepFunctionsParserBackend, name, checked(current(before, StepFunctionsParserBackend, name))) for name in names
    ]

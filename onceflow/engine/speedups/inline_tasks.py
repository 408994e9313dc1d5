"""The `inline_tasks` speed-up: a request-response service Task runs on its execution's thread.

moto runs every attempt of every execution state on a thread of its own and waits for it on an
Event for the state's TimeoutSeconds (ExecutionState._evaluate_with_timeout): a thread start, an
Event and a thread switch per task, about a tenth of the engine's CPU for the pipeline's three tasks.
A Task that calls a service and takes its answer (no `.sync`, no `.waitForTaskToken`), with neither
TimeoutSeconds nor HeartbeatSeconds (the default, 99999999 s), has nothing for that wait to
interrupt: the execution's thread would wait for the task's thread whatever happens, as a stop
reaches the execution once the task returns either way. Here such a Task runs on the execution's
thread, with the same frame, stack copy, frame ending and outcome order as moto's; every other
execution state (a timeout or heartbeat given, a callback or a `.sync` job, Parallel, Map,
Lambda, activities) keeps moto's thread.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import TimeoutSeconds
from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_lambda import (
    StateTaskServiceLambda,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow.engine.speedups import INLINE_TASKS

Patch = tuple[Any, str, Any]
SPEEDUPS = (INLINE_TASKS,)


def moto_needs() -> list[Need]:
    return [
        need(ExecutionState, "_evaluate_with_timeout", "env"),
        need(ExecutionState, "_eval_execution", "env"),
        need(ExecutionState, "_is_language_query_jsonpath"),
        need(ExecutionState, "__init__", "state_entered_event_type", "state_exited_event_type"),
        need(TimeoutSeconds, "is_default_value"),
        need(StateTaskService, "_eval_execution", "env"),
        need(Environment, "open_frame", "event_history_context"),
        need(Environment, "close_frame", "frame"),
        need(Environment, "set_ended"),
    ]


def runs_inline(state: ExecutionState) -> bool:
    """A request-response service Task with the default timeout and no heartbeat."""
    if not isinstance(state, StateTaskService) or isinstance(state, StateTaskServiceLambda):
        return False
    timeout = state.timeout
    return (
        type(timeout) is TimeoutSeconds
        and timeout.timeout_seconds == TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS
        and state.heartbeat is None
        and getattr(state.resource, "condition", None) is None
    )


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, ExecutionState, "_evaluate_with_timeout")

    def _evaluate_with_timeout(self: ExecutionState, env: Any) -> None:
        if not runs_inline(self):
            return original(self, env)
        # moto's _evaluate_with_timeout, with _exec_and_notify called here instead of on a thread.
        self.timeout.eval(env=env)
        env.stack.pop()  # the timeout's seconds: the default, nothing to wait for
        frame = env.open_frame()
        frame.states.reset(input_value=env.states.get_input())
        frame.stack = copy.deepcopy(env.stack)
        execution_outputs: list[Any] = []
        execution_exception: Exception | None = None
        try:
            self._eval_execution(frame)
            execution_outputs.extend(frame.stack)
        except Exception as ex:
            execution_exception = ex
        frame.set_ended()
        env.close_frame(frame)
        if execution_exception:
            raise execution_exception
        execution_output = execution_outputs.pop()
        env.stack.append(execution_output)
        if not self._is_language_query_jsonpath():
            env.states.set_result(execution_output)
        if self.assign_decl:
            self.assign_decl.eval(env=env)
        if self.result_selector:
            self.result_selector.eval(env=env)
        if self.result_path:
            self.result_path.eval(env)
        else:
            res = env.stack.pop()
            env.states.reset(input_value=res)

    return [(ExecutionState, "_evaluate_with_timeout", _evaluate_with_timeout)]

"""A Parallel state that fails aborts the Task states its branches left open, as AWS records it.

When a branch of a Parallel fails, AWS writes `TaskStateAborted` for each Task state of a branch
that had not exited: the Task whose failure failed the branch (after its TaskFailed, linked to it)
and a Task another branch is still waiting in (a `.waitForTaskToken` callback, a `.sync` job).
`ParallelStateFailed` stays linked to the failure, not to the abort, and nothing an aborted Task
does afterwards (its service call returning) is written to the history; a Task waiting for its
callback stops waiting. A branch that failed without
an error name or cause (SendTaskFailure with neither) reaches the Parallel's Catch as
`{"Error": null, "Cause": null}`, as a Task's own Catch sees it, not as empty strings.

LocalStack's recordings of AWS: callback/test_callback.snapshot.json
test_sqs_failure_in_wait_for_task_tok_no_error_field[SQS_PARALLEL_WAIT_FOR_TASK_TOKEN]
(2024-04-29: TaskFailed #8, TaskStateAborted #9 → 8, ParallelStateFailed #10 → 8, the Catch's
`states_all_error` `{"Error": null, "Cause": null}`); states_variables/test_error_output.snapshot.json
test_parallel_catch_error[*] (2024-11-13). moto wrote no TaskStateAborted and bound "" to both.
History event types: https://docs.aws.amazon.com/step-functions/latest/apireference/API_HistoryEvent.html
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from moto.stepfunctions.parser.api import HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEventException
from moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branch_worker import BranchWorker
from moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branches_decl import BranchesDecl
from moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task import StateTask
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventHistoryContext, EventManager

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
OPEN_TASK = "_onceflow_open_task"  # on a branch's environment: a Task state there entered and not exited
CLOSED = "_onceflow_closed"  # on a stopped branch's history context: what its Task still does is not history


def moto_needs() -> list[Need]:
    return [
        need(StateTask, "_eval_body", "env"),
        need(BranchWorker, "stop", "stop_date", "cause", "error"),
        need(BranchesDecl, "_eval_body", "env"),
        need(EventManager, "add_event", "context", "event_type", "update_source_event_id"),
        need(EventHistoryContext, "__init__", "previous_event_id"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    # StateTask inherits CommonStateField._eval_body, which later patches (bookkeeping/quotas.py) and
    # tools (devtools/schedules/hooks.py) replace: unless a patch before this one gave StateTask its
    # own, the inherited one is looked up at each call, or a Task state would skip them.
    own_task_body = any(owner is StateTask and name == "_eval_body" for owner, name, _ in before) or (
        "_eval_body" in StateTask.__dict__
    )
    original_task_body = current(before, StateTask, "_eval_body") if own_task_body else None
    original_stop = current(before, BranchWorker, "stop")
    original_branches = current(before, BranchesDecl, "_eval_body")
    original_add_event = current(before, EventManager, "add_event")

    def _task_body(self: StateTask, env: Any) -> None:
        env.__dict__[OPEN_TASK] = True
        # an uncaught failure leaves the Task open: the Parallel aborts it
        if original_task_body is None:
            super(StateTask, self)._eval_body(env)
        else:
            original_task_body(self, env)
        env.__dict__[OPEN_TASK] = False

    def stop(self: BranchWorker, stop_date: Any, cause: str | None, error: str | None) -> None:
        env = self.env
        if env is not None and env.__dict__.pop(OPEN_TASK, False):
            envs = list(_frames(env))  # the branch's, and its running Task's frames
            contexts = [frame.event_history_context for frame in envs]
            env.event_manager.add_event(  # linked to the branch's last event, the Parallel's link left as it is
                context=EventHistoryContext(previous_event_id=max(c.last_published_event_id for c in contexts)),
                event_type=HistoryEventType.TaskStateAborted,
                update_source_event_id=False,
            )
            for context in contexts:
                setattr(context, CLOSED, True)
            for frame in envs:  # a Task waiting for its callback stops waiting
                token = frame.states.context_object.context_object_data.get("Task", {}).get("Token")
                endpoint = env.callback_pool_manager.get(token) if token else None
                if endpoint is not None:
                    endpoint.interrupt_all()
        original_stop(self, stop_date=stop_date, cause=cause, error=error)

    def add_event(self: EventManager, context: Any, *args: Any, **kwargs: Any) -> int:
        if getattr(context, CLOSED, False):  # an aborted Task's call returning after its Parallel failed
            return context.last_published_event_id
        return original_add_event(self, context, *args, **kwargs)

    def _branches_body(self: BranchesDecl, env: Any) -> None:
        try:
            original_branches(self, env)
        except FailureEventException as failure:
            details = failure.failure_event.event_details.get("executionFailedEventDetails")
            if details is not None and "error" not in details and "cause" not in details:
                details.update(error=None, cause=None)
            raise

    return [
        (StateTask, "_eval_body", _task_body),
        (BranchWorker, "stop", stop),
        (BranchesDecl, "_eval_body", _branches_body),
        (EventManager, "add_event", add_event),
    ]


def _frames(env: Any) -> Iterator[Any]:
    """An environment and the frames open in it (a Task runs in one), theirs too."""
    yield env
    for frame in list(getattr(env, "_frames", ())):
        yield from _frames(frame)

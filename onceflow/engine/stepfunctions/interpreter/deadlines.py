"""An execution's TimeoutSeconds, a task's TimeoutSeconds and HeartbeatSeconds on one time line,
so that the local time scale never changes which deadline comes first.

AWS: a state machine's `TimeoutSeconds` is "the maximum number of seconds an execution of the state
machine can run. If it runs longer than the specified time, the execution fails with a
States.Timeout Error name" and ends TIMED_OUT
(https://docs.aws.amazon.com/step-functions/latest/dg/statemachine-structure.html); a Task's
`TimeoutSeconds` and `HeartbeatSeconds` fail it with States.Timeout / States.HeartbeatTimeout
(https://docs.aws.amazon.com/step-functions/latest/dg/state-task.html). LocalStack's recording of
AWS timeouts/test_timeouts.snapshot.json test_global_timeout (2024-03-10): a Wait of 60 s under
`TimeoutSeconds: 5` ends TIMED_OUT.

moto measured the execution's deadline in real seconds while the engine's Wait and Retry delays
are scaled (`EmbeddedAws(time_scale=...)`, 0 in tests): a Wait longer than the execution's
TimeoutSeconds took no time, so the execution SUCCEEDED. Here each execution has a time line in
its own seconds: a Wait moves it by the seconds it asks for, whatever it took, and a task waiting
for its callback (`.waitForTaskToken`) moves it by the real time that takes at the time scale's rate
(`time_scale` real seconds per second; 1 when the scale is 0, so that a callback a test sends has
real time to arrive); the engine's own work moves it not at all, so that no time scale turns
milliseconds of work into seconds. A Wait that would pass the execution's deadline waits only
until the deadline (scaled) and times the execution out there; a Task's TimeoutSeconds and
HeartbeatSeconds are real waits of their seconds at the same rate.

Branches and iterations run side by side: each frame (a Parallel branch, a Map worker and its
iterations, a Task's run) has a lane of the time line that begins where its parent stood when the
parent entered its current state (or, for a frame running no states, when the frame was made), and
the parent takes the furthest of its frames' lanes when they close. So a Map's iterations that each
Wait 30 s take 30 s, not 30 s each, however the engine's threads happen to be scheduled; the
iterations one Map worker runs (MaxConcurrency) follow one another on its lane.
Once the execution timed out it stays TIMED_OUT, and what its cut-short branches and iterations
still do is not written to its history (it ends with ExecutionTimedOut, as on AWS).
A Retry's delay moves it by the seconds the Retry asks for, as a Wait does (a delay that would pass
the deadline times the execution out at once), whatever the time scale makes of them: under time
scale 0 a Retry of IntervalSeconds 10 still uses 10 s of a TimeoutSeconds of 5
(docs/TESTING.md, tests/engine/test_deadlines.py).
A redriven execution runs on a new time line (its TimeoutSeconds starts again,
api/redrive_execution.py) at the first run's rate.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from moto.stepfunctions.parser.api import HistoryEventType
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.common.retry.retrier_decl import RetrierDecl
from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
from moto.stepfunctions.parser.asl.component.program.program import Program
from moto.stepfunctions.parser.asl.component.state.exec import execute_state
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.inline_iteration_component import (
    InlineIterationComponent,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.iteration_worker import IterationWorker
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.job import JobPool
from moto.stepfunctions.parser.asl.component.state.exec.state_map.max_concurrency import (
    DEFAULT_MAX_CONCURRENCY_VALUE,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (
    StateTaskServiceCallback,
)
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction
from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint, HeartbeatEndpoint
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.utils import TMP_THREADS

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
TIMELINE = "_onceflow_timeline"  # on an execution's EventManager, which all its frames share
LANE = "_onceflow_lane"  # on an environment (the execution's or a frame): its Lane
RATE = "_onceflow_rate"  # on an execution's EventManager: the rate of its time line
SIDE_BY_SIDE = "_onceflow_side_by_side"  # on a Map's JobPool: every iteration has a worker of its own


def moto_needs() -> list[Need]:
    return [
        need(Program, "eval", "env"),
        need(EvalComponent, "eval", "env"),
        need(WaitFunction, "_wait_interval", "env", "wait_seconds"),
        need(execute_state, "threading"),  # _evaluate_with_timeout waits on a threading.Event for TimeoutSeconds
        need(CallbackEndpoint, "wait", "timeout"),
        need(HeartbeatEndpoint, "clear_and_wait"),
        need(CommonStateField, "eval", "env"),
        need(Environment, "open_frame", "event_history_context"),
        need(Environment, "open_inner_frame", "event_history_context"),
        need(Environment, "close_frame", "frame"),
        need(IterationWorker, "_eval_pool", "job", "worker_frame"),
        need(InlineIterationComponent, "_launch_worker", "env", "eval_input", "job_pool"),
        need(Environment, "set_error", "error"),
        need(StateTaskServiceCallback, "_eval_wait_for_task_token", "env"),
        need(RetrierDecl, "_eval_body", "env"),
        need(retrier_decl, "time"),  # its sleep: a Retry's delay
        need(JobPool, "__init__", "job_program", "job_inputs"),  # sets _jobs_number, the count of its items
        need(EventManager, "add_event", "context", "event_type"),
    ]


class Rate:
    """Real seconds per second of an execution's time line: the time scale, or 1 when it is 0."""

    def __init__(self, clock: Any):
        self._clock = clock

    def __call__(self) -> float:
        scale = float(getattr(self._clock, "time_scale", 0.0) or 0.0)
        return scale if scale > 0 else 1.0


class Lane:
    """A frame's place on its execution's time line, in the execution's seconds."""

    __slots__ = ("at", "entered")

    def __init__(self, at: float):
        self.at = at
        self.entered: float | None = None  # `at` when the frame entered its current state

    def fork_point(self) -> float:
        return self.at if self.entered is None else self.entered


class Timeline:
    """One execution's seconds, and its deadline (TimeoutSeconds) on them. They move by the Waits'
    seconds and, while a task waits for its callback, by the real time that takes at the rate; the
    engine's own work takes none of them."""

    def __init__(self, deadline: float, rate: float, root: Any):
        self.deadline = deadline
        self.root_lane = Lane(0.0)
        self.timed_out = False
        self._rate = rate
        self._root = root
        self._waiting: dict[int, tuple[Lane, float]] = {}  # lanes in a callback wait, since when (real)
        self._ended = False
        self._changed = threading.Condition()

    def now(self, lane: Lane) -> float:
        waiting = self._waiting.get(id(lane))
        return lane.at if waiting is None else lane.at + (time.monotonic() - waiting[1]) / self._rate

    def _furthest(self) -> float:
        return max([self.root_lane.at] + [self.now(lane) for lane, _ in list(self._waiting.values())])

    def moved(self, lane: Lane, at: float) -> None:
        """The lane has come to `at` (a Wait ended, a frame closed). The execution's thread, waiting
        in ended_in_time, is woken only when the line moved: every Task's frame closes where it
        began (the engine's work takes no time of the line), and waking it for nothing cost a thread
        switch per state."""
        with self._changed:
            if at > lane.at:
                lane.at = at
                self._changed.notify_all()

    def waiting(self, lane: Lane, begins: bool) -> None:
        """A task of the lane begins (or ends) waiting for its callback: real time counts meanwhile."""
        with self._changed:
            if begins:
                self._waiting[id(lane)] = (lane, time.monotonic())
            elif id(lane) in self._waiting:
                lane.at = self.now(lane)
                del self._waiting[id(lane)]
            self._changed.notify_all()

    def time_out(self, lane: Lane) -> None:
        """The deadline came first: the execution times out where it stands."""
        self.moved(lane, self.deadline)
        self.timed_out = True
        self._root.set_timed_out()

    def end(self) -> None:
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def ended_in_time(self) -> bool:
        """Wait (yielding) until the execution ends or its deadline passes; True when it ended first.
        Only a callback wait moves the time line while nothing notifies: the wait is bounded then."""
        with self._changed:
            while not self._ended:
                left = self.deadline - self._furthest()
                if left <= 0:
                    return False
                self._changed.wait(left * self._rate if self._waiting else None)
            return True


def run_on_time_line(env: Any, timeout_seconds: float, rate: float, body: Callable[[], None]) -> None:
    """Run an execution's program (`body`, on a thread of its own) on a new time line whose deadline is
    its TimeoutSeconds; time the execution out when the line reaches the deadline first."""
    timeline = Timeline(timeout_seconds, rate, env)
    setattr(env.event_manager, TIMELINE, timeline)
    env.__dict__[LANE] = timeline.root_lane

    def run() -> None:
        try:
            body()
        finally:
            timeline.end()

    worker = threading.Thread(target=run, daemon=True, name="onceflow-execution")
    TMP_THREADS.append(worker)
    worker.start()
    if not timeline.ended_in_time():
        timeline.timed_out = True
        env.set_timed_out()


def rate_of(event_manager: Any) -> float:
    """The rate an execution's first run had (1 when it had no deadline)."""
    return float(getattr(event_manager, RATE, 1.0))


def timeline_of(env: Any) -> Timeline | None:
    return getattr(env.event_manager, TIMELINE, None)


def forget(event_manager: Any) -> None:
    """An execution runs again on this history (a redrive): the ended run's time line is over."""
    event_manager.__dict__.pop(TIMELINE, None)


def lane_of(env: Any) -> Lane | None:
    return env.__dict__.get(LANE)


class _ScaledThreading:
    """What execute_state sees as `threading`: its Event's timed wait (a Task's TimeoutSeconds) at the rate."""

    def __init__(self, rate: Rate):
        self._rate = rate

    def Event(self) -> threading.Event:  # noqa: N802 (threading's own name)
        return _ScaledEvent(self._rate)

    def __getattr__(self, name: str) -> Any:
        return getattr(threading, name)


class _ScaledEvent(threading.Event):
    def __init__(self, rate: Rate):
        super().__init__()
        self._rate = rate

    def wait(self, timeout: float | None = None) -> bool:
        return super().wait(None if timeout is None else timeout * self._rate())


_retrying = threading.local()  # the environment whose Retry delay this thread is sleeping


class _RetryTime:
    """What a retrier sees as `time`: its delay moves the time line by the seconds it asks for, as a
    Wait does; a delay that would pass the deadline times the execution out at once."""

    def __init__(self, inner: Any):
        self._inner = inner

    def sleep(self, seconds: float) -> None:
        env = getattr(_retrying, "env", None)
        timeline = timeline_of(env) if env is not None else None
        lane = lane_of(env) if env is not None else None
        if timeline is None or lane is None:
            self._inner.sleep(seconds)
            return
        began = timeline.now(lane)
        if began + seconds >= timeline.deadline:
            timeline.time_out(lane)
            return
        self._inner.sleep(seconds)
        timeline.moved(lane, began + seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def patches(before: Sequence[Patch] = (), clock: Any = None) -> list[Patch]:
    rate = Rate(clock)
    original_eval = current(before, Program, "eval")
    original_state_eval = current(before, CommonStateField, "eval")
    original_wait = current(before, WaitFunction, "_wait_interval")
    original_callback_wait = current(before, CallbackEndpoint, "wait")
    original_open = current(before, Environment, "open_frame")
    original_open_inner = current(before, Environment, "open_inner_frame")
    original_close = current(before, Environment, "close_frame")
    original_pool = current(before, IterationWorker, "_eval_pool")
    original_launch = current(before, InlineIterationComponent, "_launch_worker")
    original_set_error = current(before, Environment, "set_error")
    original_token_wait = current(before, StateTaskServiceCallback, "_eval_wait_for_task_token")
    original_retrier = current(before, RetrierDecl, "_eval_body")
    original_add_event = current(before, EventManager, "add_event")

    def eval_program(self: Program, env: Any) -> None:
        if env.is_frame() or self.timeout_seconds is None:  # a branch, an iteration: the execution's line
            return original_eval(self, env)
        env.next_state_name = self.start_at.start_at_name
        setattr(env.event_manager, RATE, rate())  # a redrive of the execution runs at the same rate
        run_on_time_line(env, self.timeout_seconds.timeout_seconds, rate(), lambda: EvalComponent.eval(self, env))

    def set_error(self: Environment, error: Any) -> None:
        timeline = timeline_of(self)
        if timeline is not None and timeline.timed_out:  # a branch or iteration failing as it is cut short
            return
        original_set_error(self, error)

    def add_event(self: EventManager, context: Any, event_type: Any, *args: Any, **kwargs: Any) -> int:
        timeline: Timeline | None = getattr(self, TIMELINE, None)
        if timeline is not None and timeline.timed_out and event_type != HistoryEventType.ExecutionTimedOut:
            return context.last_published_event_id  # what the cut-short branches still do is not history
        return original_add_event(self, context, event_type, *args, **kwargs)

    def eval_state(self: CommonStateField, env: Any) -> None:
        lane = lane_of(env)
        if lane is not None:
            lane.entered = lane.at
        original_state_eval(self, env)

    def wait_interval(self: WaitFunction, env: Any, wait_seconds: float) -> None:
        timeline, lane = timeline_of(env), lane_of(env)
        if timeline is None or lane is None:
            return original_wait(self, env, wait_seconds)
        began = timeline.now(lane)
        if began + wait_seconds < timeline.deadline:
            original_wait(self, env, wait_seconds)
            timeline.moved(lane, began + wait_seconds)
            return
        original_wait(self, env, max(timeline.deadline - began, 0))
        timeline.time_out(lane)

    def _forked(parent: Any, frame: Any) -> Any:
        lane = lane_of(parent)
        if lane is not None:
            forked = frame.__dict__[LANE] = Lane(lane.fork_point())
            forked.entered = forked.at  # its own frames begin where it began (a Map's workers)
        return frame

    def forking(original_open_any: Any) -> Any:
        def opened(self: Environment, event_history_context: Any = None) -> Any:
            return _forked(self, original_open_any(self, event_history_context=event_history_context))

        return opened

    def close_frame(self: Environment, frame: Any) -> None:
        original_close(self, frame)
        timeline, lane, closed = timeline_of(self), lane_of(self), lane_of(frame)
        if timeline is not None and lane is not None and closed is not None:
            timeline.moved(lane, closed.at)

    def launch_worker(self: InlineIterationComponent, env: Any, eval_input: Any, job_pool: Any) -> Any:
        limit = eval_input.max_concurrency
        # The pool's count: a Distributed Map's items come from its ItemReader, not eval_input.input_items.
        side_by_side = limit == DEFAULT_MAX_CONCURRENCY_VALUE or limit >= job_pool._jobs_number
        job_pool.__dict__[SIDE_BY_SIDE] = side_by_side
        return original_launch(self, env=env, eval_input=eval_input, job_pool=job_pool)

    def eval_pool(self: IterationWorker, job: Any, worker_frame: Any) -> None:
        lane = lane_of(worker_frame)
        if lane is not None and not self._job_pool.__dict__.get(SIDE_BY_SIDE, False):
            lane.entered = None  # MaxConcurrency: the iterations a worker runs follow one another
        original_pool(self, job=job, worker_frame=worker_frame)

    def real_time_counts(original: Any) -> Any:
        """`original(self, env, ...)` with the real time it takes on the env's lane (at the rate)."""

        def counted(self: Any, env: Any, *args: Any, **kwargs: Any) -> Any:
            timeline, lane = timeline_of(env), lane_of(env)
            if timeline is None or lane is None:
                return original(self, env, *args, **kwargs)
            timeline.waiting(lane, begins=True)
            try:
                return original(self, env, *args, **kwargs)
            finally:
                timeline.waiting(lane, begins=False)

        return counted

    def retrier_body(self: RetrierDecl, env: Any) -> None:
        _retrying.env = env  # the retrier's sleep (_RetryTime) moves this env's lane
        try:
            original_retrier(self, env)
        finally:
            _retrying.env = None

    def callback_wait(self: CallbackEndpoint, timeout: float | None = None) -> Any:
        return original_callback_wait(self, timeout=None if timeout is None else timeout * rate())

    def heartbeat_wait(self: HeartbeatEndpoint) -> bool:
        with self._mutex:
            if self._next_heartbeat_event.is_set():
                self._next_heartbeat_event.clear()
                return True
        return self._next_heartbeat_event.wait(timeout=self._heartbeat_seconds * rate())

    return [
        (Program, "eval", eval_program),
        (CommonStateField, "eval", eval_state),
        (WaitFunction, "_wait_interval", wait_interval),
        (Environment, "open_frame", forking(original_open)),
        (Environment, "open_inner_frame", forking(original_open_inner)),
        (Environment, "close_frame", close_frame),
        (IterationWorker, "_eval_pool", eval_pool),
        (InlineIterationComponent, "_launch_worker", launch_worker),
        (Environment, "set_error", set_error),
        (StateTaskServiceCallback, "_eval_wait_for_task_token", real_time_counts(original_token_wait)),
        (RetrierDecl, "_eval_body", retrier_body),
        (retrier_decl, "time", _RetryTime(current(before, retrier_decl, "time"))),
        (EventManager, "add_event", add_event),
        (execute_state, "threading", _ScaledThreading(rate)),
        (CallbackEndpoint, "wait", callback_wait),
        (HeartbeatEndpoint, "clear_and_wait", heartbeat_wait),
    ]

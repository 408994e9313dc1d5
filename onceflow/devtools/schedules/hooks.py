"""Deterministic crashes: the starter dying mid-batch, an execution stopped or timed out at a state.

- `StarterCrashes` wraps the starter's invocation. When armed, the next invocation dies after
  handing `after_starts` records to StartExecution, as a Lambda that times out or runs out of
  memory would: nothing of the batch is acknowledged, so SQS delivers all of it again.
- `ExecutionInterrupts` patches moto's state evaluation (`CommonStateField._eval_body`, on the
  execution's worker thread) so that an armed (event_id, state) pair acts as the execution enters
  that state, before the state does anything:
  - "stop": the real `StopExecution` API is called, as an operator would (status ABORTED);
  - "timeout": the execution's program state is set to timed out, which is what moto does when a
    state machine's `TimeoutSeconds` runs out (status TIMED_OUT, an ExecutionTimedOut event).
    moto measures TimeoutSeconds in real time (a thread join), so waiting for it would be neither
    quick nor deterministic; this takes the same transition at a chosen state.
  The call is made from the execution's thread, which holds no request lock, so it cannot block
  the embedded AWS. Each armed interrupt fires once.

EXPRESS (the starter waits on StartSyncExecution): StopExecution is Standard-only
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html), so an
interrupt always times the execution out (the StartSyncExecution response says TIMED_OUT); an
armed crash that comes before a record's execution kills the starter while it waits on it: the
execution was started and runs to its end on its own, as AWS runs it after its caller is gone.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.parser.asl.eval.environment import Environment

from onceflow.devtools.schedules.model import How
from onceflow.engine.moto_shape import Need, check, need
from onceflow.local.event_source import Invoke

STOP_ERROR = "Onceflow.OperatorStopped"


class StarterKilled(BaseException):
    """Raised inside the starter: a BaseException, so its per-record error handling cannot catch it."""


class StarterCrashed(RuntimeError):
    """What the emulated Lambda service sees: the invocation died."""


@dataclass
class StarterCrashes:
    """Arms crashes of the next starter invocations; counts what happened."""

    armed: list[int] = field(default_factory=list)
    crashed_before_start: int = 0  # crashes before some record of the batch reached StartExecution
    crashed_after_start: int = 0  # crashes after every record was handed over, before the ack
    # EXPRESS: executions left running by a starter that died while waiting on them.
    orphans: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _invocation: threading.local = field(default_factory=threading.local)  # StartExecutions left, per thread

    def arm(self, after_starts: int) -> None:
        with self._lock:
            self.armed.append(after_starts)

    def disarm(self) -> None:
        with self._lock:
            self.armed.clear()

    def wrap(self, invoke: Invoke) -> Invoke:
        def invoke_and_maybe_crash(event: dict[str, Any]) -> dict[str, Any]:
            with self._lock:
                after = self.armed.pop(0) if self.armed else None
            if after is None:
                return invoke(event)
            self._invocation.starts_left = after
            try:
                invoke(event)
            except StarterKilled as killed:
                with self._lock:
                    self.crashed_before_start += 1
                raise StarterCrashed(str(killed)) from None
            finally:
                self._invocation.starts_left = None
            with self._lock:
                self.crashed_after_start += 1
            raise StarterCrashed(f"starter died after handing over {len(event['Records'])} records, before the ack")

        return invoke_and_maybe_crash

    def _count_start(self) -> bool:
        """Whether this invocation may hand over one more record (False: it dies now)."""
        left = getattr(self._invocation, "starts_left", None)
        if left is None:
            return True
        if left <= 0:
            return False
        self._invocation.starts_left = left - 1
        return True

    def _orphan(self, run: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        def run_to_its_end() -> None:
            with suppress(Exception):  # nobody is left to hear the answer
                run(*args, **kwargs)

        thread = threading.Thread(target=run_to_its_end, name="orphaned-sync-execution", daemon=True)
        with self._lock:
            self.orphans.append(thread)
        thread.start()

    def join_orphans(self, timeout: float) -> int:
        """Wait for the executions dead starters left running; returns how many are still running."""
        with self._lock:
            orphans, self.orphans = self.orphans, []
        for thread in orphans:
            thread.join(timeout)
        still = [thread for thread in orphans if thread.is_alive()]
        with self._lock:
            self.orphans.extend(still)
        return len(still)

    @contextmanager
    def counting_starts(self, starter_module: ModuleType) -> Iterator[None]:
        """Let an armed crash fire before the StartExecution that would exceed its count (EXPRESS:
        while the starter waits on that StartSyncExecution)."""
        original: Callable[..., Any] = starter_module.start_execution
        original_sync: Callable[..., Any] = starter_module.run_sync_execution
        sync_module = sys.modules[original_sync.__module__]
        original_sleep = sync_module.sleep

        def start_execution(*args: Any, **kwargs: Any) -> Any:
            if not self._count_start():
                raise StarterKilled("starter died before StartExecution")
            return original(*args, **kwargs)

        def run_sync_execution(*args: Any, **kwargs: Any) -> Any:
            if not self._count_start():
                self._orphan(original_sync, *args, **kwargs)
                raise StarterKilled("starter died while waiting on StartSyncExecution")
            return original_sync(*args, **kwargs)

        starter_module.start_execution = start_execution
        starter_module.run_sync_execution = run_sync_execution
        sync_module.sleep = lambda seconds: None  # the starter's throttling backoff: no real sleep in a run
        try:
            yield
        finally:
            starter_module.start_execution = original
            starter_module.run_sync_execution = original_sync
            sync_module.sleep = original_sleep


@dataclass(frozen=True)
class Fired:
    event_id: str
    state: str
    how: How
    execution_arn: str


def execution_of(env: Any) -> tuple[str, str | None]:
    """The execution ARN and event_id of the environment a state is evaluated in."""
    execution = env.states.context_object.context_object_data["Execution"]
    document = execution.get("Input")
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            document = None
    found = document.get("event_id") if isinstance(document, dict) else None
    return execution["Id"], found if isinstance(found, str) else None


def moto_needs() -> list[Need]:
    """The moto internals the interrupts use."""
    return [
        need(CommonStateField, "_eval_body", "env"),
        *(need(Environment, name) for name in ("is_frame", "is_running", "set_timed_out")),
    ]


def check_moto_shape() -> None:
    """Fail loudly on a moto these interrupts were not written for (onceflow/engine/moto_shape.py)."""
    check(moto_needs(), __name__)


class ExecutionInterrupts:
    """Stop or time out the next execution of an event that enters a state (armed, one-shot)."""

    def __init__(self, sfn: Any, express: bool = False):
        self._sfn = sfn
        self._express = express
        self._armed: list[tuple[str, str, How]] = []
        self._lock = threading.Lock()
        self.fired: list[Fired] = []

    def arm(self, event_id: str, state: str, how: How) -> None:
        with self._lock:
            self._armed.append((event_id, state, how))

    def disarm(self) -> None:
        with self._lock:
            self._armed.clear()

    @property
    def pending(self) -> int:
        return len(self._armed)

    def _take(self, event_id: str | None, state: str) -> How | None:
        with self._lock:
            for index, (armed_event, armed_state, how) in enumerate(self._armed):
                if armed_event == event_id and armed_state == state:
                    del self._armed[index]
                    return how
        return None

    def _act(self, env: Any, state: str) -> None:
        arn, found = execution_of(env)
        how = self._take(found, state)
        if how is None:
            return
        if self._express:
            how = "timeout"
        if how == "stop":
            self._sfn.stop_execution(
                executionArn=arn, error=STOP_ERROR, cause=f"stopped by an operator on entering {state!r}"
            )
        else:
            env.set_timed_out()
        self.fired.append(Fired(found or "", state, how, arn))

    @contextmanager
    def installed(self) -> Iterator[ExecutionInterrupts]:
        check_moto_shape()
        original = CommonStateField._eval_body
        interrupts = self

        def _eval_body(state: CommonStateField, env: Any) -> None:
            if not env.is_frame():
                interrupts._act(env, state.name)
                if not env.is_running():
                    return  # stopped or timed out on entering: the state never runs
            original(state, env)

        CommonStateField._eval_body = _eval_body  # type: ignore[method-assign]
        try:
            yield self
        finally:
            CommonStateField._eval_body = original  # type: ignore[method-assign]

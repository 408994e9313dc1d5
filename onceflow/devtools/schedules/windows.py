"""Failure windows of a schedule: counted faults (onceflow.local.faults) opened and closed by steps.

Faults patch moto backend methods and restore them on exit, so two windows on the same method must
nest. A window opened while another one on the same method is open closes that one first. Lost
status change events are no patch: the window gives the emulated safety net a StatusEventLoss.

"start_execution" denies StartExecution (EXPRESS: StartSyncExecution), AccessDeniedException: the
record is reported failed and SQS redelivers it. "start_throttled" throttles it, ThrottlingException
(Step Functions over its token bucket): the starter waits it out in the invocation, then, on a
standard source, re-queues the record as a new message (no receive spent); a FIFO source's record
is reported failed, holds its group, and the group is kept in flight longer each round
(starter/throttling.py).
"""

from __future__ import annotations

from collections import Counter
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from onceflow.devtools.schedules.model import Open
from onceflow.local import faults
from onceflow.local.safety_net import SafetyNet, StatusEventLoss


class StatusEventsLost(AbstractContextManager["StatusEventsLost"]):
    """While open, the safety net loses status change events (all, or the first `times`), counted."""

    def __init__(self, net: SafetyNet, times: int | None):
        self._net = net
        self._previous: StatusEventLoss | None = None
        self.loss = StatusEventLoss(fraction=1.0, limit=times)
        self.open = True

    @property
    def injected(self) -> int:
        return self.loss.lost

    def __enter__(self) -> StatusEventsLost:
        self._previous, self._net.loss = self._net.loss, self  # type: ignore[assignment]
        return self

    def drops(self) -> bool:
        """Lost in this window, or by the loss that was in force before it (a run-wide one)."""
        return self.loss.drops() or (self._previous is not None and self._previous.drops())

    def __exit__(self, *exc: Any) -> None:
        self._net.loss = self._previous
        self.open = False


def _fault(
    spec: Open, dead_letter_queue_name: str, net: SafetyNet, express: bool = False
) -> tuple[str, AbstractContextManager[Any]]:
    """The method a window patches (its target) and the fault's context manager."""
    operation = "start_sync_execution" if express else "start_execution"
    if spec.fault == "start_execution":
        return f"stepfunctions.{operation}", faults.start_execution_failures(times=spec.times, express=express)
    if spec.fault == "start_throttled":  # at the endpoint's response: a method of its own
        return f"stepfunctions.{operation}:response", faults.step_functions_throttling(spec.times, operation)
    if spec.fault == "status_events_lost":
        return "safety-net.loss", StatusEventsLost(net, spec.times)
    if spec.fault == "sns_publish":
        return "sns.publish", faults.sns_publish_failures(times=spec.times)
    if spec.fault == "record_throttled":
        return "dynamodb.transact_write_items", faults.dynamodb_throttling(times=spec.times)
    if spec.fault == "record_conflict":
        return "dynamodb.transact_write_items", faults.dynamodb_transaction_conflicts(times=spec.times)
    if spec.fault == "mark_sent_throttled":
        return "dynamodb.update_item", faults.dynamodb_throttling(
            times=spec.times, operation="update_item", table_contains="ProcessedEventsTable"
        )
    if spec.fault == "dead_letter_send":
        return "sqs.send_message", faults.sqs_send_failures(dead_letter_queue_name, times=spec.times)
    raise ValueError(f"unknown fault {spec.fault!r}")


@dataclass
class _OpenWindow:
    spec: Open
    target: str
    manager: AbstractContextManager[Any]
    fault: Any  # faults.Fault or StatusEventsLost: counts `injected`, has `open`
    steps_left: int


class FaultWindows:
    def __init__(self, dead_letter_queue_url: str, safety_net: SafetyNet, express: bool = False):
        self._express = express
        self._dead_letter_queue_name = dead_letter_queue_url.rstrip("/").rsplit("/", 1)[-1]
        self._safety_net = safety_net
        self._open: list[_OpenWindow] = []
        self.injected: Counter[str] = Counter()  # fault name -> failures injected
        self.opened: Counter[str] = Counter()

    def open(self, spec: Open) -> None:
        target, manager = _fault(spec, self._dead_letter_queue_name, self._safety_net, self._express)
        for window in [w for w in self._open if w.target == target]:
            self._close(window)
        fault = manager.__enter__()
        self._open.append(_OpenWindow(spec, target, manager, fault, spec.steps))
        self.opened[spec.fault] += 1

    def tick(self) -> None:
        """A step that ran the pipeline went by: close the windows whose steps are over."""
        for window in list(self._open):
            window.steps_left -= 1
            if window.steps_left <= 0:
                self._close(window)

    def throttles_starts_for_good(self) -> bool:
        """A "start_throttled" window with no count: every StartExecution/StartSyncExecution throttled until it closes."""
        return any(w.spec.fault == "start_throttled" and w.spec.times is None and w.fault.open for w in self._open)

    def is_open(self, fault: str) -> bool:
        return any(w.spec.fault == fault and w.fault.open for w in self._open)

    def close_all(self) -> None:
        for window in reversed(list(self._open)):
            self._close(window)

    def _close(self, window: _OpenWindow) -> None:
        self._open.remove(window)
        window.manager.__exit__(None, None, None)
        self.injected[window.spec.fault] += window.fault.injected

    def __enter__(self) -> FaultWindows:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close_all()

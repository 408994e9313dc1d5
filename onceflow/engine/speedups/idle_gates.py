"""The `idle_gates` speed-up: a long-running `onceflow start` asks the engine, without a request,
whether its background round has anything to look at.

Every 0.2 s `onceflow start` receives from the source queue, sweeps the executions for the safety
net (a ListExecutions page and a DescribeExecution per ended one) and drains the notification
inbox: three requests through moto's whole dispatch even when nothing happened, about a third of
the server's GIL time while a client in another process read executions (`onceflow trace`, issue
21), competing with it. Two facts of the engine say when a step would find nothing:

- a queue that holds no message at all (visible, in flight or delayed) answers ReceiveMessage with
  none: the receive is left out (a queue that holds any message is received from, as before);
- the safety net's sweep reads the executions' statuses and dates, which change only when an
  execution is created or its status is set (moto's `Execution.exec_status`, set at its start, its
  end, a stop, a redrive): a count of those settings (`execution_changes`) that has not moved
  since the last sweep began means that sweep would list what the last one listed and report
  nothing new. The sweep's guarantees are its own (onceflow/local/safety_net.py): it still runs
  after every change, with the same horizon and the same report.

Either read is conservative: a queue or count the engine cannot find says "look".

The same count says when a busy spell is over: after executions changed, once QUIET_ROUNDS rounds in a
row saw no change, the round makes the garbage collector's full collection then (`gc.collect()`, once
per spell) instead of leaving it to whichever request next allocates. A full collection of an engine
that ran 20,000 executions takes about a second, and it was due at the end of a fill: the first
`onceflow trace` after one paid it (11.1 s against 10.4 s for the next, its only full collection).
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from moto.sqs.models import Queue, sqs_backends
from moto.stepfunctions.parser.backend import execution as parser_execution

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import IDLE_GATES
from onceflow.engine.stepfunctions.api import qualified_arns

Patch = tuple[Any, str, Any]
SPEEDUPS = (IDLE_GATES,)
_CHANGES = itertools.count(1)
_LAST = [0]  # the latest value drawn from _CHANGES (itertools.count is atomic under the GIL)
_BY_MACHINE: dict[str, int] = {}  # unqualified state machine ARN -> the latest value drawn for one of its
QUIET_ROUNDS = 5  # rounds without an execution change after which a busy spell is over (1 s in `start`)


def moto_needs() -> list[Need]:
    return [
        need(parser_execution.Execution, "__init__", "state_machine"),  # sets it, then exec_status (None)
        need(Queue, "__init__"),  # keeps its messages, of every state, in `_messages`
        need(sqs_backends, "get"),  # account -> region -> backend, whose `queues` are by name
    ]


class _CountedStatus:
    """`Execution.exec_status`, kept in the instance's dict as before; each setting is counted."""

    def __get__(self, execution: Any, owner: type | None = None) -> Any:
        if execution is None:
            return self
        return execution.__dict__.get("exec_status")

    def __set__(self, execution: Any, value: Any) -> None:
        execution.__dict__["exec_status"] = value
        _LAST[0] = change = next(_CHANGES)
        machine = getattr(execution.__dict__.get("state_machine"), "arn", None)
        if machine:
            _BY_MACHINE[qualified_arns.split(machine)[0]] = change


def patches() -> list[Patch]:
    return [(parser_execution.Execution, "exec_status", _CountedStatus())]


def execution_changes(state_machine_arn: str | None = None) -> int:
    """How many times an execution's status was set (creation included) since the engine loaded; with
    `state_machine_arn`, a count that moves only when one of that state machine's executions' did."""
    if state_machine_arn is None:
        return _LAST[0]
    return _BY_MACHINE.get(qualified_arns.split(state_machine_arn)[0], 0)


def queue_is_empty(queue_url: str, region: str) -> bool:
    """The engine's queue at `queue_url` (`.../<account>/<name>`, in `region`) holds no message at
    all; False when it cannot be found."""
    path = urlsplit(queue_url).path.strip("/").split("/")
    if len(path) != 2:
        return False
    account, name = path
    backends = sqs_backends.get(account)
    backend = backends.get(region) if backends is not None else None
    queue = backend.queues.get(name) if backend is not None else None
    return queue is not None and not queue._messages


class IdleGates:
    """What the background round asks before each step; with `enabled` False every answer is
    "look" (the idle_gates speed-up switched off)."""

    def __init__(
        self,
        enabled: bool,
        region: str,
        collect: Callable[[], object] = gc.collect,
        state_machine_arn: str | None = None,
    ):
        """`state_machine_arn`: the state machine the sweep lists (its executions' changes gate it)."""
        self.enabled = enabled
        self.region = region
        self.state_machine_arn = state_machine_arn
        self._swept_at: int | None = None  # execution_changes() when the last sweep began
        self._collect = collect
        self._changes_seen = execution_changes()
        self._quiet_rounds = 0
        self._collection_due = False

    def may_receive(self, queue_url: str) -> bool:
        return not (self.enabled and queue_is_empty(queue_url, self.region))

    def sweep_begins(self) -> bool:
        """True: sweep now (something changed since the last sweep began, or gates are off)."""
        changes = execution_changes(self.state_machine_arn)
        if self.enabled and changes == self._swept_at:
            return False
        self._swept_at = changes
        return True

    def sweep_failed(self) -> None:
        """The sweep that began raised: the next round sweeps again."""
        self._swept_at = None

    def collect_when_quiet(self) -> bool:
        """Called once per round: True when this round made the full collection a busy spell left due
        (executions changed, then QUIET_ROUNDS rounds saw none); never with the gates off."""
        changes = execution_changes()
        if changes != self._changes_seen:
            self._changes_seen, self._quiet_rounds, self._collection_due = changes, 0, True
            return False
        self._quiet_rounds += 1
        if not (self.enabled and self._collection_due and self._quiet_rounds >= QUIET_ROUNDS):
            return False
        self._collection_due = False
        self._collect()
        return True

"""Fault schedules: a list of steps over deliveries, crashes and failure windows, as data.

A schedule is what a property test generates and shrinks, and what a regression file stores, so
every step is a small frozen dataclass with a JSON form (`{"step": "send", "event": 0, ...}`).
Events are numbered: event `k` is the order `order-k` with a fixed payload, so a schedule needs no
other data to be replayed.

Steps, in the order a person reads a schedule:

- `Send(event, copies)`: the producer puts `copies` messages with the event's body on the queue in
  one request (copies > 1: concurrent duplicates, handled in one batch). Sending an event already
  sent is a producer resend: a new message id, the same body.
- `SendConflict(event)`: another payload under the same event_id (the amount differs).
- `SendPoison(kind)`: a message that can never succeed (not JSON, no event_id, invalid field).
- `Redeliver(pick)`: SQS hands a record it already delivered and the starter acknowledged to the
  starter again (same message id, same receipt); `pick` chooses among those acknowledged so far.
- `CrashSubscriber(where)`: the example subscriber's next invocation dies `before_write` or
  `after_write_before_ack` (its batch becomes visible again: each record is then a duplicate).
- `RedeliverNotification(pick)`: SQS hands the subscriber a notification it already applied and
  acknowledged (a duplicate after the acknowledgement); `pick` chooses among those acknowledged.
- `CrashStarter(after_starts)`: the next starter invocation dies after handing `after_starts`
  records to StartExecution (0: before any StartExecution; at least the batch size: after all of
  them, before SQS is told what succeeded). The batch becomes visible again.
- `Interrupt(event, state, how)`: the next execution of `event` that enters `state` is stopped by
  an operator (`how="stop"`, ABORTED) or runs out of time (`how="timeout"`, TIMED_OUT) there.
- `Open(fault, times, steps)`: a failure window, open for the next `steps` steps that run the
  pipeline (process, recover, redeliver): `times` calls fail (None: every call, an outage).
- `Expire(days)`: DynamoDB TTL runs `days` later (onceflow.engine.dynamodb.ttl): every item whose
  `ttl` has passed by then is deleted, as sent state records are after RecordRetentionDays (35 by
  default: `days` 36). A pending record has no `ttl` and never expires.
- `Process()`: the event source runs until the source queue is empty and no execution runs.
- `Recover()`: an operator acts mid-run: the safety net's pending events are delivered, the
  reconciler's schedule runs and the dead-letter queue is redriven (except poison and payload
  conflicts).

After the last step every window closes, armed crashes and interrupts are dropped, and recovery
runs (see runner.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Literal

from onceflow.ops import workflow

# State names of statemachine/pipeline.asl.json; the runner checks them against the deployed definition.
STATE_RECORD = workflow.RECORD
STATE_LOOKUP = workflow.LOOK_UP
STATE_PUBLISH = workflow.PUBLISH
STATE_MARK_SENT = workflow.MARK_SENT
STATE_DEAD_LETTER = "Send to dead-letter queue"

# Crash boundaries of an execution, named for the gap they stop in: entering a state is the moment
# after the previous one ended. Publish goes straight to Mark as sent, so "after Publish" and
# "before MarkSent" are the same gap. Mark as sent ends the execution: there is no gap after it.
BOUNDARIES: dict[str, str] = {
    "before_record": STATE_RECORD,
    "after_record": STATE_PUBLISH,
    "after_publish_before_mark_sent": STATE_MARK_SENT,
    "before_lookup": STATE_LOOKUP,
    "before_dead_letter": STATE_DEAD_LETTER,
}
INTERRUPTIBLE_STATES: tuple[str, ...] = tuple(BOUNDARIES.values())

How = Literal["stop", "timeout"]
# Failure windows: name -> what fails (see windows.py for the injected errors).
FAULTS: tuple[str, ...] = (
    "sns_publish",  # SNS Publish throttled (the state machine retries 5 times)
    "record_throttled",  # TransactWriteItems throttled (retried 6 times)
    "record_conflict",  # TransactWriteItems cancelled by a conflicting transaction (re-recorded 3 times)
    "mark_sent_throttled",  # UpdateItem of Mark as sent throttled (retried 6 times)
    "start_execution",  # StartExecution (EXPRESS: StartSyncExecution) denied (reported failed; SQS redelivers)
    # StartExecution (EXPRESS: StartSyncExecution) throttled, ThrottlingException: the starter waits it
    # out in the invocation, then re-queues a standard source's record as a new message (FIFO: reports
    # it failed, holding its group in flight longer each round); times=None throttles every call for
    # more rounds than maxReceiveCount (FIFO: that many of the queue's visibility timeouts).
    "start_throttled",
    "dead_letter_send",  # SendMessage to the dead-letter queue fails (state machine, starter, reconciler)
    # Step Functions' status change events lost (AWS delivers them best effort): times=None loses
    # every event of the window, times=k the first k. Lost for good: only the reconciler's sweep is left.
    "status_events_lost",
)
# A day more than the template's default RecordRetentionDays: every sent record has expired.
DEFAULT_EXPIRY_DAYS = 36

# Schedule events are the domain's sample with these ids: the same in every app, so a saved schedule replays anywhere.
EVENT_PREFIX = "event-"


def event_id(event: int) -> str:
    return f"{EVENT_PREFIX}{event}"


# A FIFO source's message groups: events alternate between two groups, so a schedule of three
# events has a group of two (order matters there) beside one running in parallel; poison goes into
# the first group, where it must not hold the group's later events back.
FIFO_GROUPS = 2
POISON_GROUP = "group-0"


def message_group(event: int) -> str:
    return f"group-{event % FIFO_GROUPS}"


class Step:
    """Base of the steps: a name for JSON and a one-line description."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        return {"step": self.kind, **asdict(self)}  # type: ignore[call-overload]

    def describe(self) -> str:
        arguments = ", ".join(f"{k}={v!r}" for k, v in asdict(self).items())  # type: ignore[call-overload]
        return f"{self.kind}({arguments})"


@dataclass(frozen=True)
class Send(Step):
    kind: ClassVar[str] = "send"
    event: int
    copies: int = 1


@dataclass(frozen=True)
class SendConflict(Step):
    kind: ClassVar[str] = "send_conflict"
    event: int


@dataclass(frozen=True)
class SendPoison(Step):
    kind: ClassVar[str] = "send_poison"
    poison: int = 0


@dataclass(frozen=True)
class Redeliver(Step):
    kind: ClassVar[str] = "redeliver"
    pick: int = 0


@dataclass(frozen=True)
class CrashStarter(Step):
    kind: ClassVar[str] = "crash_starter"
    after_starts: int = 0


# Where the example subscriber's next invocation dies: before its write (nothing written), or after
# its write and before SQS is told (the batch comes back; each record is then a duplicate).
SUBSCRIBER_CRASHES = ("before_write", "after_write_before_ack")


@dataclass(frozen=True)
class CrashSubscriber(Step):
    kind: ClassVar[str] = "crash_subscriber"
    where: str = "after_write_before_ack"

    def __post_init__(self) -> None:
        if self.where not in SUBSCRIBER_CRASHES:
            raise ValueError(f"cannot crash the subscriber at {self.where!r}: one of {SUBSCRIBER_CRASHES}")


@dataclass(frozen=True)
class RedeliverNotification(Step):
    """SQS hands the subscriber a notification it already applied and acknowledged (the crash
    "after the acknowledgement": a duplicate that arrives later)."""

    kind: ClassVar[str] = "redeliver_notification"
    pick: int = 0


@dataclass(frozen=True)
class Interrupt(Step):
    kind: ClassVar[str] = "interrupt"
    event: int
    state: str
    how: How = "stop"

    def __post_init__(self) -> None:
        if self.state not in INTERRUPTIBLE_STATES:
            raise ValueError(f"cannot interrupt at {self.state!r}: one of {INTERRUPTIBLE_STATES}")
        if self.how not in ("stop", "timeout"):
            raise ValueError(f"how must be 'stop' or 'timeout', not {self.how!r}")


@dataclass(frozen=True)
class Open(Step):
    kind: ClassVar[str] = "open"
    fault: str
    times: int | None = None
    steps: int = 1

    def __post_init__(self) -> None:
        if self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}: one of {FAULTS}")
        if self.steps < 1 or (self.times is not None and self.times < 1):
            raise ValueError("a window lasts at least one step and fails at least one call")


@dataclass(frozen=True)
class Expire(Step):
    kind: ClassVar[str] = "expire"
    days: int = DEFAULT_EXPIRY_DAYS

    def __post_init__(self) -> None:
        if self.days < 1:
            raise ValueError("TTL expiry moves the clock on by at least one day")


@dataclass(frozen=True)
class Process(Step):
    kind: ClassVar[str] = "process"


@dataclass(frozen=True)
class Recover(Step):
    kind: ClassVar[str] = "recover"


# Steps that run pipeline code: a failure window lasts a number of these.
ACTIVE_STEPS: tuple[type[Step], ...] = (Process, Recover, Redeliver, RedeliverNotification)


STEP_TYPES: dict[str, type[Step]] = {
    cls.kind: cls
    for cls in (
        Send,
        SendConflict,
        SendPoison,
        Redeliver,
        CrashStarter,
        CrashSubscriber,
        RedeliverNotification,
        Interrupt,
        Open,
        Expire,
        Process,
        Recover,
    )
}


def step_from_json(data: dict[str, Any]) -> Step:
    data = dict(data)
    kind = data.pop("step", None)
    cls = STEP_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown step {kind!r}: one of {sorted(STEP_TYPES)}")
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"step {kind!r} has no field(s) {sorted(unknown)}")
    return cls(**data)


@dataclass(frozen=True)
class Schedule:
    steps: tuple[Step, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [step.to_json() for step in self.steps]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]]) -> Schedule:
        return cls(tuple(step_from_json(item) for item in data))

    def describe(self) -> str:
        return "; ".join(step.describe() for step in self.steps) or "(no steps)"

    def digest(self) -> str:
        """A short content hash: the name of the schedule's regression file."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def __len__(self) -> int:
        return len(self.steps)

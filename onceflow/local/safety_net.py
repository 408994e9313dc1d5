"""The safety net, emulated: execution status changes routed by the template's EventBridge rule to
the reconciler, and the reconciler's schedule, fast-forwarded.

On AWS, Step Functions sends a "Step Functions Execution Status Change" event to the account's
default event bus whenever a Standard execution changes status, best effort
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-states.html: "in some rare cases
an event might not be delivered"), and `SafetyNetRule` in template.yaml invokes the reconciler
with those of executions that ended outside the workflow's own dead-letter path. Because an
event may be lost, the reconciler also runs on a schedule rule.

moto's Step Functions sends no such events and moto's EventBridge fires no schedules, so:
- `SafetyNet(stack).sweep()` builds, for each execution that has ended since the last sweep, the
  event AWS would send (the same detail fields, input left out when too large, as AWS does), asks
  the rule that moto's CloudFormation deployed from template.yaml whether it matches (moto's own
  event pattern matcher), and invokes the rule's target function with it, as EventBridge invokes
  a Lambda target: asynchronously, retried twice by Lambda on an error, then sent to the
  function's dead-letter queue. A `StatusEventLoss` drops a counted share of the events first.
- `ScheduledRuns(stack).run()` invokes every function that a schedule rule targets with the
  "Scheduled Event" EventBridge would send; the local pipeline calls it when idle.
"""

from __future__ import annotations

import json
import random
import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError
from moto.events.models import EventPattern

from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.engine.events.status_events import event_time, status_change_detail, status_change_event
from onceflow.local.function_runtime import FunctionRuntime
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import TERMINAL
from onceflow_common.status_change import DETAIL_TYPE, MAX_EVENT_DATA_BYTES, SOURCE

__all__ = [
    "DETAIL_TYPE",
    "MAX_EVENT_DATA_BYTES",
    "SOURCE",
    "SafetyNet",
    "ScheduledRuns",
    "StatusEventLoss",
    "scheduled_event",
    "status_change_detail",
]

_RULE_OUTPUT = "SafetyNetRuleName"
# Lambda retries a failed asynchronous invocation twice
# (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
ASYNC_ATTEMPTS = 3
SWEEP_PAGE_SIZE = 25  # ListExecutions per request of a sweep; more pages only when more started since


class SafetyNetError(RuntimeError):
    pass


@dataclass(frozen=True)
class SafetyNetRule:
    """The deployed rule: its name, event pattern and target ARNs."""

    name: str
    pattern: dict[str, Any]
    target_arns: tuple[str, ...]

    def matches(self, event: dict[str, Any]) -> bool:
        """What the embedded EventBridge decides for this event (its own matcher)."""
        return EventPattern.load(json.dumps(self.pattern)).matches_event(event)

    def may_route_a_success(self, state_machine_arn: str) -> bool:
        """Whether a SUCCEEDED execution's status change can match, decided from what a listing tells
        (its state machine; a succeeded execution has no error and no cause); True (describe it and
        see) when the pattern reads any other field of the event."""
        if not _reads_only(self.pattern, SUCCESS_EVENT_FIELDS):
            return True
        return self.matches(
            {
                "source": SOURCE,
                "detail-type": DETAIL_TYPE,
                "detail": {"stateMachineArn": state_machine_arn, "status": "SUCCEEDED", "error": None, "cause": None},
            }
        )


# The fields of a status change event a SUCCEEDED execution's listing decides (by key, level by level).
SUCCESS_EVENT_FIELDS: dict[str, Any] = {
    "source": None,
    "detail-type": None,
    "detail": {"stateMachineArn": None, "status": None, "error": None, "cause": None},
}


def _reads_only(pattern: Any, fields: dict[str, Any] | None) -> bool:
    """The pattern matches on no key outside `fields` (an `$or`'s branches each checked at its level)."""
    if not isinstance(pattern, dict):
        return True  # a list of values (or of matchers) for a field already allowed
    for key, value in pattern.items():
        if key == "$or":
            allowed = all(_reads_only(branch, fields) for branch in value)
        else:
            allowed = fields is not None and key in fields and _reads_only(value, fields[key])
        if not allowed:
            return False
    return True


@dataclass
class StatusEventLoss:
    """A fault: status change events that Step Functions never delivers (`fraction` 1.0: all).

    Counted, so a test can prove the events really were lost. `limit` caps how many are lost.
    """

    fraction: float = 1.0
    limit: int | None = None
    seed: int = 0
    lost: int = 0
    delivered: int = 0
    _rng: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.fraction <= 1.0:
            raise ValueError(f"fraction must be between 0 and 1, not {self.fraction}")
        self._rng = random.Random(self.seed)

    def drops(self) -> bool:
        with self._lock:
            if (self.limit is None or self.lost < self.limit) and self._rng.random() < self.fraction:
                self.lost += 1
                return True
            self.delivered += 1
            return False


@dataclass(frozen=True)
class StatusChange:
    execution_arn: str
    status: str
    error: str | None
    routed: bool  # the rule matched: the event was meant for the rule's target (the reconciler)
    lost: bool = False  # matched, but never delivered (StatusEventLoss)
    failed: bool = False  # the target failed on every attempt; the event went to its dead-letter queue


@dataclass
class SweepReport:
    changes: list[StatusChange] = field(default_factory=list)

    @property
    def routed(self) -> list[StatusChange]:
        return [c for c in self.changes if c.routed]

    @property
    def delivered(self) -> list[StatusChange]:
        return [c for c in self.changes if c.routed and not c.lost]


def find_rule(stack: LocalStack) -> SafetyNetRule:
    """The safety net rule deployed with the stack (named by its `SafetyNetRuleName` output)."""
    name = stack.outputs.get(_RULE_OUTPUT)
    if not name:
        raise SafetyNetError(f"the stack has no {_RULE_OUTPUT} output: template.yaml defines no safety net rule")
    events = stack.client("events")
    rule = events.describe_rule(Name=name)
    targets = events.list_targets_by_rule(Rule=name)["Targets"]
    return SafetyNetRule(name, json.loads(rule["EventPattern"]), tuple(t["Arn"] for t in targets))


class AsyncInvoker:
    """Lambda's asynchronous invocation of an emulated function: retried, then dead-lettered."""

    def __init__(self, stack: LocalStack, runtimes: dict[str, FunctionRuntime]):
        self.stack = stack
        self.runtimes = runtimes
        self.failed_invocations = 0
        self.errors: list[str] = []

    def runtime_for(self, function_arn: str) -> FunctionRuntime:
        name = function_arn.rsplit(":", 1)[-1]
        function = next((f for f in self.stack.functions.values() if f.name == name), None)
        if function is None:
            raise SafetyNetError(f"target {function_arn} is no function of the template")
        if function.logical_id not in self.runtimes:
            self.runtimes[function.logical_id] = FunctionRuntime(self.stack, function.logical_id)
        return self.runtimes[function.logical_id]

    def invoke(self, function_arn: str, event: dict[str, Any]) -> bool:
        """True if an attempt succeeded; else the event is on the function's dead-letter queue."""
        runtime = self.runtime_for(function_arn)
        for _ in range(ASYNC_ATTEMPTS):
            try:
                runtime.invoke(event)
                return True
            except Exception as error:  # what Lambda sees as a function error
                self.errors.append(f"{type(error).__name__}: {error}")
        self.failed_invocations += 1
        queue_url = runtime.function.dead_letter_queue_url
        if queue_url is None:
            return False  # AWS drops it too; the template gives every asynchronous function a DLQ
        # Lambda sends it with the function's execution role, which must allow sqs:SendMessage on the queue
        # (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html#invocation-dlq).
        try:
            runtime.client("sqs").send_message(QueueUrl=queue_url, MessageBody=json.dumps(event, default=str))
        except ClientError as error:  # AWS drops the event then (the function's DeadLetterErrors metric)
            self.errors.append(f"dead letter not sent: {error}")
        return False


class SafetyNet:
    """Sends the status change events of ended executions through the deployed rule to its target.

    Each ended execution is reported once per `SafetyNet`. `watch_from` leaves out executions
    that ended before it (a sweeper attached to a running stack, which must not report again
    what an earlier sweeper reported). `loss` drops events as AWS may.
    """

    def __init__(
        self,
        stack: LocalStack,
        watch_from: datetime | None = None,
        loss: StatusEventLoss | None = None,
        invoker: AsyncInvoker | None = None,
    ):
        self.stack = stack
        self.rule = find_rule(stack)
        self.watch_from = watch_from
        self.loss = loss
        self.invoker = invoker or AsyncInvoker(stack, {})
        self._sfn = stack.client("stepfunctions")
        # Reported executions that started at or after the horizon (older ones are never listed again).
        self._reported: dict[str, datetime] = {}
        self._ended_seen = 0
        # Every execution that started before this had ended by an earlier sweep: a sweep lists
        # executions newest first and stops there, so its cost is what started or ran since, not
        # every execution ever (a walk of them all made a long run slower with every event, issue 21).
        self._horizon: datetime | None = None

    @property
    def ended_seen(self) -> int:
        """How many ended executions this safety net has reported so far."""
        return self._ended_seen

    def _is_new(self, execution: dict[str, Any]) -> bool:
        if execution["status"] not in TERMINAL or execution["executionArn"] in self._reported:
            return False
        stopped = execution.get("stopDate")
        return self.watch_from is None or stopped is None or stopped >= self.watch_from

    def _since_horizon(self) -> tuple[list[dict[str, Any]], datetime | None]:
        """The executions that started at the horizon or later, newest first (ListExecutions' order),
        and the next horizon: the oldest of them still running (or the newest, if none runs)."""
        listed: list[dict[str, Any]] = []
        # Small pages: an idle sweep (five a second) needs only the newest execution, not 100 of them.
        pages = self._sfn.get_paginator("list_executions").paginate(
            stateMachineArn=self.stack.state_machine_arn, PaginationConfig={"PageSize": SWEEP_PAGE_SIZE}
        )
        for page in pages:
            fresh = [e for e in page["executions"] if self._horizon is None or e["startDate"] >= self._horizon]
            listed.extend(fresh)
            if len(fresh) < len(page["executions"]):
                break
        running = [e["startDate"] for e in listed if e["status"] not in TERMINAL]
        if running:
            return listed, min(running)
        return listed, max((e["startDate"] for e in listed), default=self._horizon)

    def sweep(self) -> SweepReport:
        """Report every execution that ended since the last sweep, as Step Functions would."""
        report = SweepReport()
        if self.stack.express:  # Step Functions sends status change events for Standard workflows only
            return report
        listed, horizon = self._since_horizon()
        for execution in [e for e in listed if self._is_new(e)]:
            arn = execution["executionArn"]
            if execution["status"] == "SUCCEEDED" and not self.rule.may_route_a_success(execution["stateMachineArn"]):
                # No DescribeExecution: the rule cannot match it, whatever its input and output.
                report.changes.append(StatusChange(arn, "SUCCEEDED", None, routed=False))
            else:
                described = self._sfn.describe_execution(executionArn=arn)
                report.changes.append(self._route(status_change_event(described)))
            self._reported[execution["executionArn"]] = execution["startDate"]
            self._ended_seen += 1
        if horizon is not None:  # what started before it is never listed again
            self._horizon = horizon
            self._reported = {arn: start for arn, start in self._reported.items() if start >= horizon}
        return report

    def _route(self, event: dict[str, Any]) -> StatusChange:
        detail = event["detail"]
        change = StatusChange(detail["executionArn"], detail["status"], detail["error"], self.rule.matches(event))
        if not change.routed:
            return change
        if self.loss is not None and self.loss.drops():
            return StatusChange(change.execution_arn, change.status, change.error, routed=True, lost=True)
        delivered = all(self.invoker.invoke(arn, event) for arn in self.rule.target_arns)
        return StatusChange(change.execution_arn, change.status, change.error, routed=True, failed=not delivered)


_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


def rate_seconds(expression: str) -> int | None:
    """`rate(5 minutes)` -> 300; None for a cron() expression
    (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html)."""
    match = _RATE.match(expression.strip())
    return int(match[1]) * _UNIT_SECONDS[match[2].rstrip("s")] if match else None


class ScheduledRuns:
    """The schedule rules of the template's functions, fired on demand (fast-forwarded)."""

    def __init__(self, stack: LocalStack, invoker: AsyncInvoker | None = None):
        self.stack = stack
        self.invoker = invoker or AsyncInvoker(stack, {})
        self.runs = 0
        self.last_run_failed = False  # some function failed on every attempt (its event is on its DLQ)
        periods = [rate_seconds(e) for f in stack.scheduled_functions for e in f.schedules]
        # The shortest rate among the schedules (a cron schedule counts as 5 minutes, the template's).
        self.period_seconds = min((p if p is not None else 300 for p in periods), default=300)

    def run(self, at: datetime | None = None) -> int:
        """One scheduled invocation of every scheduled function, due `at` (now); returns how many."""
        functions = self.stack.scheduled_functions
        failed = False
        for function in functions:
            arn = f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{function.name}"
            failed |= not self.invoker.invoke(arn, scheduled_event(at))
        self.runs += 1
        self.last_run_failed = failed
        return len(functions)


def scheduled_event(at: datetime | None = None) -> dict[str, Any]:
    """The event a schedule rule sends its target, due `at` (now)
    (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-run-lambda-schedule.html)."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": event_time(at or datetime.now(UTC)),
        "region": REGION,
        "resources": [],
        "detail": {},
    }

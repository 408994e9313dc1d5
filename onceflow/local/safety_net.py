"""The safety net, emulated: execution status changes routed by the template's EventBridge rule.

On AWS, Step Functions sends a "Step Functions Execution Status Change" event to the account's
default event bus whenever a Standard execution changes status, and `SafetyNetRule` in
template.yaml puts those of executions that ended outside the state machine's own dead-letter
path (FAILED by an uncaught error, ABORTED, TIMED_OUT) on the dead-letter queue.

moto's Step Functions sends no such events, so the local runtime calls `SafetyNet(stack).sweep()`:
for each execution that has ended since the last sweep it builds the event AWS would send (the
same detail fields, input left out when too large, as AWS does) and puts it on the embedded
EventBridge. The rule that moto's CloudFormation deployed from template.yaml, with its event
pattern and its SQS target, decides what reaches the dead-letter queue: nothing about the rule
is repeated here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from moto.events.models import EventPattern

from onceflow.local.stack import LocalStack
from onceflow.ops.executions import TERMINAL, list_executions

SOURCE = "aws.states"
DETAIL_TYPE = "Step Functions Execution Status Change"
# Step Functions leaves the input out of the event when escaped input and output exceed 248 KB.
MAX_EVENT_DATA_BYTES = 248 * 1024
_RULE_OUTPUT = "SafetyNetRuleName"
_PUT_EVENTS_BATCH = 10


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


@dataclass(frozen=True)
class StatusChange:
    execution_arn: str
    status: str
    error: str | None
    routed: bool  # the rule matched: the event went to the rule's target (the dead-letter queue)


@dataclass
class SweepReport:
    changes: list[StatusChange] = field(default_factory=list)

    @property
    def routed(self) -> list[StatusChange]:
        return [c for c in self.changes if c.routed]


def _epoch_ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def _escaped_size(text: str | None) -> int:
    return len(json.dumps(text)) if text is not None else 0


def status_change_detail(described: dict[str, Any]) -> dict[str, Any]:
    """The `detail` of the status change event for a DescribeExecution result (AWS's fields)."""
    input_text, output_text = described.get("input"), described.get("output")
    output_included = _escaped_size(output_text) <= MAX_EVENT_DATA_BYTES
    input_included = _escaped_size(input_text) + (_escaped_size(output_text) if output_included else 0) <= (
        MAX_EVENT_DATA_BYTES
    )
    return {
        "executionArn": described["executionArn"],
        "stateMachineArn": described["stateMachineArn"],
        "name": described["name"],
        "status": described["status"],
        "startDate": _epoch_ms(described.get("startDate")),
        "stopDate": _epoch_ms(described.get("stopDate")),
        "input": input_text if input_included else None,
        "inputDetails": {"included": input_included},
        "output": output_text if output_included else None,
        "outputDetails": {"included": output_included} if output_text is not None else None,
        "error": described.get("error"),
        "cause": described.get("cause"),
        "redriveCount": described.get("redriveCount", 0),
    }


def find_rule(stack: LocalStack) -> SafetyNetRule:
    """The safety net rule deployed with the stack (named by its `SafetyNetRuleName` output)."""
    name = stack.outputs.get(_RULE_OUTPUT)
    if not name:
        raise SafetyNetError(f"the stack has no {_RULE_OUTPUT} output: template.yaml defines no safety net rule")
    events = stack.client("events")
    rule = events.describe_rule(Name=name)
    targets = events.list_targets_by_rule(Rule=name)["Targets"]
    return SafetyNetRule(name, json.loads(rule["EventPattern"]), tuple(t["Arn"] for t in targets))


class SafetyNet:
    """Sends the status change events of ended executions through the deployed rule.

    Each ended execution is reported once per `SafetyNet`. `watch_from` leaves out executions
    that ended before it (a sweeper attached to a running stack, which must not report again
    what an earlier sweeper reported).
    """

    def __init__(self, stack: LocalStack, watch_from: datetime | None = None):
        self.stack = stack
        self.rule = find_rule(stack)
        self.watch_from = watch_from
        self._sfn = stack.client("stepfunctions")
        self._events = stack.client("events")
        self._reported: set[str] = set()

    def _is_new(self, execution: dict[str, Any]) -> bool:
        if execution["status"] not in TERMINAL or execution["executionArn"] in self._reported:
            return False
        stopped = execution.get("stopDate")
        return self.watch_from is None or stopped is None or stopped >= self.watch_from

    def sweep(self) -> SweepReport:
        """Report every execution that ended since the last sweep, as Step Functions would."""
        ended = [e for e in list_executions(self._sfn, self.stack.state_machine_arn) if self._is_new(e)]
        report = SweepReport()
        entries = []
        for execution in ended:
            described = self._sfn.describe_execution(executionArn=execution["executionArn"])
            entry, change = self._event(described)
            entries.append(entry)
            report.changes.append(change)
        self._put(entries)
        self._reported.update(c.execution_arn for c in report.changes)
        return report

    def _event(self, described: dict[str, Any]) -> tuple[dict[str, Any], StatusChange]:
        detail = status_change_detail(described)
        as_delivered = {"source": SOURCE, "detail-type": DETAIL_TYPE, "detail": detail}
        entry = {
            "Source": SOURCE,
            "DetailType": DETAIL_TYPE,
            "Detail": json.dumps(detail),
            "Resources": [described["executionArn"]],
            "Time": described.get("stopDate") or described["startDate"],
        }
        change = StatusChange(
            described["executionArn"], described["status"], detail["error"], self.rule.matches(as_delivered)
        )
        return entry, change

    def _put(self, entries: Iterable[dict[str, Any]]) -> None:
        pending = list(entries)
        for start in range(0, len(pending), _PUT_EVENTS_BATCH):
            response = self._events.put_events(Entries=pending[start : start + _PUT_EVENTS_BATCH])
            if response.get("FailedEntryCount"):
                failed = [e for e in response["Entries"] if e.get("ErrorCode")]
                raise SafetyNetError(f"EventBridge refused status change events: {failed}")

"""The invariants a schedule must leave true after recovery, judged on evidence read from the stack.

R1 (every message processed or dead-lettered with a reason), R2 (one successful Record
transaction per event, the business row written by the execution that recorded the event, no
orphan rows) and R4 (the example subscriber, deployed on every schedule, applied each notified
event's effect once: onceflow/local/subscriber_check.py) come from `onceflow.local.report.build_report`. On top of them, for every event_id the
producer sent in a valid message:

- exactly one business row, and a state record, whose status is `sent` (a record DynamoDB TTL
  deleted after it was sent counts, as it was: evidence from the run's TTL clock);
- at least one notification, and no notification carrying another payload than the recorded one
  (a conflicting payload is never published);
- no state record, business row or notification for an event_id never validly sent;
- nothing left in the dead-letter queue but what needs a person (poison, payload conflicts);
- no execution still running, and recovery reached a quiet state within its bounds;
- with a FIFO source, R5: within a message group no event's first business write or first
  notification comes before that of an event sent earlier in the group and still to be applied
  (effects.py judges the order the run logged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from onceflow.devtools.schedules.effects import Effect, order_violations
from onceflow.local.report import NOTHING_TO_JUDGE, Expectation, RunReport, build_report
from onceflow.ops.executions import ExecutionResult
from onceflow.ops.observe import QueuedMessage


@dataclass
class Evidence:
    expectations: list[Expectation]
    state_records: list[dict[str, Any]]
    business_rows: list[dict[str, Any]]
    notifications: list[QueuedMessage]
    dead_letters: list[QueuedMessage]
    executions: list[ExecutionResult]
    running_executions: int
    recovery_converged: bool
    business_key: str  # the business table's key (where the event_id is written)
    record_state: str  # the workflow's Record task (onceflow.ops.workflow.record_state)
    # State records that TTL deleted (as they were before), and that nothing wrote again.
    expired_state_records: list[dict[str, Any]] = field(default_factory=list)
    # The example subscriber's markers, effects and dead letters (R4), when the stack has it.
    subscriber: Any = None
    # A FIFO source's run: sends, dead letters, writes and notifications in the order they happened (R5).
    effects: list[Effect] | None = None

    @property
    def all_state_records(self) -> list[dict[str, Any]]:
        return [*self.state_records, *self.expired_state_records]


def _per_event(evidence: Evidence, valid: set[str]) -> list[str]:
    problems: list[str] = []
    states = {r["event_id"]: r for r in evidence.all_state_records}
    rows = Counter(r[evidence.business_key] for r in evidence.business_rows)
    notified: dict[str, list[str]] = {}
    for message in evidence.notifications:
        notified.setdefault(message.attributes.get("event_id", ""), []).append(
            message.attributes.get("payload_hash", "")
        )
    for event_id in sorted(valid):
        state = states.get(event_id)
        if rows[event_id] != 1:
            problems.append(f"{event_id}: {rows[event_id]} business rows, expected exactly one")
        if state is None:
            problems.append(f"{event_id}: no state record")
        elif state.get("status") != "sent":
            problems.append(f"{event_id}: state record {state.get('status')!r}, expected 'sent'")
        if not notified.get(event_id):
            problems.append(f"{event_id}: never notified")
        elif state is not None and any(h != state.get("payload_hash") for h in notified[event_id]):
            problems.append(f"{event_id}: a notification carries another payload than the recorded one")
    strays = (set(states) | set(rows) | set(notified)) - valid
    problems += [f"{event_id}: written or notified but never validly sent" for event_id in sorted(strays)]
    problems += [f"{event_id}: business row without state record" for event_id in sorted(set(rows) - set(states))]
    return problems


def check(evidence: Evidence, not_redriven: Collection[str]) -> tuple[RunReport, list[str]]:
    """The report (R1–R3 as report.py judges them) and every invariant violation found."""
    report = build_report(
        sent=evidence.expectations,
        state_records=evidence.all_state_records,
        business_rows=evidence.business_rows,
        notifications=evidence.notifications,
        dead_letters=evidence.dead_letters,
        executions=evidence.executions,
        subscriber=evidence.subscriber,
        business_key=evidence.business_key,
        record_state=evidence.record_state,
    )
    valid = {e.event_id for e in evidence.expectations if e.event_id}
    violations: list[str] = []
    for verdict in report.verdicts:
        if not valid and verdict.problems and all(p.endswith(NOTHING_TO_JUDGE) for p in verdict.problems):
            continue  # a schedule without a valid event gives a verdict nothing to judge: not a violation
        if not verdict.passed:
            violations += [f"{verdict.name}: {p}" for p in verdict.problems] or [f"{verdict.name}: {verdict.evidence}"]
    violations += _per_event(evidence, valid)
    left = [m for m in evidence.dead_letters if m.attributes.get("error") not in not_redriven]
    violations += [
        f"dead letter {m.message_id} ({m.attributes.get('error') or 'no reason'}) left after recovery" for m in left
    ]
    if evidence.effects is not None:
        violations += order_violations(evidence.effects)
    if evidence.running_executions:
        violations.append(f"{evidence.running_executions} executions still running after recovery")
    if not evidence.recovery_converged:
        violations.append("recovery did not reach a quiet state within its bounds")
    return report, violations

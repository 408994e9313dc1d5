"""What happened in a run, read back from the stack, and R1–R3 (R4 with the subscriber) judged on that evidence."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from onceflow.ops.executions import ExecutionResult
from onceflow.ops.observe import QueuedMessage
from onceflow.ops.redrive import SAFETY_NET, DeadLetter, NotRedrivable, read
from onceflow.ops.workflow import (
    ALREADY_DONE_EXPIRED,
    ALREADY_SENT,
    CONFLICT_PREFIX,
    DEAD_LETTERED,
    LOOK_UP,
    MARK_SENT,
    RECORD,
)

# The end of a verdict's problem when the run gave it nothing to judge (it fails then).
NOTHING_TO_JUDGE = "nothing to judge"

PATH_NEW = "new"
PATH_RESUMED = "resumed from pending"
PATH_ALREADY_SENT = "already sent"
PATH_EXPIRED = "already done, record expired"
PATH_CONFLICT = "payload conflict"
PATH_DEAD_LETTERED = "dead-lettered"
PATH_OTHER = "other"


def path_kind(execution: ExecutionResult) -> str:
    """Which of statemachine/pipeline.asl.json's paths the execution took (by the states it entered)."""
    path = execution.path
    if any(state.startswith(CONFLICT_PREFIX) for state in path):
        return PATH_CONFLICT
    last = path[-1] if path else None
    if last == DEAD_LETTERED:
        return PATH_DEAD_LETTERED
    if last == ALREADY_SENT:
        return PATH_ALREADY_SENT
    if last == ALREADY_DONE_EXPIRED:
        return PATH_EXPIRED
    if last == MARK_SENT and execution.status == "SUCCEEDED":
        return PATH_RESUMED if LOOK_UP in path else PATH_NEW
    return PATH_OTHER


def _read_dead_letter(message: QueuedMessage) -> DeadLetter:
    """Through the redrive tool's reader: a legacy safety-net message counts under its own error."""
    try:
        return read(message.message_id, message.body, message.attributes)
    except NotRedrivable as problem:
        return DeadLetter(message.message_id, message.body, SAFETY_NET, f"(unreadable: {problem})", None, None, {}, 0)


def successful_records(execution: ExecutionResult, record_state: str = RECORD) -> int:
    """How many times this execution's Record transaction succeeded (0 or 1 if R2 holds)."""
    return execution.count_in_state("TaskSucceeded", record_state)


@dataclass(frozen=True)
class Verdict:
    name: str
    passed: bool
    evidence: str
    problems: list[str] = field(default_factory=list)


@dataclass
class RunReport:
    messages_sent: int
    unique_events: int
    business_rows: int
    notifications: int
    notified_events: int
    duplicate_notifications: int
    dead_letters_by_reason: dict[str, int]
    executions_by_path: dict[str, int]
    executions: int
    verdicts: list[Verdict]

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)


@dataclass(frozen=True)
class Expectation:
    """What the producer sent, so the report can account for every message."""

    event_id: str | None  # None: not JSON or no event_id (poison)
    payload_hash: str | None
    body: str


def build_report(
    sent: list[Expectation],
    state_records: list[dict[str, Any]],
    business_rows: list[dict[str, Any]],
    notifications: list[QueuedMessage],
    dead_letters: list[QueuedMessage],
    executions: list[ExecutionResult],
    subscriber: Any = None,
    business_key: str = "event_id",
    record_state: str = RECORD,
) -> RunReport:
    """`subscriber` (onceflow/local/subscriber_check.py: SubscriberEvidence), when the stack has the
    example subscriber, adds R4. `business_key` is the business table's key (where the event_id is
    written), `record_state` the workflow's Record task (onceflow.ops.workflow.record_state).

    Every verdict names how many events it judged, and none passes on a run that processed none."""
    states = {r["event_id"]: r for r in state_records}
    rows = {r[business_key]: r for r in business_rows if business_key in r}
    notified = Counter(m.attributes.get("event_id", "") for m in notifications)
    letters = [_read_dead_letter(message) for message in dead_letters]
    dead_by_body: dict[str, list[DeadLetter]] = {}
    for letter in letters:
        dead_by_body.setdefault(letter.body, []).append(letter)
    records_per_event: Counter[str] = Counter()
    for execution in executions:
        records_per_event[execution.input.get("event_id", "")] += successful_records(execution, record_state)

    # R1: every message is either processed (its event sent, with this payload) or dead-lettered with a reason.
    lost = []
    processed_messages = dead_lettered_messages = 0
    for message in sent:
        state = states.get(message.event_id or "")
        if (
            state
            and state["status"] == "sent"
            and state["payload_hash"] == message.payload_hash
            and message.event_id in rows
        ):
            processed_messages += 1
        elif any(d.error for d in dead_by_body.get(message.body, [])):
            dead_lettered_messages += 1
        else:
            lost.append(f"{message.event_id or message.body[:40]!r}: neither sent nor dead-lettered with a reason")
    r1 = Verdict(
        "R1 nothing is lost",
        not lost and processed_messages > 0,
        f"{processed_messages} of {len(sent)} messages processed, {dead_lettered_messages} dead-lettered with a reason, "
        f"{len(lost)} unaccounted",
        lost[:10] if lost or processed_messages else [f"no message was processed: {NOTHING_TO_JUDGE}"],
    )

    # R2: one successful Record transaction per event, and the business row is the one it wrote.
    twice = [f"{event_id}: recorded {n} times" for event_id, n in records_per_event.items() if n > 1]
    overwritten = [
        f"{event_id}: business row written by {rows[event_id].get('execution_arn')} "
        f"but state recorded by {state.get('execution_arn')}"
        for event_id, state in states.items()
        if event_id in rows and rows[event_id].get("execution_arn") != state.get("execution_arn")
    ]
    orphans = [f"{event_id}: business row without state record" for event_id in rows if event_id not in states]
    recorded = sum(records_per_event.values())
    r2 = Verdict(
        "R2 database written exactly once",
        not (twice or overwritten or orphans) and bool(rows),
        f"{recorded} successful Record transactions for {len(records_per_event)} events "
        f"seen by executions; {len(rows)} business rows, {len(overwritten)} overwritten, {len(orphans)} orphaned",
        (twice + overwritten + orphans)[:10] or ([] if rows else [f"no business row was written: {NOTHING_TO_JUDGE}"]),
    )

    # R3: every event marked sent has at least one notification.
    sent_events = [event_id for event_id, state in states.items() if state["status"] == "sent"]
    unnotified = [f"{event_id}: sent but never notified" for event_id in sent_events if not notified.get(event_id)]
    r3 = Verdict(
        "R3 notification at least once",
        not unnotified and bool(sent_events),
        f"{len(sent_events) - len(unnotified)} of {len(sent_events)} sent events notified; "
        f"{sum(notified.values())} notifications ({sum(n - 1 for n in notified.values() if n > 1)} duplicates)",
        unnotified[:10] or ([] if sent_events else [f"no event was marked sent: {NOTHING_TO_JUDGE}"]),
    )

    return RunReport(
        messages_sent=len(sent),
        unique_events=len({m.event_id for m in sent if m.event_id}),
        business_rows=len(rows),
        notifications=sum(notified.values()),
        notified_events=len(notified),
        duplicate_notifications=sum(n - 1 for n in notified.values() if n > 1),
        dead_letters_by_reason=dict(Counter(letter.error or "(no reason)" for letter in letters)),
        executions_by_path=dict(Counter(path_kind(e) for e in executions)),
        executions=len(executions),
        verdicts=[r1, r2, r3, *_r4(subscriber, notifications)],
    )


def _r4(subscriber: Any, notifications: list[QueuedMessage]) -> list[Verdict]:
    if subscriber is None:
        return []
    from onceflow.local.subscriber_check import judge_r4  # it builds on this module's Verdict

    return [judge_r4(subscriber, notifications)]


def report_as_dict(report: RunReport) -> dict[str, Any]:
    data = {k: v for k, v in report.__dict__.items() if k != "verdicts"}
    data["verdicts"] = [v.__dict__ for v in report.verdicts]
    data["passed"] = report.passed
    return json.loads(json.dumps(data))


R5_NAME = "R5 — order within a group"


def r5_verdict(groups: dict[str, int], effects: int, problems: list[str]) -> Verdict:
    """R5 judged on the order the run logged (onceflow/devtools/schedules/effects.py): `groups` is
    events per message group, `problems` what order_violations found."""
    several = {group: n for group, n in groups.items() if n > 1}
    evidence = (
        f"{sum(groups.values())} events in {len(groups)} message groups ({len(several)} with several events, "
        f"up to {max(groups.values(), default=0)}); business writes and first notifications of each group in "
        f"the order of its messages over {effects} logged sends, dead letters, writes and notifications"
    )
    judged = sum(groups.values())
    return Verdict(
        R5_NAME,
        not problems and judged > 0,
        evidence,
        problems[:20] or ([] if judged else [f"no event: {NOTHING_TO_JUDGE}"]),
    )

"""R4 on the fault schedules: every schedule deploys the example subscriber and judges R4 besides
R1-R3 (onceflow/devtools/schedules/invariants.py). These schedules put each subscriber fault in:
a crash before its write, one after its write before the acknowledgement, a notification delivered
again after the acknowledgement, and notifications published twice (a crash between Publish and
Mark as sent, then recovery). The stats prove each fault happened; a subscriber that skips the
deduplication fails R4 on the same schedule."""

from __future__ import annotations

import pytest

from onceflow.devtools.schedules import (
    CrashSubscriber,
    Interrupt,
    Process,
    Recover,
    RedeliverNotification,
    Schedule,
    Send,
    run_schedule,
)
from onceflow_subscriber import APPLIED, Applied, ExactlyOnce

SCHEDULE = Schedule(
    (
        Send(0),
        Send(1, copies=2),
        CrashSubscriber("before_write"),
        Process(),
        Send(2),
        CrashSubscriber("after_write_before_ack"),
        Interrupt(3, "Mark as sent", "stop"),  # published, then stopped: recovery publishes again
        Send(3),
        Process(),
        RedeliverNotification(0),
        RedeliverNotification(1),
        Recover(),
        Process(),
    )
)


@pytest.fixture
def outcome(embedded_aws):
    return run_schedule(embedded_aws, SCHEDULE)


def test_r4_holds_through_every_subscriber_fault(outcome):
    assert outcome.passed, outcome.violations
    assert outcome.stats.subscriber_crashes == {"before_write": 1, "after_write_before_ack": 1}
    assert outcome.stats.notification_redeliveries == 2
    assert outcome.report.duplicate_notifications >= 1  # event 3 was published twice
    (r4,) = [v for v in outcome.report.verdicts if v.name.startswith("R4")]
    assert r4.passed and "4 events notified" in r4.evidence


def _without_deduplication(self: ExactlyOnce, notification, effect) -> Applied:
    """A subscriber that skips the deduplication: the same effect, no marker, no condition."""
    self.dynamodb.transact_write_items(TransactItems=list(effect))
    return Applied(APPLIED, notification.event_id, "", notification.message_id)


def test_a_subscriber_that_skips_the_deduplication_fails_r4_on_the_schedule(embedded_aws, monkeypatch):
    monkeypatch.setattr(ExactlyOnce, "apply", _without_deduplication)
    outcome = run_schedule(embedded_aws, SCHEDULE)
    assert not outcome.passed
    assert any(v.startswith("R4") and "event_count" in v for v in outcome.violations), outcome.violations

"""R4 as the demo and the fault schedules judge it (onceflow/local/subscriber_check.py), on a real
run: notifications published twice (a crash between Publish and Mark as sent, then a redrive) and
delivered twice (SQS's redelivery of handled messages). The real subscriber passes; a subscriber
that skips the deduplication (its effect written without the marker) fails it."""

from __future__ import annotations

import json
import random

from moto.dynamodb.models import DynamoDBBackend

from onceflow.local.demo import FaultLog, redeliver_to_subscriber
from onceflow.local.faults import inject
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.report import build_report
from onceflow.local.subscriber_check import subscriber_evidence
from onceflow.ops.observe import drain, scan
from onceflow.ops.redrive import redrive
from onceflow_subscriber import APPLIED, Applied, ExactlyOnce
from tests.orders import make_orders


def _run_with_duplicates(embedded_aws, stack):
    orders = make_orders(8, random.Random(4))
    pipeline = LocalPipeline(embedded_aws, stack)
    with inject(
        DynamoDBBackend,
        "update_item",
        lambda: RuntimeError("injected: Mark as sent failed"),
        times=2,
        applies=lambda *a, **k: "ProcessedEvents" in str(a[0] if a else k.get("table_name")),
    ):
        pipeline.send([json.dumps(o) for o in orders])
        pipeline.process(timeout=60)
    redrive(stack.client("sqs"), stack.dead_letter_queue_url, stack.source_queue_url, dry_run=False, limit=None)
    pipeline.process(timeout=60)
    log = FaultLog()
    redeliver_to_subscriber(pipeline, random.Random(1), 3, log)
    assert log.counts["notifications delivered again to the subscriber"] == 3
    dynamodb = stack.client("dynamodb")
    report = build_report(
        sent=[],
        state_records=scan(dynamodb, stack.processed_events_table),
        business_rows=scan(dynamodb, stack.business_table),
        notifications=pipeline.inbox.collect(),
        dead_letters=drain(stack.client("sqs"), stack.dead_letter_queue_url, delete=False),
        executions=[],
        subscriber=subscriber_evidence(pipeline),
    )
    (r4,) = [v for v in report.verdicts if v.name.startswith("R4")]
    assert report.duplicate_notifications == 2  # republished after the redrive
    return r4


def test_r4_holds_for_the_subscriber_built_with_the_block(embedded_aws, subscriber_stack):
    r4 = _run_with_duplicates(embedded_aws, subscriber_stack)
    assert r4.passed, r4.problems
    assert "8 events notified, 10 notifications" in r4.evidence


def _without_deduplication(self: ExactlyOnce, notification, effect) -> Applied:
    """A subscriber that skips the deduplication: the same effect, written with no marker."""
    self.dynamodb.transact_write_items(TransactItems=list(effect))
    return Applied(APPLIED, notification.event_id, "", notification.message_id)


def test_r4_fails_for_a_subscriber_that_skips_the_deduplication(embedded_aws, subscriber_stack, monkeypatch):
    monkeypatch.setattr(ExactlyOnce, "apply", _without_deduplication)
    r4 = _run_with_duplicates(embedded_aws, subscriber_stack)
    assert not r4.passed
    assert any("event_count" in problem for problem in r4.problems)

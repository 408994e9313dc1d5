"""End to end with the example subscriber: producer -> source queue -> starter -> state machine ->
SNS -> subscriber queue -> subscriber, all from template.yaml (DeploySubscriber=true), with producer
resends and concurrent copies, and notifications published more than once (a crash between Publish
and Mark as sent publishes again). R4 is judged on the tallies: each customer's
event_count is the number of its distinct orders, however many notifications arrived."""

from __future__ import annotations

import json
import random
from collections import Counter

from moto.dynamodb.models import DynamoDBBackend

from onceflow.local.faults import inject
from onceflow.local.pipeline import LocalPipeline
from onceflow.ops.observe import scan
from onceflow.ops.redrive import redrive
from tests.orders import make_orders
from tests.subscriber.support import dead_letters, markers, tallies


def test_every_order_credits_its_customer_once_however_often_it_is_notified(embedded_aws, subscriber_stack):
    orders = make_orders(12, random.Random(3))
    bodies = [json.dumps(o) for o in orders]
    bodies += bodies[:4]  # producer resends: new SQS messages, the same events
    pipeline = LocalPipeline(embedded_aws, subscriber_stack)
    # About 5 s: two passes of the whole pipeline (16 messages, then 3 redriven) and a deploy of its own stack.
    # Mark as sent fails for the first 3 executions after they published: each is dead-lettered with
    # its record still pending, and a redrive publishes the notification a second time.
    with inject(
        DynamoDBBackend,
        "update_item",
        lambda: RuntimeError("injected: Mark as sent failed"),
        times=3,
        applies=lambda *a, **k: "ProcessedEvents" in str(a[0] if a else k.get("table_name")),
    ) as mark_sent_failures:
        pipeline.send(bodies)
        pipeline.process(timeout=120)
    assert mark_sent_failures.injected == 3
    moved = redrive(
        subscriber_stack.client("sqs"),
        subscriber_stack.dead_letter_queue_url,
        subscriber_stack.source_queue_url,
        dry_run=False,
        limit=None,
    )
    assert moved.moved == 3
    pipeline.process(timeout=120)

    notified = Counter(m.attributes["event_id"] for m in pipeline.inbox.received)
    assert set(notified) == {o["order_id"] for o in orders}
    assert sum(notified.values()) > len(orders)  # duplicates really reached the subscriber
    expected = Counter(o["customer_id"] for o in orders)
    assert {c: a["event_count"] for c, a in tallies(subscriber_stack).items()} == dict(expected)
    assert set(markers(subscriber_stack)) == {o["order_id"] for o in orders}
    assert dead_letters(subscriber_stack) == []
    assert all(
        r["status"] == "sent"
        for r in scan(subscriber_stack.client("dynamodb"), subscriber_stack.processed_events_table)
    )

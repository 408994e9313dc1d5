"""End to end: producer → source queue → emulated event source → real starter → real state machine.

Messages are delivered to the starter exactly as the Lambda event source mapping would (batches,
partial batch responses, redelivery after the visibility timeout, the queue's redrive policy), and
R1–R3 are checked on the tables, the notifications and the dead-letter queue.
"""

from __future__ import annotations

import json

from onceflow.local.faults import sns_publish_failures, start_execution_failures
from onceflow.local.pipeline import LocalPipeline
from onceflow.ops.observe import drain, scan
from tests.support import order


def _pipeline(embedded_aws, stack, **kwargs) -> LocalPipeline:
    return LocalPipeline(embedded_aws, stack, **kwargs)


def test_stream_with_duplicates_poison_and_resends_keeps_r1_r2_r3(embedded_aws, stack):
    pipeline = _pipeline(embedded_aws, stack)
    orders = [order(f"order-{i}") for i in range(12)]
    resends = orders[:4]  # a producer sends these twice: new message ids, same event_id
    poison = ["not json", json.dumps({"customer_id": "c"}), json.dumps(order("order-bad", amount=-1))]
    pipeline.send([*orders, *resends, *poison])

    pipeline.process()

    dynamodb = stack.client("dynamodb")
    states = {r["event_id"]: r for r in scan(dynamodb, stack.processed_events_table)}
    rows = scan(dynamodb, stack.order_records_table)
    assert sorted(r["order_id"] for r in rows) == sorted(o["order_id"] for o in orders)  # R2: once each
    assert {r["status"] for r in states.values()} == {"sent"}
    notifications = pipeline.inbox.by_event_id()
    assert set(notifications) == {o["order_id"] for o in orders}  # R3: at least one each
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert sorted(m.body for m in dead) == sorted(poison)  # R1: the rest is in the DLQ, reason attached
    assert all(m.attributes["error"] == "Onceflow.InvalidMessage" and m.attributes["rule"] for m in dead)
    executions = pipeline.executions()
    # A resend of an order already sent is acknowledged by the starter's pre-check (no execution)
    # or, if it came while the order was being processed, takes the workflow's "Already sent" path.
    skipped = len(orders) + len(resends) - len(executions)
    assert 0 <= skipped <= len(resends)
    assert sum(e.path[-1] == "Already sent" for e in executions) + skipped == len(resends)
    assert pipeline.event_source.stats.reported_failed == 0


def test_crash_after_start_execution_is_redelivered_and_handed_over_once(embedded_aws, stack):
    crashes = {"left": 1, "injected": 0}

    def crash_after_first_batch(invoke):
        def wrapped(event):
            response = invoke(event)  # executions started...
            if crashes["left"]:
                crashes["left"] -= 1
                crashes["injected"] += 1
                raise RuntimeError("starter crashed before acknowledging")  # ...but nothing deleted
            return response

        return wrapped

    pipeline = _pipeline(embedded_aws, stack, invoke_wrapper=crash_after_first_batch)
    orders = [order(f"order-{i}") for i in range(5)]
    pipeline.send(orders)
    pipeline.process()

    assert crashes["injected"] == 1
    assert pipeline.event_source.stats.crashed_batches == 1
    executions = pipeline.executions()
    assert len(executions) == 5  # the redelivered batch hit ExecutionAlreadyExists: no new executions
    assert len(scan(stack.client("dynamodb"), stack.order_records_table)) == 5
    assert set(pipeline.inbox.by_event_id()) == {o["order_id"] for o in orders}
    assert drain(stack.client("sqs"), stack.dead_letter_queue_url) == []


def test_failing_starter_records_go_to_dlq_after_max_receive_count(embedded_aws, stack):
    """A record that keeps failing is redelivered, then moved to the DLQ by the redrive policy."""
    pipeline = _pipeline(embedded_aws, stack)
    pipeline.send([order("order-1")])

    with start_execution_failures() as fault:
        pipeline.process()

    max_receives = stack.event_source.max_receive_count
    assert fault.injected == max_receives
    assert pipeline.event_source.stats.reported_failed == max_receives
    assert pipeline.executions() == []
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert [m.json["order_id"] for m in dead] == ["order-1"]


def test_sns_outage_then_dlq_redrive_publishes_without_rewriting(embedded_aws, stack):
    pipeline = _pipeline(embedded_aws, stack)
    orders = [order(f"order-{i}") for i in range(3)]
    with sns_publish_failures() as outage:
        pipeline.send(orders)
        pipeline.process()
    assert outage.injected >= 3 * 6  # every attempt of every execution failed
    dynamodb = stack.client("dynamodb")
    assert {r["status"] for r in scan(dynamodb, stack.processed_events_table)} == {"pending"}
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert len(dead) == 3 and {m.attributes["error"] for m in dead} == {"SNS.ThrottledException"}

    pipeline.send([m.body for m in dead])  # redrive: the original bodies back to the source queue
    pipeline.process()

    assert {r["status"] for r in scan(dynamodb, stack.processed_events_table)} == {"sent"}
    assert len(scan(dynamodb, stack.order_records_table)) == 3
    assert pipeline.inbox.by_event_id() == {o["order_id"]: 1 for o in orders}

"""Guarantee (R1): a reconciler marker past its expiry counts as gone, whether or not DynamoDB's
time to live has deleted it yet.

A marker says "this execution's dead letter exists" for as long as that dead letter can remain in
the dead-letter queue (CLAIM_RETENTION_SECONDS, the queue's 14-day retention: SQS deletes a message
at the end of its retention, counted from its first enqueue,
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html).
After that an event still pending must get a fresh dead letter, or nothing is left to redrive it.
The table's TTL on `expires_at` removes the marker, but late: DynamoDB deletes expired items in the
background, typically within a few days, and "items that have expired and not been deleted will
still show up in reads, queries, and scans"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html;
API_UpdateTimeToLive.html). So `Claims.settled` and the claim's condition must read `expires_at`
themselves. The embedded TTL deletes only when a test asks (onceflow/engine/dynamodb/ttl.py), which
here no test does: the marker is still there, past its expiry, when the reconciler runs with its
clock 15 days ahead.
"""

from __future__ import annotations

import io
import json
import sys
import time
import types
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from onceflow.local.event_source import SqsEventSource
from onceflow.local.faults import sns_publish_failures
from onceflow.local.function_runtime import StarterRuntime
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import wait_for_all
from onceflow.ops.observe import drain, scan
from tests.reconciler.conftest import Reconciler, start_and_stop
from tests.support import order

pytestmark = pytest.mark.embedded_only(reason="executions stopped at a state (moto patched in this process)")

RETENTION = timedelta(seconds=1_209_600)  # template.yaml: the reconciler's CLAIM_RETENTION_SECONDS
AHEAD = RETENTION + timedelta(days=1)  # past every marker's expiry, well within TTL's days of lateness
SCHEDULE_PERIOD = timedelta(minutes=5)  # template.yaml: the reconciler's rate(5 minutes)


def _clock_ahead(monkeypatch: pytest.MonkeyPatch, by: timedelta) -> None:
    """The reconciler's wall clock as if `by` had passed (its scheduled run is due then too)."""
    reconcile = sys.modules["reconciler.reconcile"]
    ahead = types.SimpleNamespace(time=lambda: time.time() + by.total_seconds(), monotonic=time.monotonic)
    monkeypatch.setattr(reconcile, "time", ahead)


def _markers(stack: LocalStack, reconciler: Reconciler) -> dict[str, dict[str, Any]]:
    """The reconciler's markers of executions, by execution ARN (the checkpoint left out)."""
    table = reconciler.runtime.environment["RECONCILER_TABLE"]
    return {
        item["pk"].removeprefix("execution#"): item
        for item in scan(stack.client("dynamodb"), table)
        if item["pk"].startswith("execution#")
    }


def _dead_lettered_by_the_workflow(stack: LocalStack, order_id: str) -> str:
    """An event whose Publish fails beyond its retries: the workflow dead-letters it itself (FAILED,
    Onceflow.DeadLettered) and leaves it pending. Returns the execution's ARN."""
    sqs = stack.client("sqs")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order(order_id)))
    starter = StarterRuntime(stack, log_stream=io.StringIO())
    with sns_publish_failures() as outage:
        SqsEventSource(sqs, stack.source_queue_url, stack.event_source, starter.invoke).run_until_empty()
        [failed] = wait_for_all(stack.client("stepfunctions"), stack.state_machine_arn)
    assert outage.injected >= 1 and (failed.status, failed.error) == ("FAILED", "Onceflow.DeadLettered")
    return failed.arn


def _assert_expired_but_still_there(marker: dict[str, Any] | None, run_at: datetime) -> None:
    assert marker is not None, "the marker is still there: TTL has not deleted it"
    assert int(marker["expires_at"]) < run_at.timestamp(), "and it is past its expiry when the run comes"


def test_an_expired_marker_of_the_reconcilers_own_dead_letter_lets_it_dead_letter_again(
    stack, reconciler, interrupts, monkeypatch
):
    [stopped] = start_and_stop(stack, interrupts, ["order-expired"])
    assert reconciler.sweep()["dead_lettered"] == [stopped.arn]
    [first] = drain(stack.client("sqs"), stack.dead_letter_queue_url)  # then gone: the queue's retention ran out
    assert first.attributes["event_id"] == "order-expired"

    _clock_ahead(monkeypatch, AHEAD)
    _assert_expired_but_still_there(_markers(stack, reconciler).get(stopped.arn), datetime.now(UTC) + AHEAD)
    later = reconciler.sweep(after=AHEAD)

    assert later["dead_lettered"] == [stopped.arn], "an expired marker was taken for a dead letter still queued"
    [again] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert (again.attributes["event_id"], again.attributes["execution_arn"]) == ("order-expired", stopped.arn)
    assert again.body == json.dumps(order("order-expired"))  # the original body, to redrive
    assert int(_markers(stack, reconciler)[stopped.arn]["expires_at"]) > (datetime.now(UTC) + AHEAD).timestamp()


def test_an_expired_marker_of_the_workflows_own_dead_letter_lets_the_stuck_event_be_dead_lettered(
    stack, reconciler, monkeypatch
):
    arn = _dead_lettered_by_the_workflow(stack, "order-left")
    swept = reconciler.sweep(after=SCHEDULE_PERIOD)  # the next scheduled run finds the event pending
    assert (swept["dead_lettered"], swept["pending_too_long"]) == ([], 1)
    assert _markers(stack, reconciler)[arn]["state"] == "dead-lettered-by-state-machine"
    [first] = drain(stack.client("sqs"), stack.dead_letter_queue_url)  # then gone: the queue's retention ran out
    assert first.attributes["source"] == "state-machine"

    _clock_ahead(monkeypatch, AHEAD)
    _assert_expired_but_still_there(_markers(stack, reconciler).get(arn), datetime.now(UTC) + AHEAD)
    later = reconciler.sweep(after=AHEAD)

    assert later["dead_lettered"] == [arn], "an expired marker was taken for the workflow's dead letter still queued"
    [again] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert (again.attributes["source"], again.attributes["error"]) == ("reconciler", "Onceflow.StuckPending")
    assert again.attributes["event_id"] == "order-left"
    assert again.body == json.dumps(order("order-left"))

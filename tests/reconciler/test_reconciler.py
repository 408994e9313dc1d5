"""The reconciler: R1 without trusting EventBridge's best-effort status change events.

Step Functions delivers "Execution Status Change" events best effort
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-states.html), so every event an
execution left behind must also reach the dead-letter queue when its status change is lost: the
reconciler's scheduled sweep finds it through ListExecutions (status filter, since a checkpoint)
and through the sparse `pending-since` index, and dead-letters the original SQS body once.
"""

from __future__ import annotations

import json
import sys
import threading
from datetime import timedelta

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models import DynamoDBBackend
from moto.sqs.exceptions import SQSException
from moto.sqs.models import SQSBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.devtools.schedules.hooks import STOP_ERROR
from onceflow.local import faults
from onceflow.local.faults import sns_publish_failures
from onceflow.local.safety_net import SafetyNet, StatusEventLoss, status_change_event
from onceflow.ops.executions import wait_for_all
from onceflow.ops.observe import drain, scan
from onceflow.ops.redrive import redrive
from tests.reconciler.conftest import reconciler_for, start_and_stop
from tests.support import order

# A run due this far ahead lists no execution that ended now (its lookback is an hour), so only the
# pending index can find what these tests leave pending.
BEYOND_THE_LOOKBACK = timedelta(hours=2)


def _statuses(stack) -> dict[str, str]:
    return {r["event_id"]: r["status"] for r in scan(stack.client("dynamodb"), stack.processed_events_table)}


def test_a_lost_status_change_is_dead_lettered_by_the_sweep_and_redrive_finishes_it(stack, reconciler, interrupts):
    [stopped] = start_and_stop(stack, interrupts, ["order-lost-event"])
    assert (stopped.status, _statuses(stack)) == ("ABORTED", {"order-lost-event": "pending"})
    loss = StatusEventLoss(fraction=1.0)
    report = SafetyNet(stack, loss=loss).sweep()
    assert (loss.lost, [c.lost for c in report.routed]) == (1, [True])  # the event was really lost
    sqs = stack.client("sqs")
    assert drain(sqs, stack.dead_letter_queue_url, delete=False) == []  # today: pending forever, no alarm

    outcome = reconciler.sweep()

    assert outcome["dead_lettered"] == [stopped.arn]
    [dead] = drain(sqs, stack.dead_letter_queue_url, delete=False)
    assert dead.body == json.dumps(order("order-lost-event"))  # the original SQS body, not an event
    assert {k: dead.attributes[k] for k in ("source", "error", "event_id", "execution_arn")} == {
        "source": "reconciler",
        "error": STOP_ERROR,
        "event_id": "order-lost-event",
        "execution_arn": stopped.arn,
    }
    assert dead.attributes["cause"]

    moved = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=False, limit=None)
    start_and_stop(stack, interrupts, [])  # the starter takes the redriven body; nothing is stopped now
    assert moved.moved == 1
    assert _statuses(stack) == {"order-lost-event": "sent"}


def test_running_twice_and_the_event_as_well_dead_letter_once(stack, reconciler, interrupts):
    [stopped] = start_and_stop(stack, interrupts, ["order-twice"])
    report = SafetyNet(stack, invoker=None).sweep()  # delivered: the reconciler's own runtime handles it
    assert [(c.routed, c.lost, c.failed) for c in report.changes] == [(True, False, False)]

    first, second = reconciler.sweep(), reconciler.sweep(after=BEYOND_THE_LOOKBACK)

    assert (first["dead_lettered"], second["dead_lettered"]) == ([], [])
    assert first["already_handled"] >= 1 and second["already_handled"] >= 1
    [dead] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert (dead.attributes["source"], dead.attributes["execution_arn"]) == ("reconciler", stopped.arn)


def test_pending_events_are_found_through_the_index_not_a_scan(stack, reconciler, interrupts):
    [stopped] = start_and_stop(stack, interrupts, ["order-indexed"])
    with (
        faults.inject(DynamoDBBackend, "scan", lambda: RuntimeError("no scan"), times=0, name="scan") as scans,
        faults.inject(DynamoDBBackend, "query", lambda: RuntimeError("unused"), times=0, name="query") as queries,
    ):
        outcome = reconciler.sweep(after=BEYOND_THE_LOOKBACK)

    assert outcome["dead_lettered"] == [stopped.arn]  # ListExecutions saw nothing this late: the index did
    assert scans.calls == 0
    assert queries.calls == 16  # one Query of the pending-since index per shard (onceflow_common.pending)
    [dead] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert dead.attributes["event_id"] == "order-indexed"


def test_a_pending_event_whose_execution_still_runs_is_left_alone(stack, reconciler, embedded_aws, monkeypatch):
    reached, release = threading.Event(), threading.Event()

    def held_retry(seconds: float) -> None:  # the execution waits between Publish attempts
        reached.set()
        release.wait(timeout=10)

    monkeypatch.setattr(embedded_aws.clock, "sleep", held_retry)
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    with sns_publish_failures(times=1) as outage:
        sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-running")))
        _deliver(stack)
        assert reached.wait(timeout=10), "the execution reached its Publish retry"
        try:
            outcome = reconciler.sweep(after=BEYOND_THE_LOOKBACK)
        finally:
            release.set()
        wait_for_all(sfn, stack.state_machine_arn)

    assert outage.injected == 1
    assert (outcome["pending_too_long"], outcome["left_running"], outcome["dead_lettered"]) == (1, 1, [])
    assert drain(sqs, stack.dead_letter_queue_url) == []
    assert _statuses(stack) == {"order-running": "sent"}


def _deliver(stack) -> None:
    import io

    from onceflow.local.event_source import SqsEventSource
    from onceflow.local.function_runtime import StarterRuntime

    starter = StarterRuntime(stack, log_stream=io.StringIO())
    SqsEventSource(stack.client("sqs"), stack.source_queue_url, stack.event_source, starter.invoke).run_until_empty()


def test_the_metric_counts_events_pending_longer_than_the_threshold(stack, interrupts):
    start_and_stop(stack, interrupts, ["order-a", "order-b"])
    hourly = reconciler_for(stack, threshold_seconds=3600)

    young = hourly.sweep()
    old = hourly.sweep(after=BEYOND_THE_LOOKBACK)

    assert (young["pending_too_long"], old["pending_too_long"]) == (0, 2)
    assert hourly.metric("EventsPendingTooLong") == [0.0, 2.0]  # EMF, as the stuck-pending alarm reads it


def _dead_lettered_by_the_workflow(stack, order_id: str):
    """One order through the starter while SNS is down: its execution dead-letters it itself."""
    stack.client("sqs").send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order(order_id)))
    with sns_publish_failures() as outage:
        _deliver(stack)
        [failed] = wait_for_all(stack.client("stepfunctions"), stack.state_machine_arn)
    assert outage.injected >= 1 and (failed.status, failed.error) == ("FAILED", "Onceflow.DeadLettered")
    return failed


def test_an_execution_that_dead_lettered_itself_is_not_dead_lettered_again(stack, reconciler):
    sqs = stack.client("sqs")
    _dead_lettered_by_the_workflow(stack, "order-outage")

    SafetyNet(stack).sweep()
    now, later = reconciler.sweep(), reconciler.sweep(after=BEYOND_THE_LOOKBACK)

    assert (now["dead_lettered"], later["dead_lettered"], later["pending_too_long"]) == ([], [], 1)
    dead = drain(sqs, stack.dead_letter_queue_url)
    assert [m.attributes["source"] for m in dead] == ["state-machine"]


def test_a_sweep_remembers_an_execution_that_dead_lettered_itself_and_the_next_does_not_describe_it(
    stack, reconciler, monkeypatch
):
    """Every scheduled run lists the executions that ended FAILED within its hour of lookback. One that
    the workflow dead-lettered itself needs nothing, but only DescribeExecution tells (its error):
    without a marker each run described it again, twelve times an hour at the template's five-minute
    rate, and a run after a burst of poison messages described every one of them. The first sweep
    now leaves the marker the pending sweep leaves (`dead-lettered-by-state-machine`, expiring with
    the dead letter); the next finds it and describes nothing."""
    sqs = stack.client("sqs")
    failed = _dead_lettered_by_the_workflow(stack, "order-remembered")
    described: list[str] = []  # the ARNs of the DescribeExecution requests the sweeps make
    describe = StepFunctionResponse.describe_execution

    def counted(self):
        described.append(self._get_param("executionArn"))
        return describe(self)

    monkeypatch.setattr(StepFunctionResponse, "describe_execution", counted)

    first = reconciler.sweep()
    described_by_first = described.count(failed.arn)
    second = reconciler.sweep()

    assert (described_by_first, described.count(failed.arn) - described_by_first) == (1, 0)
    assert (first["dead_lettered"], second["dead_lettered"]) == ([], [])
    assert second["already_handled"] >= 1
    markers = scan(stack.client("dynamodb"), stack.outputs["ReconcilerTableName"])
    assert [m["state"] for m in markers if m["pk"] == f"execution#{failed.arn}"] == ["dead-lettered-by-state-machine"]
    assert [m.attributes["source"] for m in drain(sqs, stack.dead_letter_queue_url)] == ["state-machine"]


def test_a_failed_send_releases_its_claim_so_the_retry_sends(stack, reconciler, interrupts):
    [stopped] = start_and_stop(stack, interrupts, ["order-denied"])
    with _dead_letter_queue_denied(stack) as denied, pytest.raises(ClientError, match="AccessDenied"):
        reconciler.sweep()  # a function error: Lambda retries the invocation
    assert denied.injected == 1

    retried = reconciler.sweep()

    assert retried["dead_lettered"] == [stopped.arn]
    assert len(drain(stack.client("sqs"), stack.dead_letter_queue_url)) == 1


class _Killed(BaseException):
    """The function dies (timeout, out of memory): no except block of its code runs."""


def test_a_claim_left_by_a_crash_before_the_send_is_taken_over_once_stale(stack, reconciler, interrupts, monkeypatch):
    """Claim, then the run dies before the send: the claim blocks other runs only until it is stale
    (CLAIM_STALE_SECONDS, 900 in the template); then a run takes it over and sends."""
    [stopped] = start_and_stop(stack, interrupts, ["order-crash"])
    sender = sys.modules["reconciler.dead_letter"]
    kills: list[str] = []

    def killed(*args: object, **kwargs: object) -> str:
        kills.append("send")
        raise _Killed

    with monkeypatch.context() as patched:
        patched.setattr(sender, "send", killed)
        with pytest.raises(_Killed):
            reconciler.sweep()
    assert kills == ["send"]

    soon = reconciler.sweep(after=timedelta(minutes=5))
    stale = reconciler.sweep(after=timedelta(minutes=20))

    assert soon["dead_lettered"] == [] and soon["already_handled"] >= 1
    assert stale["dead_lettered"] == [stopped.arn]
    assert len(drain(stack.client("sqs"), stack.dead_letter_queue_url)) == 1


def _dead_letter_queue_denied(stack):
    """SendMessage to the DLQ denied: not retryable by boto3, so the run fails at once."""
    dead_letter_queue = stack.dead_letter_queue_url.rsplit("/", 1)[1]
    return faults.inject(
        SQSBackend,
        "send_message",
        lambda: SQSException("AccessDenied", "Injected fault: not authorized to send"),
        applies=lambda queue_name, *args, **kwargs: queue_name.endswith(dead_letter_queue),
        name="sqs.send_message:AccessDenied",
    )


def test_a_status_change_without_its_input_is_read_back_with_describe_execution(stack, reconciler, interrupts):
    """Step Functions leaves the input out of the event when input and output exceed 248 KB
    (https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html)."""
    [stopped] = start_and_stop(stack, interrupts, ["order-big"])
    described = stack.client("stepfunctions").describe_execution(executionArn=stopped.arn)
    event = status_change_event({**described, "input": None})
    event["detail"]["inputDetails"] = {"included": False}

    outcome = reconciler.status_change(event)

    assert outcome["dead_lettered"] == [stopped.arn]
    [dead] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert dead.body == json.dumps(order("order-big"))

"""End to end: producer → source queue → emulated event source → real starter → real state machine.

Messages are delivered to the starter exactly as the Lambda event source mapping would (batches,
partial batch responses, redelivery after the visibility timeout, the queue's redrive policy), and
R1–R3 are checked on the tables, the notifications and the dead-letter queue.

Every test runs on both state machine types. EXPRESS executions cannot be listed, described or
have their history read on AWS (ListExecutions, DescribeExecution and GetExecutionHistory are
Standard-only: https://docs.aws.amazon.com/step-functions/latest/dg/choosing-workflow-type.html),
so there the evidence about executions is what a user can read: the starter's own log lines (one
per record's outcome, with the execution ARN) and the execution ARNs on the tables.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from contextlib import AbstractContextManager
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.core.exceptions import AWSError

from onceflow.engine.stepfunctions.api import sync_execution
from onceflow.local.faults import Fault, inject, sns_publish_failures, start_execution_failures
from onceflow.local.pipeline import LocalPipeline
from onceflow.ops.observe import drain, scan
from tests.support import order

pytestmark = pytest.mark.parametrize("mode", ["STANDARD", "EXPRESS"], scope="module")


class _Logged(LocalPipeline):
    """The pipeline, with the starter's log lines kept (what CloudWatch Logs would hold)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.starter_logs = io.StringIO()
        super().__init__(*args, log_stream=self.starter_logs, **kwargs)

    def starter_outcomes(self) -> Counter[str]:
        """How many records the starter logged under each outcome message."""
        lines = [json.loads(line) for line in self.starter_logs.getvalue().splitlines() if line.strip()]
        return Counter(line["message"] for line in lines if "message" in line)


def _pipeline(embedded_aws, stack, **kwargs) -> _Logged:
    return _Logged(embedded_aws, stack, **kwargs)


def _execution_arns(stack) -> set[str]:
    dynamodb = stack.client("dynamodb")
    return {r["execution_arn"] for r in scan(dynamodb, stack.processed_events_table)}


FINISHED = "Execution finished the event"
DEAD_LETTERED_BY_WORKFLOW = "Execution dead-lettered the event"
ALREADY_SENT = "Already sent with this payload: acknowledged without an execution"


def _start_failures(mode: str) -> AbstractContextManager[Fault]:
    """The starter's call to Step Functions is denied (AccessDenied: not retried by the starter)."""
    if mode == "STANDARD":
        return start_execution_failures()
    return inject(
        sync_execution,
        "start",
        lambda: AWSError("Injected fault: not authorized", exception_type="AccessDeniedException"),
        name="stepfunctions.start_sync_execution:AccessDeniedException",
    )


def test_stream_with_duplicates_poison_and_resends_keeps_r1_r2_r3(embedded_aws, stack, mode):
    pipeline = _pipeline(embedded_aws, stack)
    orders = [order(f"order-{i}") for i in range(12)]
    resends = orders[:4]  # a producer sends these twice: new message ids, same event_id
    poison = ["not json", json.dumps({"customer_id": "c"}), json.dumps(order("order-bad", amount=-1))]
    pipeline.send([*orders, *resends, *poison])

    pipeline.process()

    dynamodb = stack.client("dynamodb")
    states = {r["event_id"]: r for r in scan(dynamodb, stack.processed_events_table)}
    rows = scan(dynamodb, stack.business_table)
    assert sorted(r["order_id"] for r in rows) == sorted(o["order_id"] for o in orders)  # R2: once each
    assert {r["status"] for r in states.values()} == {"sent"}
    notifications = pipeline.inbox.by_event_id()
    assert set(notifications) == {o["order_id"] for o in orders}  # R3: at least one each
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert sorted(m.body for m in dead) == sorted(poison)  # R1: the rest is in the DLQ, reason attached
    assert all(m.attributes["error"] == "Onceflow.InvalidMessage" and m.attributes["rule"] for m in dead)
    assert pipeline.event_source.stats.reported_failed == 0
    # A resend of an order already sent is acknowledged by the starter's pre-check (no execution),
    # or, if it came while the order was being processed (even in the same batch), goes to the workflow.
    outcomes = pipeline.starter_outcomes()
    skipped = outcomes[ALREADY_SENT]
    assert 0 <= skipped <= len(resends)
    if mode == "STANDARD":
        executions = pipeline.executions()
        assert len(executions) + skipped == len(orders) + len(resends)
        # Two executions of one event: the later one found the record (sent, or pending while the
        # first was still at work, then it resumes: publishes again and marks sent, R3 allows that).
        assert sum("Look up earlier record" in e.path for e in executions) + skipped == len(resends)
        assert {e.path[-1] for e in executions} <= {"Mark as sent", "Already sent"}
    else:
        # Every execution ran while the starter waited, and ended on a finishing path.
        assert outcomes[FINISHED] + skipped == len(orders) + len(resends)
        with pytest.raises(ClientError, match="StateMachineTypeNotSupported"):  # not listed, as on AWS
            stack.client("stepfunctions").list_executions(stateMachineArn=stack.state_machine_arn)
        assert all(":express:" in arn for arn in _execution_arns(stack))
        assert {r["execution_arn"] for r in rows} == _execution_arns(stack)


def test_crash_after_start_execution_is_redelivered_and_handed_over_once(embedded_aws, stack, mode):
    """STANDARD: the redelivered batch hits ExecutionAlreadyExists. EXPRESS: the crash comes after the
    executions finished (the starter was waiting on them), the redelivery finds them sent."""
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
    if mode == "STANDARD":
        assert len(pipeline.executions()) == 5  # the redelivered batch hit ExecutionAlreadyExists
    else:
        outcomes = pipeline.starter_outcomes()
        assert outcomes[FINISHED] == 5  # once each: the redelivery started none
        assert outcomes[ALREADY_SENT] == 5
    assert len(scan(stack.client("dynamodb"), stack.business_table)) == 5
    assert set(pipeline.inbox.by_event_id()) == {o["order_id"] for o in orders}
    assert drain(stack.client("sqs"), stack.dead_letter_queue_url) == []


def test_failing_starter_records_go_to_dlq_after_max_receive_count(embedded_aws, stack, mode):
    """A record that keeps failing is redelivered, then moved to the DLQ by the redrive policy."""
    pipeline = _pipeline(embedded_aws, stack)
    pipeline.send([order("order-1")])

    with _start_failures(mode) as fault:
        pipeline.process()

    max_receives = stack.event_source.max_receive_count
    assert fault.injected == max_receives
    assert pipeline.event_source.stats.reported_failed == max_receives
    assert pipeline.executions() == []
    assert not (pipeline.starter_outcomes().keys() & {FINISHED, DEAD_LETTERED_BY_WORKFLOW, "Execution started"})
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert [m.json["order_id"] for m in dead] == ["order-1"]


def test_sns_outage_then_dlq_redrive_publishes_without_rewriting(embedded_aws, stack, mode):
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
    if mode == "EXPRESS":  # acknowledged because the workflow dead-lettered them itself
        assert pipeline.starter_outcomes()[DEAD_LETTERED_BY_WORKFLOW] == 3
        assert pipeline.event_source.stats.reported_failed == 0

    pipeline.send([m.body for m in dead])  # redrive: the original bodies back to the source queue
    pipeline.process()

    assert {r["status"] for r in scan(dynamodb, stack.processed_events_table)} == {"sent"}
    assert len(scan(dynamodb, stack.business_table)) == 3
    assert pipeline.inbox.by_event_id() == {o["order_id"]: 1 for o in orders}

"""Guarantee (R1 and R5, FIFO source with STANDARD workflows): a redelivered record whose execution
already ended is acknowledged only after the starter read how it ended, and one that ended outside
the workflow's paths is dead-lettered by the starter before the group's next record goes on.

The starter acknowledges a FIFO record only once its execution ended on a path that finished or
dead-lettered the event (docs/ARCHITECTURE.md, "FIFO sources"). When its wait runs out (or the
invocation dies) the record goes back to SQS with its execution still going; the redelivery has the
same execution name, so StartExecution answers ExecutionAlreadyExists for a closed execution
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html) and the
starter must then read the execution (DescribeExecution) as it would have after starting it. A
starter that acknowledged "already started" without that read would let an execution stopped, timed
out or failed by an uncaught error go without the starter's dead letter (the reconciler's comes
later, if at all before its checkpoint passes it), and would start the group's next record while
one still running has not ended.

Each test: the group's two records arrive in one batch from the real FIFO source queue; the first
invocation's wait runs out at once (its context has no time beyond the starter's safety margin), so
both records go back to SQS with the first one's execution started; that execution then ends one
way (or is held running); SQS delivers the two again.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from onceflow.devtools.schedules.hooks import STOP_ERROR, ExecutionInterrupts
from onceflow.engine import EmbeddedAws
from onceflow.local.event_source import SqsEventSource
from onceflow.local.faults import sns_publish_failures, sqs_send_failures
from onceflow.local.function_runtime import LambdaContext, StarterRuntime
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import wait_for, wait_for_all
from onceflow.ops.observe import scan
from starter import clients, executions, throttling
from tests.conftest import fresh_stack
from tests.starter.helpers import metric_totals
from tests.support import RetryHold, order

# The injected SQS error code is not in botocore's SQS model; moto warns and still returns it.
pytestmark = pytest.mark.filterwarnings("ignore:Exception\\(SQSException\\):UserWarning")

GROUP = "customer-7"
FIRST, NEXT = "order-first", "order-next"
# A context with time for one StartExecution (the SDK's own retries counted) and the starter's safety
# margin, no more, on a clock that stands still: StartExecution, then the wait gives up.
ONE_CALL = throttling.sdk_retry_seconds(clients.MAX_ATTEMPTS) + clients.MAX_ATTEMPTS * throttling.CALL_LATENCY_SECONDS
WAIT_RUNS_OUT = LambdaContext(function_name="starter", timeout_seconds=int(executions.SAFETY_MARGIN_SECONDS + ONE_CALL))


@pytest.fixture
def fifo_stack(request: pytest.FixtureRequest, embedded_aws: EmbeddedAws) -> LocalStack:
    """SourceQueueType=FIFO with STANDARD workflows (shares the session's deployment of that mode)."""
    return fresh_stack(embedded_aws, request.getfixturevalue("_deployed"), mode="FIFO")


@dataclass
class PollPauses:
    """Stands in for the starter's pause between DescribeExecution polls (`executions.poll_sleep`): it
    lets the executions run until none is running (a bounded wait), so the poll after it finds the
    awaited execution ended: no real sleep of the starter's delays, and no busy loop. `held` keeps
    one execution running through the first pause, then lets it go on."""

    sfn: Any
    state_machine_arn: str
    held: RetryHold | None = None
    requested: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.requested.append(seconds)
        if self.held is not None and not self.held.released.is_set():
            if len(self.requested) == 1:
                return  # the first poll finds the held execution still running
            self.held.released.set()
        wait_for_all(self.sfn, self.state_machine_arn, timeout=30)


@dataclass
class Group:
    """Two records of one message group on the FIFO source, delivered to the real starter."""

    stack: LocalStack
    starter: StarterRuntime
    message_ids: dict[str, str] = field(default_factory=dict)  # event_id -> SQS message id
    responses: list[dict[str, Any]] = field(default_factory=list)

    def send(self) -> None:
        sqs = self.stack.client("sqs")
        for event_id in (FIRST, NEXT):
            sent = sqs.send_message(
                QueueUrl=self.stack.source_queue_url, MessageBody=json.dumps(order(event_id)), MessageGroupId=GROUP
            )
            self.message_ids[event_id] = sent["MessageId"]

    def deliver(self, invoke: Callable[[dict[str, Any]], dict[str, Any]]) -> list[str]:
        """One batch from the queue to `invoke`; returns the event_ids it reported failed."""

        def recorded(event: dict[str, Any]) -> dict[str, Any]:
            response = invoke(event)
            self.responses.append(response)
            return response

        source = SqsEventSource(
            self.stack.client("sqs"), self.stack.source_queue_url, self.stack.event_source, recorded
        )
        assert source.poll_once() == 2, "both records of the group came in one batch"
        by_message = {message_id: event_id for event_id, message_id in self.message_ids.items()}
        return [by_message[f["itemIdentifier"]] for f in self.responses[-1]["batchItemFailures"]]

    def deliver_with_the_wait_running_out(self) -> list[str]:
        monotonic = throttling.monotonic
        throttling.monotonic = lambda: 0.0  # the invocation's own clock stands still: the context's count holds
        try:
            return self.deliver(lambda event: self.starter.handler(event, WAIT_RUNS_OUT))
        finally:
            throttling.monotonic = monotonic

    def deliver_again(self) -> list[str]:
        return self.deliver(self.starter.invoke)


def _executions(stack: LocalStack) -> dict[str, dict[str, Any]]:
    """Each event's executions, described (event_id -> DescribeExecution), by the input's event_id."""
    sfn = stack.client("stepfunctions")
    found: dict[str, dict[str, Any]] = {}
    for listed in sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]:
        described = sfn.describe_execution(executionArn=listed["executionArn"])
        event_id = json.loads(described["input"])["event_id"]
        assert event_id not in found, f"{event_id} was started twice"
        found[event_id] = described
    return found


def _fifo_dead_letters(stack: LocalStack) -> list[dict[str, Any]]:
    """The FIFO dead-letter queue's messages (received and deleted): reason attributes and group."""
    sqs = stack.client("sqs")
    letters: list[dict[str, Any]] = []
    while messages := sqs.receive_message(
        QueueUrl=stack.dead_letter_queue_url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageAttributeNames=["All"],
    ).get("Messages", []):
        for message in messages:
            attributes = {k: v.get("StringValue") for k, v in message.get("MessageAttributes", {}).items()}
            letters.append(
                {"group": message["Attributes"].get("MessageGroupId"), "body": message["Body"], **attributes}
            )
            sqs.delete_message(QueueUrl=stack.dead_letter_queue_url, ReceiptHandle=message["ReceiptHandle"])
    return letters


@dataclass(frozen=True)
class Ending:
    status: str
    error: str | None  # DescribeExecution's error
    starter_dead_letters_it: bool  # outside the workflow's paths: nobody else has dead-lettered it yet


ENDINGS = {
    # Its event is sent: the batch's already-sent lookup acknowledges it before any StartExecution.
    "succeeded": Ending("SUCCEEDED", None, False),
    "dead-lettered by the workflow": Ending("FAILED", "Onceflow.DeadLettered", False),
    "failed by an uncaught error": Ending("FAILED", "SQS.SdkClientException", True),
    "timed out": Ending("TIMED_OUT", None, True),
    "stopped by an operator": Ending("ABORTED", STOP_ERROR, True),
}


@contextmanager
def _ending(how: str, stack: LocalStack) -> Iterator[None]:
    """The faults or interrupt that make the first record's execution end `how` (active until it ended)."""
    with ExitStack() as active:
        faults = []
        if how in ("dead-lettered by the workflow", "failed by an uncaught error"):
            faults.append(active.enter_context(sns_publish_failures()))  # Publish fails beyond its retries
        if how == "failed by an uncaught error":
            dead_letter_queue = stack.dead_letter_queue_url.rsplit("/", 1)[-1]
            faults.append(active.enter_context(sqs_send_failures(dead_letter_queue)))  # so does the dead letter
        interrupts = active.enter_context(ExecutionInterrupts(stack.client("stepfunctions")).installed())
        if how in ("timed out", "stopped by an operator"):
            interrupts.arm(FIRST, "Publish notification", "timeout" if how == "timed out" else "stop")
        yield
        assert all(fault.injected >= 1 for fault in faults), "every fault really happened"
        assert len(interrupts.fired) == (1 if how in ("timed out", "stopped by an operator") else 0)


def _assert_dead_lettered_by_the_starter(letters: list[dict[str, Any]], ending: Ending, message_id: str) -> None:
    """One letter from the starter, in the record's group, with how the execution ended as its reason."""
    from_starter = [letter for letter in letters if letter["source"] == "starter"]
    assert len(from_starter) == 1, (
        f"an execution that ended {ending.status} ({ending.error}) was acknowledged without the starter's dead letter"
    )
    [letter] = from_starter
    assert (letter["group"], letter["source_message_id"], letter["event_id"]) == (GROUP, message_id, FIRST)
    assert (letter["field"], letter["rule"]) == ("execution", ending.status)
    assert letter["error"] == (ending.error or f"Execution.{ending.status}")
    assert json.loads(letter["body"]) == order(FIRST)  # the original body, to redrive


def _business_rows(stack: LocalStack) -> list[str]:
    return sorted(row["order_id"] for row in scan(stack.client("dynamodb"), stack.business_table))


@pytest.mark.parametrize("how", list(ENDINGS))
def test_a_redelivered_record_whose_execution_ended_is_settled_by_how_it_ended(fifo_stack, monkeypatch, how):
    ending = ENDINGS[how]
    sfn = fifo_stack.client("stepfunctions")
    pauses = PollPauses(sfn, fifo_stack.state_machine_arn)
    monkeypatch.setattr(executions, "poll_sleep", pauses)
    logs = io.StringIO()
    group = Group(fifo_stack, StarterRuntime(fifo_stack, log_stream=logs))
    group.send()

    with _ending(how, fifo_stack):
        assert group.deliver_with_the_wait_running_out() == [FIRST, NEXT], "the wait ran out: both back to SQS"
        first = wait_for(sfn, _executions(fifo_stack)[FIRST]["executionArn"])
    assert list(_executions(fifo_stack)) == [FIRST], "the group's next record was not started meanwhile"
    described = sfn.describe_execution(executionArn=first.arn)
    assert (described["status"], described.get("error")) == (ending.status, ending.error), f"it {how}"

    assert group.deliver_again() == [], "the redelivery settles both"

    started = _executions(fifo_stack)
    assert set(started) == {FIRST, NEXT}, "no second execution of the first record"
    assert started[NEXT]["status"] == "SUCCEEDED"
    assert started[NEXT]["startDate"] >= started[FIRST]["stopDate"], "the next record waited for the first"
    letters = _fifo_dead_letters(fifo_stack)
    if ending.starter_dead_letters_it:
        _assert_dead_lettered_by_the_starter(letters, ending, group.message_ids[FIRST])
        assert metric_totals(logs)["EndedExecutionsDeadLettered"] == 1
    else:
        assert [letter for letter in letters if letter["source"] == "starter"] == [], "it needs none from the starter"
    from_workflow = [letter for letter in letters if letter["source"] == "state-machine"]
    assert len(from_workflow) == (1 if how == "dead-lettered by the workflow" else 0)
    assert _business_rows(fifo_stack) == [FIRST, NEXT]


def test_a_redelivered_record_whose_execution_still_runs_is_waited_for_before_the_groups_next(
    fifo_stack, embedded_aws, monkeypatch
):
    """The first record's execution is held at its Publish retry (recorded, first publish failed)
    through the redelivery's first poll: the starter must poll it until it ended before it starts
    the group's next record. (StartExecution with the name and input of a running execution
    succeeds with the same answer, API_StartExecution.html, so the redelivery's outcome is "started"
    here, not "already started": what this guards is the wait itself going on while it runs.)"""
    sfn = fifo_stack.client("stepfunctions")
    held = RetryHold()
    monkeypatch.setattr(embedded_aws.clock, "sleep", held.sleep)
    pauses = PollPauses(sfn, fifo_stack.state_machine_arn, held=held)
    monkeypatch.setattr(executions, "poll_sleep", pauses)
    logs = io.StringIO()
    group = Group(fifo_stack, StarterRuntime(fifo_stack, log_stream=logs))
    group.send()

    try:
        with sns_publish_failures(times=1) as outage:
            assert group.deliver_with_the_wait_running_out() == [FIRST, NEXT]
            held.wait_until_reached()
            assert group.deliver_again() == [], "the redelivery settles both"
    finally:
        held.released.set()
    assert outage.injected == 1

    started = _executions(fifo_stack)
    assert set(started) == {FIRST, NEXT}
    assert started[FIRST]["status"] == "SUCCEEDED" and started[NEXT]["status"] == "SUCCEEDED"
    assert started[NEXT]["startDate"] >= started[FIRST]["stopDate"], (
        "the group's next record started while the first one's execution was still running"
    )
    assert len(pauses.requested) >= 3, "the first record was polled while running, then again; then the next"
    assert metric_totals(logs)["SyncExecutionsFinished"] == 2
    assert _fifo_dead_letters(fifo_stack) == []

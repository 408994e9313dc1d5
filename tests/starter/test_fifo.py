"""A FIFO source (SourceQueueType FIFO), both workflow types: the real starter on the embedded AWS.

What AWS asks of a FIFO consumer with partial batch responses
(https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html, "Implementing
partial batch responses"): stop processing at the first failure of a message group and return it
and the group's later records in batchItemFailures. R5 adds: a record is acknowledged only once its
effects are done or it is dead-lettered, so the group's next record cannot overtake it. A FIFO
queue's dead-letter queue must be FIFO
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html),
and a FIFO SendMessage needs a MessageGroupId and a MessageDeduplicationId (or content-based
deduplication) (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.sqs.exceptions import SQSException
from moto.sqs.responses import SQSResponse

from onceflow.devtools.schedules.hooks import ExecutionInterrupts
from onceflow.engine import EmbeddedAws
from onceflow.local.event_source import SqsEventSource
from onceflow.local.faults import inject, step_functions_throttling
from onceflow.local.function_runtime import LambdaContext, StarterRuntime
from onceflow.local.stack import LocalStack
from onceflow.ops.observe import NotificationInbox, scan
from onceflow.ops.workflow import PUBLISH
from starter import clients, executions, throttling
from tests.conftest import fresh_stack
from tests.starter.helpers import failed_ids, log_lines, metric_totals
from tests.support import order, sqs_event, sqs_record


@pytest.fixture(scope="module", params=["STANDARD", "EXPRESS"])
def workflow_type(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def fifo_stack(request: pytest.FixtureRequest, embedded_aws: EmbeddedAws, workflow_type: str) -> LocalStack:
    """The FIFO stack as just deployed (restored from the session's deployment of this mode)."""
    mode = "FIFO" if workflow_type == "STANDARD" else "FIFO_EXPRESS"
    return fresh_stack(embedded_aws, request.getfixturevalue("_deployed"), mode=mode)


@pytest.fixture
def logs() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def starter(
    fifo_stack: LocalStack, logs: io.StringIO, monkeypatch: pytest.MonkeyPatch, starter_polls_wait_on_the_engine: None
) -> StarterRuntime:
    monkeypatch.setattr(executions, "sleep", lambda seconds: None)  # the throttling backoff: not slept
    return StarterRuntime(fifo_stack, log_stream=logs)


def record(order_id: str, group: str, message_id: str, **extra: Any) -> dict[str, Any]:
    made = sqs_record(order(order_id, **extra), message_id=message_id)
    made["attributes"].update(MessageGroupId=group, MessageDeduplicationId=message_id, SequenceNumber="1")
    return made


def rows(stack: LocalStack) -> list[str]:
    return sorted(row["order_id"] for row in scan(stack.client("dynamodb"), stack.business_table))


def fifo_dead_letters(stack: LocalStack) -> list[dict[str, Any]]:
    """The dead-letter queue's messages (received and deleted): reason attributes and MessageGroupId."""
    sqs = stack.client("sqs")
    found = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=stack.dead_letter_queue_url,
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return found
        for message in messages:
            attributes = {k: v.get("StringValue") for k, v in message.get("MessageAttributes", {}).items()}
            found.append({"group": message["Attributes"].get("MessageGroupId"), **attributes})
            sqs.delete_message(QueueUrl=stack.dead_letter_queue_url, ReceiptHandle=message["ReceiptHandle"])


class HandOverRecorder:
    """Wraps the starter's hand-over calls (StartExecution, StartSyncExecution, the wait): records
    when each event's hand-over begins and ends, and can fail one event's or hold one (bounded)
    until another event's began."""

    def __init__(self, app: Any, monkeypatch: pytest.MonkeyPatch):
        self.events: list[tuple[str, str]] = []  # (enter|leave, event_id)
        self.lock = threading.Lock()
        self.fail: set[str] = set()
        self.hold: str | None = None
        self.other_began = threading.Event()
        self.held_until_other_began = False
        self.waits = app.Settings.from_environment().waits_for_standard_executions
        for name in ("start_execution", "run_sync_execution", "wait_for_execution"):
            monkeypatch.setattr(app, name, self._wrap(getattr(app, name), name))

    def _note(self, what: str, event_id: str) -> None:
        with self.lock:
            self.events.append((what, event_id))

    def _wrap(self, real: Callable[..., Any], name: str) -> Callable[..., Any]:
        def wrapped(sfn: Any, *args: Any) -> Any:
            if name == "wait_for_execution":
                result = real(sfn, *args)
                self._note("leave", result.name.split("-")[0] + "-" + result.name.split("-")[1])
                return result
            event_id = args[1].event_id
            self._note("enter", event_id)
            if event_id == self.hold:
                self.held_until_other_began = self.other_began.wait(timeout=10)
            else:
                self.other_began.set()
            if event_id in self.fail:
                raise ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "injected"}}, name)
            result = real(sfn, *args)
            if not (name == "start_execution" and self.waits):
                self._note("leave", event_id)
            return result

        return wrapped

    def order_of(self, kind: str) -> list[str]:
        return [event for what, event in self.events if what == kind]


def test_the_template_makes_fifo_queues_and_a_starter_that_waits(fifo_stack, workflow_type):
    sqs = fifo_stack.client("sqs")
    source = sqs.get_queue_attributes(QueueUrl=fifo_stack.source_queue_url, AttributeNames=["All"])["Attributes"]
    dead = sqs.get_queue_attributes(QueueUrl=fifo_stack.dead_letter_queue_url, AttributeNames=["All"])["Attributes"]
    assert fifo_stack.source_queue_url.endswith(".fifo") and source["FifoQueue"] == "true"
    assert source["ContentBasedDeduplication"] == "true"
    assert fifo_stack.dead_letter_queue_url.endswith(".fifo") and dead["FifoQueue"] == "true"
    assert fifo_stack.starter_environment["SOURCE_QUEUE_TYPE"] == "FIFO"
    assert fifo_stack.starter_environment["SYNC_EXECUTION_TIMEOUT_SECONDS"] == "315"
    assert (fifo_stack.starter_timeout, fifo_stack.event_source.visibility_timeout) == (330, 1980)
    assert fifo_stack.event_source.batching_window_seconds == 0


def test_a_group_runs_in_order_one_after_the_other_and_groups_side_by_side(fifo_stack, starter, logs, monkeypatch):
    recorder = HandOverRecorder(starter.module, monkeypatch)
    # a-1 waits (bounded) until another group's record began: only groups side by side get there.
    recorder.hold = "a-1"
    batch = [
        record("a-1", "A", "m-a1"),
        record("b-1", "B", "m-b1"),
        record("a-2", "A", "m-a2"),
        record("b-2", "B", "m-b2"),
        record("a-3", "A", "m-a3"),
    ]
    response = starter.invoke(sqs_event(*batch))

    assert response == {"batchItemFailures": []}
    assert recorder.held_until_other_began, "group B started while group A's first record was held: groups side by side"
    entered = recorder.order_of("enter")
    assert [e for e in entered if e.startswith("a")] == ["a-1", "a-2", "a-3"]
    assert [e for e in entered if e.startswith("b")] == ["b-1", "b-2"]
    # one after the other: within a group, a record is handed over only after the previous one ended
    for group in ("a", "b"):
        sequence = [(what, e) for what, e in recorder.events if e.startswith(group) and what in ("enter", "leave")]
        assert [what for what, _ in sequence] == ["enter", "leave"] * (len(sequence) // 2), sequence
    assert rows(fifo_stack) == ["a-1", "a-2", "a-3", "b-1", "b-2"]
    finished = metric_totals(logs)
    assert finished.get("SyncExecutionsFinished", 0) == 5


def test_a_groups_first_failure_fails_it_and_its_later_records_unattempted(fifo_stack, starter, logs, monkeypatch):
    recorder = HandOverRecorder(starter.module, monkeypatch)
    recorder.fail.add("a-2")
    batch = [
        record("a-1", "A", "m-a1"),
        record("a-2", "A", "m-a2"),
        record("b-1", "B", "m-b1"),
        record("a-3", "A", "m-a3"),
        record("b-2", "B", "m-b2"),
    ]
    response = starter.invoke(sqs_event(*batch))

    assert failed_ids(response) == ["m-a2", "m-a3"]
    assert "a-3" not in recorder.order_of("enter"), "a later record of the failed group is not attempted"
    assert rows(fifo_stack) == ["a-1", "b-1", "b-2"]
    [held] = [line for line in log_lines(logs) if line.get("message", "").startswith("An earlier record")]
    assert held["message_group_id"] == "A" and held["held_back"] == ["m-a3"]
    assert metric_totals(logs)["GroupRecordsHeldBack"] == 1


def test_an_invalid_message_is_dead_lettered_in_its_group_and_the_group_goes_on(fifo_stack, starter, logs):
    invalid = record("a-2", "A", "m-a2")
    invalid["body"] = "not json"
    response = starter.invoke(sqs_event(record("a-1", "A", "m-a1"), invalid, record("a-3", "A", "m-a3")))

    assert response == {"batchItemFailures": []}
    assert rows(fifo_stack) == ["a-1", "a-3"]
    [letter] = fifo_dead_letters(fifo_stack)
    assert letter["group"] == "A" and letter["source"] == "starter" and letter["source_message_id"] == "m-a2"


def test_the_workflow_dead_letters_a_conflict_into_the_fifo_queue_with_its_group(fifo_stack, starter, logs):
    """The ASL's FIFO branch (Send to FIFO dead-letter queue) on the real interpreter."""
    assert starter.invoke(sqs_event(record("c-1", "C", "m-first"))) == {"batchItemFailures": []}

    response = starter.invoke(sqs_event(record("c-1", "C", "m-conflict", amount=7), record("c-2", "C", "m-next")))

    assert response == {"batchItemFailures": []}
    [letter] = fifo_dead_letters(fifo_stack)
    assert letter["group"] == "C" and letter["source"] == "state-machine"
    assert letter["source_message_id"] == "m-conflict"
    assert metric_totals(logs)["SyncExecutionsDeadLettered"] == 1
    assert rows(fifo_stack) == ["c-1", "c-2"]


def test_acknowledged_means_done_rows_and_notifications_exist_when_the_handler_returns(fifo_stack, starter):
    inbox = NotificationInbox(fifo_stack.client("sns"), fifo_stack.client("sqs"), fifo_stack.notification_topic_arn)
    response = starter.invoke(sqs_event(*[record(f"o-{n}", "G", f"m-{n}") for n in range(4)]))

    assert response == {"batchItemFailures": []}
    assert rows(fifo_stack) == [f"o-{n}" for n in range(4)]
    assert inbox.by_event_id() == {f"o-{n}": 1 for n in range(4)}


@pytest.mark.parametrize("workflow_type", ["STANDARD"])  # EXPRESS's StartSyncExecution waits by itself
def test_standard_a_wait_that_runs_out_leaves_the_record_and_the_redelivery_waits_again(
    fifo_stack, workflow_type, starter, logs, monkeypatch
):
    sfn = fifo_stack.client("stepfunctions")

    def started_names() -> list[str]:
        listed = sfn.list_executions(stateMachineArn=fifo_stack.state_machine_arn)["executions"]
        return sorted(execution["name"].rsplit("-", 1)[0] for execution in listed)

    first = record("w-1", "W", "m-w1")
    later = record("w-2", "W", "m-w2")
    # Time for one StartExecution (with the SDK's own retries) and the safety margin, no more, on a
    # clock that stands still: the execution is started, then the wait gives up at once.
    one_call = (
        throttling.sdk_retry_seconds(clients.MAX_ATTEMPTS) + clients.MAX_ATTEMPTS * throttling.CALL_LATENCY_SECONDS
    )
    short = LambdaContext(function_name="starter", timeout_seconds=int(executions.SAFETY_MARGIN_SECONDS + one_call))
    monkeypatch.setattr(throttling, "monotonic", lambda: 0.0)

    response = starter.handler(sqs_event(first, later), short)

    assert failed_ids(response) == ["m-w1", "m-w2"]
    assert started_names() == ["w-1"], "w-2 is not started while w-1 is unfinished"

    again = starter.invoke(sqs_event(first, later))

    assert again == {"batchItemFailures": []}
    assert started_names() == ["w-1", "w-2"], "the redelivery waited for w-1's execution, not a second one"
    assert rows(fifo_stack) == ["w-1", "w-2"]


@pytest.mark.parametrize("workflow_type", ["STANDARD"])  # an EXPRESS execution cannot be stopped from outside
def test_standard_an_execution_that_ended_outside_the_paths_is_dead_lettered_by_the_starter(
    fifo_stack, workflow_type, starter, logs
):
    # Stopped by an operator while it runs, on entering Publish (an operator's StopExecution as the
    # fault schedules make it: it lands while the execution runs, never after it succeeded, which a
    # stop sent once StartExecution returned could, and once did in a suite run). How it then ends is
    # the engine's: ABORTED, or FAILED if the stop lands inside a state; either is outside the
    # workflow's own paths.
    sfn = fifo_stack.client("stepfunctions")
    interrupts = ExecutionInterrupts(sfn)
    interrupts.arm("s-1", PUBLISH, "stop")
    with interrupts.installed():
        response = starter.invoke(sqs_event(record("s-1", "S", "m-s1"), record("s-2", "S", "m-s2")))

    assert [fired.event_id for fired in interrupts.fired] == ["s-1"]
    stopped = [fired.execution_arn for fired in interrupts.fired]
    assert response == {"batchItemFailures": []}
    letters = fifo_dead_letters(fifo_stack)
    from_starter = [letter for letter in letters if letter["source"] == "starter"]
    assert len(from_starter) == 1
    assert from_starter[0]["group"] == "S" and from_starter[0]["source_message_id"] == "m-s1"
    ended = sfn.describe_execution(executionArn=stopped[0])
    assert ended["status"] in ("ABORTED", "FAILED") and ended.get("error") != "Onceflow.DeadLettered"
    assert from_starter[0]["rule"] == ended["status"] and from_starter[0]["field"] == "execution"
    assert metric_totals(logs)["EndedExecutionsDeadLettered"] == 1
    assert "s-2" in rows(fifo_stack)


class ThrottledGroup:
    """One message group of three sent to the FIFO source, an event source on a clock of simulated
    seconds (a record's visibility timeout runs out on it), and Step Functions throttling the mode's
    start call while asked. Each invocation waits the throttle out to its end (the backoff is not
    slept), then the starter reports the group failed."""

    def __init__(self, stack: LocalStack, starter: StarterRuntime, workflow_type: str, group: str):
        self.stack, self.sqs, self.now = stack, stack.client("sqs"), 0.0
        self.order_ids = [f"{group}-{n}" for n in range(3)]
        for order_id in self.order_ids:
            self.sqs.send_message(
                QueueUrl=stack.source_queue_url,
                MessageBody=json.dumps(order(order_id)),
                MessageGroupId=group,
                MessageDeduplicationId=order_id,
            )
        self.receives: list[tuple[float, list[int]]] = []  # (clock, each record's ApproximateReceiveCount)

        def invoke(event: dict[str, Any]) -> dict[str, Any]:
            self.receives.append(
                (self.now, [int(r["attributes"]["ApproximateReceiveCount"]) for r in event["Records"]])
            )
            return starter.invoke(event)

        self.source = SqsEventSource(
            self.sqs, stack.source_queue_url, stack.event_source, invoke, clock=lambda: self.now
        )
        self.operation = "start_execution" if workflow_type == "STANDARD" else "start_sync_execution"

    def run_until(self, until: float, step: float = 600.0) -> None:
        while self.now < until:
            self.source.poll_once()
            self.now += step

    def moved_to_the_dead_letter_queue(self) -> list[dict[str, Any]]:
        return fifo_dead_letters(self.stack)


def test_a_group_throttled_for_hours_stays_in_flight_and_is_applied_in_order_after_it(
    fifo_stack, starter, logs, workflow_type, monkeypatch
):
    """Issue 19's "no valid event dead-lettered because of throttling" on a FIFO source. Six hours
    of throttling is more than MaxReceiveCount (5) rounds of the queue's visibility timeout (1980 s:
    about 2.75 h); the starter keeps the group in flight 30 min, 1 h, 2 h, 4 h (starter/throttling.py),
    so it spends 4 receives in those six hours, and the group then goes through, in order.
    Fails when the starter only reports the group failed (each round then lasts the queue's 1980 s
    and the redrive policy moves all three to the dead-letter queue), or when the event source
    resets the visibility the function set (onceflow/local/event_source.py)."""
    monkeypatch.setattr(throttling, "MAX_BACKOFF_SECONDS", 60)  # fewer, longer (unslept) waits per invocation
    group = ThrottledGroup(fifo_stack, starter, workflow_type, "t")
    assert fifo_stack.event_source.max_receive_count == 5
    recorder = HandOverRecorder(starter.module, monkeypatch)

    with step_functions_throttling(operation=group.operation) as throttle:
        group.run_until(6 * 3600)

    assert throttle.injected >= 4  # every round's start really was throttled
    assert group.receives == [(0, [1, 1, 1]), (1800, [2, 2, 2]), (5400, [3, 3, 3]), (12600, [4, 4, 4])]
    held = [line for line in log_lines(logs) if line.get("message", "").endswith("its records stay in flight")]
    assert [line["visibility_timeout_seconds"] for line in held] == [1800, 3600, 7200, 14400]
    assert all(len(line["held"]) == 3 and line["not_held"] == [] for line in held)
    assert metric_totals(logs)["ThrottledRecordsHeldInFlight"] == 12
    assert rows(fifo_stack) == []

    group.run_until(12 * 3600)  # the throttle is over: the group comes back when its last hold ends

    assert group.receives[4:] == [(27000, [5, 5, 5])]
    assert group.moved_to_the_dead_letter_queue() == []
    assert rows(fifo_stack) == group.order_ids
    assert recorder.order_of("leave") == group.order_ids  # applied one after the other, in order


def test_a_failing_change_of_visibility_still_reports_the_group_failed_and_loses_nothing(
    fifo_stack, starter, logs, workflow_type, monkeypatch
):
    """ChangeMessageVisibilityBatch refused (SQS throttles the call; counted): the group is reported failed as
    before the hold existed, comes back after the queue's visibility timeout, and goes through."""
    monkeypatch.setattr(throttling, "MAX_BACKOFF_SECONDS", 60)
    group = ThrottledGroup(fifo_stack, starter, workflow_type, "f")
    refused = inject(
        SQSResponse,
        "change_message_visibility_batch",
        lambda: SQSException("RequestThrottled", "Request is throttled."),
    )
    with step_functions_throttling(operation=group.operation) as throttle, refused as refusal:
        group.run_until(600)

    assert throttle.injected >= 1
    assert refusal.injected == refusal.calls >= 1  # every attempt refused (the SDK retries a throttled call)
    assert group.source.stats.reported_failed == 3
    warnings = [line for line in log_lines(logs) if line.get("message", "").startswith("Could not keep throttled")]
    assert len(warnings) == 1 and warnings[0]["error_code"] == "RequestThrottled"
    assert metric_totals(logs)["ThrottledRecordsNotHeldInFlight"] == 3

    group.run_until(3 * 3600)

    assert [when for when, _ in group.receives] == [0, 2400]  # back after the queue's 1980 s (polled every 600 s)
    assert group.moved_to_the_dead_letter_queue() == []
    assert rows(fifo_stack) == group.order_ids

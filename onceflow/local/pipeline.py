"""The whole pipeline on the embedded AWS: stack from template.yaml, the real starter behind an
emulated SQS event source, the real reconciler behind the emulated safety net rule and its
schedule, and a notification inbox. Used by the CLI, the demo and the tests."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

from onceflow.devtools.trace.collect import collect
from onceflow.engine import REGION, EmbeddedAws
from onceflow.engine import speedups as engine_speedups
from onceflow.engine.speedups.idle_gates import IdleGates
from onceflow.local.event_source import Invoke, SqsEventSource
from onceflow.local.function_runtime import FunctionRuntime, StarterRuntime
from onceflow.local.safety_net import AsyncInvoker, SafetyNet, ScheduledRuns, StatusEventLoss
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult, ExecutionTimeout, list_executions, wait_for
from onceflow.ops.observe import NotificationInbox

# Durations in a function's environment that the local run fast-forwards, as the engine scales
# Retry and Wait delays (0 in tests): an event is "pending too long" after the threshold x time_scale.
FAST_FORWARDED_SECONDS = ("PENDING_THRESHOLD_SECONDS",)


def fast_forwarded(environment: dict[str, str], time_scale: float) -> dict[str, str]:
    return {
        name: str(round(float(environment[name]) * time_scale))
        for name in FAST_FORWARDED_SECONDS
        if name in environment
    }


DEFAULT_MESSAGE_GROUP = "onceflow-default"


def message_group_of(stack: LocalStack, body: str) -> str:
    """A FIFO message's group when the sender names none: one group per event (the domain's event_id),
    so a resend of an event queues behind its first send; a body without one goes to a default group."""
    return stack.domain.event_id_of(body) or DEFAULT_MESSAGE_GROUP


@dataclass(frozen=True)
class RoundReport:
    """What one background round of `onceflow start` did."""

    handled: int  # records the starter got
    routed: int  # ended executions the safety net sent to the reconciler
    notified: int = 0  # records the subscribers got (DeploySubscriber=true)


@dataclass
class SentMessage:
    message_id: str
    body: str


class LocalPipeline:
    def __init__(
        self,
        aws: EmbeddedAws,
        stack: LocalStack,
        log_stream: IO[str] | None = None,
        invoke_wrapper: Callable[[Invoke], Invoke] | None = None,
        status_event_loss: StatusEventLoss | None = None,
        subscriber_wrapper: Callable[[Invoke], Invoke] | None = None,
        keep_acknowledged: bool = True,
        notification_inbox: bool = True,
    ):
        """`keep_acknowledged`: keep every acknowledged record (event_source.acknowledged_records) for
        a run that hands some to the starter again; a long-running `onceflow start` keeps none.
        `notification_inbox`: subscribe a queue of its own to the topic to read the notifications (the
        demo's and the tests' evidence); a long-running `onceflow start`, which nobody reads it in,
        makes none (each notification was delivered to it and drained again for nothing)."""
        self.aws = aws
        self.stack = stack
        self.sqs = stack.client("sqs")
        self.sfn = stack.client("stepfunctions")
        self.inbox = (
            NotificationInbox(stack.client("sns"), self.sqs, stack.notification_topic_arn)
            if notification_inbox
            else None
        )
        self.starter = StarterRuntime(stack, log_stream=log_stream)
        # The starter's throttling backoff (starter/throttling.py) sleeps on the engine's clock:
        # scaled by time_scale (0 in tests) and recorded with botocore's back-offs, as Retry delays are.
        # A re-queued throttled record's SQS delay (up to 900 s) is fast-forwarded the same way. Its
        # DescribeExecution polls (FIFO STANDARD) wait on the engine for an execution's end instead
        # (at time scale 0 an unslept poll would spin against the execution's thread).
        from starter import executions as starter_executions
        from starter import throttling as starter_throttling

        starter_executions.sleep = aws.clock.sdk_sleep
        starter_executions.poll_sleep = aws.clock.poll_sleep
        starter_throttling.MAX_DELAY_SECONDS = round(starter_throttling.AWS_MAX_DELAY_SECONDS * aws.clock.time_scale)
        self.invoker = AsyncInvoker(stack, {self.starter.function.logical_id: self.starter})
        for function in stack.scheduled_functions:
            self.invoker.runtimes[function.logical_id] = FunctionRuntime(
                stack, function.logical_id, fast_forwarded(function.environment, aws.clock.time_scale), log_stream
            )
        # EventBridge's route for executions that end outside the state machine's own paths (best
        # effort: `status_event_loss` drops some or all), and the reconciler's schedule, which does not
        # depend on it.
        self.safety_net = SafetyNet(stack, loss=status_event_loss, invoker=self.invoker)
        self.schedule = ScheduledRuns(stack, self.invoker)
        self._ended_at_last_schedule = 0
        self._next_paced_run = 0.0
        self.gates = IdleGates(
            engine_speedups.IDLE_GATES in aws.speedups, REGION, state_machine_arn=stack.state_machine_arn
        )
        invoke = self.starter.invoke
        self.event_source = SqsEventSource(
            self.starter.client("sqs"),  # Lambda polls with the function's execution role
            stack.source_queue_url,
            stack.event_source,
            invoke_wrapper(invoke) if invoke_wrapper else invoke,
            time_scale=aws.clock.time_scale,
            keep_acknowledged=keep_acknowledged,
            emulator_sqs=self.sqs,
        )
        # Each subscriber behind its own queue's event source (DeploySubscriber=true).
        self.subscribers = {
            f.logical_id: FunctionRuntime(stack, f.logical_id, log_stream=log_stream) for f in stack.subscribers
        }
        self.subscriber_sources = {
            f.logical_id: SqsEventSource(
                self.subscribers[f.logical_id].client("sqs"),  # the function's execution role
                str(f.queue_url),
                f.event_source,  # type: ignore[arg-type]
                (subscriber_wrapper or (lambda invoke: invoke))(self.subscribers[f.logical_id].invoke),
                time_scale=aws.clock.time_scale,
                keep_acknowledged=keep_acknowledged,
                emulator_sqs=self.sqs,
            )
            for f in stack.subscribers
        }

    def run_schedule_if_anything_ended(self, paced: bool = False) -> None:
        """The reconciler's schedule, fast-forwarded to now. A run after a successful one during
        which no execution ended would find only what that run already claimed, so it is left out;
        after a failed run (its work undone, as on AWS the next run five minutes later does) it is not.

        `paced` (a long-running `onceflow start`): at most once per schedule period (the template's
        `rate(...)`) times the time scale, as the schedule rule fires, instead of whenever asked."""
        if paced and time.monotonic() < self._next_paced_run:
            return
        # Counted by the engine, not by the safety net's sweeps: those list Standard executions only;
        # only the stack's own state machine writes what the reconciler looks for.
        ended = self.aws.clock.ends.count_of(self.stack.state_machine_arn)
        if self.schedule.last_run_failed or ended != self._ended_at_last_schedule:
            self._ended_at_last_schedule = ended
            self.schedule.run()
            self._next_paced_run = time.monotonic() + self.schedule.period_seconds * self.aws.clock.time_scale

    def background_round(self, poll: bool = True) -> RoundReport:
        """One round of a long-running `onceflow start`: a batch from the source queue and one from
        each subscriber's queue (`poll`), the safety net's sweep, the reconciler's paced schedule and the notification inbox drained
        (kept, notifications would grow with every event). A step that would find nothing is left
        out without a request, and after a busy spell the garbage collector's due full collection is
        made while nothing happens (engine/idle_gates.py)."""
        handled = notified = 0
        if poll and self.gates.may_receive(self.stack.source_queue_url):
            handled = self.event_source.poll_once()
        if poll:  # each subscriber behind its queue, as Lambda's event source mapping feeds it
            notified = sum(
                source.poll_once()
                for source in self.subscriber_sources.values()
                if self.gates.may_receive(source.queue_url)
            )
        routed = self.sweep_if_anything_changed()
        self.run_schedule_if_anything_ended(paced=True)
        if self.inbox is not None and self.gates.may_receive(self.inbox.queue_url):
            self.inbox.discard()
        self.gates.collect_when_quiet()
        return RoundReport(handled, routed, notified)

    def sweep_if_anything_changed(self) -> int:
        """The safety net's sweep, left out when no execution was created or changed status since the
        last one began (engine/speedups/idle_gates.py); how many executions it routed."""
        if not self.gates.sweep_begins():
            return 0
        try:
            return len(self.safety_net.sweep().routed)
        except BaseException:
            self.gates.sweep_failed()
            raise

    def schedule_due(self) -> None:
        """Time has passed (e.g. a TTL clock moved on): the next conditional run happens whatever ended."""
        self._ended_at_last_schedule = -1

    def send(self, bodies: Iterable[Any], groups: Sequence[str] | None = None) -> list[SentMessage]:
        """Put messages on the source queue, as a producer would (10 per request, in order).

        A FIFO source needs each message's MessageGroupId: `groups[i]`, or else a group per event
        (message_group_of). Each send gets a
        fresh MessageDeduplicationId, as a producer's resend after SQS's five-minute window would:
        a duplicate body sent here reaches the consumer, which must deduplicate it itself."""
        texts = [b if isinstance(b, str) else json.dumps(b) for b in bodies]
        fifo = self.stack.fifo
        sent: list[SentMessage] = []
        for start in range(0, len(texts), 10):
            chunk = texts[start : start + 10]
            entries: list[dict[str, Any]] = [{"Id": str(i), "MessageBody": text} for i, text in enumerate(chunk)]
            if fifo:
                for i, entry in enumerate(entries):
                    given = groups[start + i] if groups is not None else None
                    entry["MessageGroupId"] = given or message_group_of(self.stack, entry["MessageBody"])
                    entry["MessageDeduplicationId"] = uuid.uuid4().hex
            response = self.sqs.send_message_batch(QueueUrl=self.stack.source_queue_url, Entries=entries)
            if response.get("Failed"):
                raise RuntimeError(f"send_message_batch failed: {response['Failed']}")
            by_id = {entry["Id"]: entry["MessageId"] for entry in response["Successful"]}
            sent.extend(SentMessage(by_id[str(i)], text) for i, text in enumerate(chunk))
        return sent

    def queue_depth(self, queue_url: str) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=queue_url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",  # e.g. a throttled record re-queued with a delay
            ],
        )["Attributes"]
        return sum(int(attributes.get(name, 0)) for name in attributes)

    def running_executions(self) -> int:
        if self.stack.express:  # the starter's StartSyncExecution calls end before it returns; none is listed
            return 0
        return len(list_executions(self.sfn, self.stack.state_machine_arn, status="RUNNING"))

    def process(
        self,
        concurrency: int = 1,
        timeout: float = 300.0,
        on_batch: Callable[[int], None] | None = None,
        feed: Iterator[list[str]] | None = None,
        feed_below: int = 200,
        schedule: bool = True,
    ) -> None:
        """Deliver until the source queue is empty and no execution runs (bounded by `timeout`).

        `feed` streams more bodies in whenever fewer than `feed_below` messages are queued, as a
        producer would. Ended executions are swept through the safety net when the source is
        idle, as EventBridge would route them, and notifications are collected as they arrive
        (moto's SQS slows down with queue depth; real readers keep up too). A receive from a queue
        that holds no message and a sweep when no execution changed are left out (idle_gates).
        The reconciler's schedule runs once all is idle, if an execution of the stack's state machine
        ended since its last run
        (`schedule=False`: its rule did not fire during this call; a run of several calls can pass
        it to only some of them).
        """
        deadline = time.monotonic() + timeout
        pending_feed = feed
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            while True:
                if pending_feed is not None and self.queue_depth(self.stack.source_queue_url) < feed_below:
                    chunk = next(pending_feed, None)
                    if chunk is None:
                        pending_feed = None
                    else:
                        self.send(chunk)
                handled = 0
                if self.gates.may_receive(self.stack.source_queue_url):
                    handled = sum(pool.map(lambda _: self.event_source.poll_once(), range(concurrency)))
                if on_batch is not None and handled:
                    on_batch(handled)
                self.collect_notifications()
                notified = self.poll_subscribers()
                if handled == 0 and notified == 0:
                    self.sweep_if_anything_changed()
                    if (
                        pending_feed is None
                        and self.queue_depth(self.stack.source_queue_url) == 0
                        and self.running_executions() == 0
                    ):
                        self.sweep_if_anything_changed()  # what ended since the sweep above
                        if schedule:
                            self.run_schedule_if_anything_ended()
                        self.collect_notifications()
                        if self.subscribers_idle():
                            return
                if time.monotonic() > deadline:
                    raise ExecutionTimeout(
                        f"pipeline still busy after {timeout}s: "
                        f"{self.queue_depth(self.stack.source_queue_url)} messages queued, "
                        f"{self.running_executions()} executions running"
                    )
                if handled == 0:
                    time.sleep(0.02)

    def poll_subscribers(self) -> int:
        """One batch for each subscriber whose queue holds a message; how many records they had."""
        return sum(
            source.poll_once()
            for source in self.subscriber_sources.values()
            if self.gates.may_receive(source.queue_url)
        )

    def collect_notifications(self) -> None:
        """The notification inbox read, unless its queue holds no message."""
        if self.inbox is not None and self.gates.may_receive(self.inbox.queue_url):
            self.inbox.collect()

    def subscribers_idle(self) -> bool:
        """Every subscriber queue is empty (a record waiting out its visibility timeout counts)."""
        return all(self.queue_depth(source.queue_url) == 0 for source in self.subscriber_sources.values())

    def executions(self) -> list[ExecutionResult]:
        """Every execution, ended, in ListExecutions' order; none for EXPRESS, which AWS does not list
        (StateMachineTypeNotSupported). Read as `trace` reads them: many to a request on the embedded
        AWS (ops/batched_calls.py), one call each on any other endpoint."""
        if self.stack.express:
            return []
        arn = self.stack.state_machine_arn
        listed = list_executions(self.sfn, arn)
        for summary in listed:
            if summary["status"] == "RUNNING":
                wait_for(self.sfn, summary["executionArn"])  # bounded: raises with its last events
        read = {result.arn: result for result in collect(self.sfn, arn).executions}
        return [read[summary["executionArn"]] for summary in listed]

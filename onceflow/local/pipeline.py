"""The whole pipeline on the embedded AWS: stack from template.yaml, the real starter behind an
emulated SQS event source, and a notification inbox. Used by the CLI, the demo and the tests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

from onceflow.local.embedded import EmbeddedAws
from onceflow.local.event_source import Invoke, SqsEventSource
from onceflow.local.function_runtime import StarterRuntime
from onceflow.local.safety_net import SafetyNet
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult, ExecutionTimeout, list_executions, wait_for
from onceflow.ops.observe import NotificationInbox


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
    ):
        self.aws = aws
        self.stack = stack
        self.sqs = stack.client("sqs")
        self.sfn = stack.client("stepfunctions")
        self.inbox = NotificationInbox(stack.client("sns"), self.sqs, stack.notification_topic_arn)
        self.starter = StarterRuntime(stack, log_stream=log_stream)
        # EventBridge's route for executions that end outside the state machine's own paths.
        self.safety_net = SafetyNet(stack)
        invoke = self.starter.invoke
        self.event_source = SqsEventSource(
            self.sqs,
            stack.source_queue_url,
            stack.event_source,
            invoke_wrapper(invoke) if invoke_wrapper else invoke,
            time_scale=aws.clock.time_scale,
        )

    def send(self, bodies: Iterable[Any]) -> list[SentMessage]:
        """Put messages on the source queue, as a producer would (10 per request)."""
        texts = [b if isinstance(b, str) else json.dumps(b) for b in bodies]
        sent: list[SentMessage] = []
        for start in range(0, len(texts), 10):
            chunk = texts[start : start + 10]
            response = self.sqs.send_message_batch(
                QueueUrl=self.stack.source_queue_url,
                Entries=[{"Id": str(i), "MessageBody": text} for i, text in enumerate(chunk)],
            )
            if response.get("Failed"):
                raise RuntimeError(f"send_message_batch failed: {response['Failed']}")
            by_id = {entry["Id"]: entry["MessageId"] for entry in response["Successful"]}
            sent.extend(SentMessage(by_id[str(i)], text) for i, text in enumerate(chunk))
        return sent

    def queue_depth(self, queue_url: str) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])

    def running_executions(self) -> int:
        return len(list_executions(self.sfn, self.stack.state_machine_arn, status="RUNNING"))

    def process(
        self,
        concurrency: int = 1,
        timeout: float = 300.0,
        on_batch: Callable[[int], None] | None = None,
        feed: Iterator[list[str]] | None = None,
        feed_below: int = 200,
    ) -> None:
        """Deliver until the source queue is empty and no execution runs (bounded by `timeout`).

        `feed` streams more bodies in whenever fewer than `feed_below` messages are queued, as a
        producer would. Ended executions are swept through the safety net when the source is
        idle, as EventBridge would route them, and notifications are collected as they arrive
        (moto's SQS slows down with queue depth; real readers keep up too).
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
                handled = sum(pool.map(lambda _: self.event_source.poll_once(), range(concurrency)))
                if on_batch is not None and handled:
                    on_batch(handled)
                self.inbox.collect()
                if handled == 0:
                    self.safety_net.sweep()
                    if (
                        pending_feed is None
                        and self.queue_depth(self.stack.source_queue_url) == 0
                        and self.running_executions() == 0
                    ):
                        self.safety_net.sweep()  # what ended since the sweep above
                        self.inbox.collect()
                        return
                if time.monotonic() > deadline:
                    raise ExecutionTimeout(
                        f"pipeline still busy after {timeout}s: "
                        f"{self.queue_depth(self.stack.source_queue_url)} messages queued, "
                        f"{self.running_executions()} executions running"
                    )
                if handled == 0:
                    time.sleep(0.02)

    def executions(self) -> list[ExecutionResult]:
        return [wait_for(self.sfn, e["executionArn"]) for e in list_executions(self.sfn, self.stack.state_machine_arn)]

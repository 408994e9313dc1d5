"""The SQS event source mapping, emulated: poll, batch, invoke, delete what succeeded.

Honours the template's batch size and batching window, the queue's visibility timeout (failed
records become visible again when it runs out, scaled by `time_scale` so a local run does not
wait minutes, or on a given clock of simulated seconds: a benchmark's virtual clock) and partial batch responses (`batchItemFailures`). The queue's redrive policy
(maxReceiveCount) is applied by the embedded SQS itself on receive, as SQS does. A visibility
timeout the function set on a record while it was in flight (ChangeMessageVisibility with its
receipt handle, noted by onceflow/engine/sqs/visibility.py) is the one that runs out, as
Lambda leaves a failed record's visibility as it is.

A FIFO source needs nothing more here: the embedded SQS (moto's FIFO queues, with
onceflow/engine/sqs/fifo.py's deduplication window) returns a group's messages in order and
none of a group while one of its messages is in flight, so however many pollers run, a group has at
most one batch in flight, as Lambda guarantees; records reported failed become visible again in
their place at the head of their group, and every message received with them counts a receive, so
the ones the starter held back reach maxReceiveCount with the failing one (as on AWS).
tests/local/test_fifo_event_source.py checks each against AWS's documentation.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from onceflow.engine.sqs import visibility as sqs_visibility
from onceflow.local.stack import EventSourceSettings

Invoke = Callable[[dict[str, Any]], dict[str, Any]]
# With a clock, a failed record stays invisible this long in real seconds unless released first
# (SQS caps a message's total visibility at 12 hours from its receive).
HELD_INVISIBLE_SECONDS = 3_600


@dataclass
class EventSourceStats:
    batches: int = 0
    records: int = 0
    acknowledged: int = 0
    reported_failed: int = 0
    crashed_batches: int = 0
    errors: list[str] = field(default_factory=list)


def lambda_record(message: dict[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    """One SQS message in the shape Lambda hands it to a function."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": dict(message.get("Attributes", {})),
        "messageAttributes": {
            name: {
                "stringValue": value.get("StringValue"),
                "binaryValue": value.get("BinaryValue"),
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": value["DataType"],
            }
            for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message.get("MD5OfBody") or hashlib.md5(message["Body"].encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


class SqsEventSource:
    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        settings: EventSourceSettings,
        invoke: Invoke,
        time_scale: float = 0.0,
        region: str = "us-east-1",
        keep_acknowledged: bool = True,
        clock: Callable[[], float] | None = None,
        emulator_sqs: Any = None,
    ):
        """`clock`: simulated seconds; when given, a failed record's visibility timeout runs out on
        it (`release_due`) instead of on SQS's real seconds scaled by `time_scale`."""
        self.sqs = sqs
        # What SQS itself does (a failed record's visibility timeout running out, fast-forwarded) is
        # no call of Lambda's: made with this client (the account's), not the function's role.
        self.emulator_sqs = emulator_sqs if emulator_sqs is not None else sqs
        self.queue_url = queue_url
        self.queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        self.settings = settings
        self.invoke = invoke
        self.time_scale = time_scale
        self.region = region
        self.stats = EventSourceStats()
        # Records acknowledged so far: a demo can hand some to the starter again, as SQS rarely does.
        # A long-running `onceflow start` keeps none (they would grow with every message).
        self.keep_acknowledged = keep_acknowledged
        self.acknowledged_records: list[dict[str, Any]] = []
        self.clock = clock
        self.invisible_until: list[tuple[float, str]] = []  # (simulated time, receipt handle), with `clock`

    def _receive_batch(self) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        window_ends = time.monotonic() + self.settings.batching_window_seconds * self.time_scale
        while len(batch) < self.settings.batch_size:
            response = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(10, self.settings.batch_size - len(batch)),
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                VisibilityTimeout=self.settings.visibility_timeout,
            )
            messages = response.get("Messages", [])
            batch.extend(messages)
            if not messages and time.monotonic() >= window_ends:
                break
            if not messages:
                time.sleep(0.01)
        return batch

    def _visibility_timeout(self, message: dict[str, Any], invoked_at: float) -> int:
        """The record's visibility timeout: the one the function set during its invocation, if it
        did (counted from now, the invocation's end), else the queue's (from the receive)."""
        change = sqs_visibility.changed_since(self.queue_url, self.region, message["ReceiptHandle"], invoked_at)
        return change.seconds if change is not None else self.settings.visibility_timeout

    def _let_visibility_expire(self, messages: list[dict[str, Any]], invoked_at: float) -> None:
        """What SQS does once the visibility timeout runs out, fast-forwarded by time_scale (or on `clock`)."""
        for message in messages:
            timeout = self._visibility_timeout(message, invoked_at)
            if self.clock is not None:
                self.invisible_until.append((self.clock() + timeout, message["ReceiptHandle"]))
                seconds = HELD_INVISIBLE_SECONDS  # until release_due makes it visible
            else:
                seconds = round(timeout * self.time_scale)
            self.emulator_sqs.change_message_visibility(
                QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=seconds
            )

    def release_due(self) -> int:
        """With `clock`: failed records whose visibility timeout ran out become visible again."""
        if self.clock is None:
            return 0
        now = self.clock()
        due = [handle for until, handle in self.invisible_until if until <= now]
        self.invisible_until = [(until, handle) for until, handle in self.invisible_until if until > now]
        for handle in due:
            self.emulator_sqs.change_message_visibility(
                QueueUrl=self.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
            )
        return len(due)

    def poll_once(self) -> int:
        """One batch: receive, invoke, settle. Returns how many records were in it."""
        self.release_due()
        messages = self._receive_batch()
        if not messages:
            return 0
        self.stats.batches += 1
        self.stats.records += len(messages)
        event = {"Records": [lambda_record(m, self.queue_arn, self.region) for m in messages]}
        invoked_at = time.monotonic()
        try:
            response = self.invoke(event)
        except Exception as error:  # a crashed invocation fails the whole batch, as in Lambda
            self.stats.crashed_batches += 1
            self.stats.errors.append(f"{type(error).__name__}: {error}")
            self._let_visibility_expire(messages, invoked_at)
            return len(messages)
        failed_ids = self._failed_ids(response, messages)
        succeeded = [m for m in messages if m["MessageId"] not in failed_ids]
        failed = [m for m in messages if m["MessageId"] in failed_ids]
        for start in range(0, len(succeeded), 10):
            chunk = succeeded[start : start + 10]
            self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)],
            )
        self._let_visibility_expire(failed, invoked_at)
        self.stats.acknowledged += len(succeeded)
        succeeded_ids = {m["MessageId"] for m in succeeded}
        if self.keep_acknowledged:
            self.acknowledged_records.extend(r for r in event["Records"] if r["messageId"] in succeeded_ids)
        self.stats.reported_failed += len(failed)
        return len(messages)

    @staticmethod
    def _failed_ids(response: Any, messages: list[dict[str, Any]]) -> set[str]:
        """Lambda's rule: an unreadable response or an unknown id fails the whole batch."""
        all_ids = {m["MessageId"] for m in messages}
        if not isinstance(response, dict) or not isinstance(response.get("batchItemFailures", []), list):
            return all_ids
        failed = {f.get("itemIdentifier") for f in response.get("batchItemFailures", []) if isinstance(f, dict)}
        if not failed <= all_ids or None in failed:
            return all_ids
        return failed

    def run_until_empty(self, max_batches: int = 100_000, timeout: float = 300.0) -> EventSourceStats:
        """Poll until a receive finds nothing (bounded by batches and time)."""
        deadline = time.monotonic() + timeout
        for _ in range(max_batches):
            if self.poll_once() == 0 or time.monotonic() > deadline:
                break
        return self.stats

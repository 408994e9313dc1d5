"""Redrive: move dead letters back to the source queue, with a dry run, a count and a limit.

Safe because the pipeline is idempotent per event_id: a redriven event resumes from what is
recorded for it (new -> recorded and published; pending -> published only; sent -> nothing;
conflicting payload -> dead-lettered again, nothing written). docs/RUNBOOK.md says why per path.

What goes back is the original SQS body, byte for byte:
- a message dead-lettered by the starter, the state machine or the queue's redrive policy
  already carries it as its body;
- a message from the safety net (the EventBridge rule on execution status changes) carries the
  whole status change event; the original body is the execution input's `message.body`. When
  the event left the input out (too large), it is read with DescribeExecution if an `sfn`
  client is given.

Each moved message gets provenance attributes (`onceflow_redriven_from`, `onceflow_redrive_count`,
`onceflow_dead_letter_source`, `onceflow_dead_letter_error`, `onceflow_redriven_at`); the
producer's own attributes are kept, the dead-letter reason attributes are summarised by those.
A message is deleted from the dead-letter queue only after the source queue accepted it: a crash
in between leaves a duplicate, which the pipeline absorbs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlparse

from botocore.exceptions import BotoCoreError, ClientError

SAFETY_NET_SOURCE = "aws.states"
SAFETY_NET_DETAIL_TYPE = "Step Functions Execution Status Change"
# Attributes with which the starter and the state machine attach the reason (see their dead-letter code).
REASON_ATTRIBUTES = frozenset(
    {"error", "cause", "field", "rule", "source", "source_message_id", "event_id", "execution_arn"}
)
PROVENANCE_PREFIX = "onceflow_"
MAX_MESSAGE_ATTRIBUTES = 10
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}

Action = Literal["moved", "would_move", "skipped", "failed"]


class NotRedrivable(ValueError):
    """A dead letter whose original body cannot be recovered."""


@dataclass(frozen=True)
class DeadLetter:
    """One dead-lettered message, read: where it came from, why, and the body to send back."""

    message_id: str
    body: str
    source: str  # starter | state-machine | safety-net | redrive-policy
    error: str | None
    event_id: str | None
    execution_arn: str | None
    attributes: dict[str, dict[str, Any]]  # the producer's, to carry over
    redrive_count: int


@dataclass(frozen=True)
class RedriveItem:
    message_id: str
    action: Action
    source: str | None = None
    error: str | None = None
    event_id: str | None = None
    reason: str | None = None


@dataclass
class RedriveReport:
    dry_run: bool
    items: list[RedriveItem] = field(default_factory=list)

    def _count(self, action: Action) -> int:
        return sum(1 for item in self.items if item.action == action)

    @property
    def moved(self) -> int:
        return self._count("moved")

    @property
    def would_move(self) -> int:
        return self._count("would_move")

    @property
    def skipped(self) -> int:
        return self._count("skipped")

    @property
    def failed(self) -> int:
        return self._count("failed")

    @property
    def count(self) -> int:
        """Messages moved, or that a real run would move (dry run)."""
        return self.would_move if self.dry_run else self.moved

    def by_reason(self) -> dict[str, int]:
        """Moved (or movable) messages per dead-letter source and error."""
        counted = Counter(
            f"{item.source}: {item.error or 'no error recorded'}"
            for item in self.items
            if item.action in ("moved", "would_move")
        )
        return dict(sorted(counted.items()))

    def summary(self) -> str:
        verb = "would move" if self.dry_run else "moved"
        lines = [f"{verb} {self.count}, skipped {self.skipped}, failed {self.failed} (examined {len(self.items)})"]
        lines += [f"  {reason}: {n}" for reason, n in self.by_reason().items()]
        lines += [f"  skipped {i.message_id}: {i.reason}" for i in self.items if i.action == "skipped"]
        lines += [f"  failed {i.message_id}: {i.reason}" for i in self.items if i.action == "failed"]
        return "\n".join(lines)

    def __rich__(self) -> str:
        return self.summary()


def _string(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value}


def _is_safety_net_event(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and document.get("source") == SAFETY_NET_SOURCE
        and document.get("detail-type") == SAFETY_NET_DETAIL_TYPE
        and isinstance(document.get("detail"), dict)
    )


def _execution_input(detail: dict[str, Any], sfn: Any | None) -> dict[str, Any]:
    text = detail.get("input")
    if text is None:
        if sfn is None:
            raise NotRedrivable(
                "the status change event left the execution input out (too large); "
                "redrive with a Step Functions client to read it with DescribeExecution"
            )
        try:
            text = sfn.describe_execution(executionArn=detail["executionArn"])["input"]
        except (ClientError, BotoCoreError, KeyError) as error:
            raise NotRedrivable(f"the execution's input could not be read: {error}") from None
    try:
        document = json.loads(text)
        body = document["message"]["body"]
    except (ValueError, KeyError, TypeError) as error:
        raise NotRedrivable(f"the execution input has no message.body ({error!r})") from None
    if not isinstance(body, str):
        raise NotRedrivable("the execution input's message.body is not a string")
    return document


def _plain_attributes(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    attributes: dict[str, dict[str, Any]] = {}
    for name, value in message.get("MessageAttributes", {}).items():
        kept = {k: v for k, v in value.items() if k in ("DataType", "StringValue", "BinaryValue")}
        attributes[name] = kept
    return attributes


def read_dead_letter(message: dict[str, Any], sfn: Any | None = None) -> DeadLetter:
    """What a received dead-letter message is: its source, reason and original body."""
    attributes = _plain_attributes(message)
    strings = {name: value.get("StringValue") for name, value in attributes.items()}
    count_text = strings.get(PROVENANCE_PREFIX + "redrive_count") or "0"
    redrive_count = int(count_text) if count_text.isdigit() else 0
    carried = {name: value for name, value in attributes.items() if not name.startswith(PROVENANCE_PREFIX)}
    try:
        document = json.loads(message["Body"])
    except ValueError:
        document = None
    if _is_safety_net_event(document):
        detail = document["detail"]
        execution_input = _execution_input(detail, sfn)
        return DeadLetter(
            message_id=message["MessageId"],
            body=execution_input["message"]["body"],
            source="safety-net",
            error=detail.get("error") or f"Execution.{detail.get('status')}",
            event_id=execution_input.get("event_id"),
            execution_arn=detail.get("executionArn"),
            attributes={},
            redrive_count=redrive_count,
        )
    source = strings.get("source")
    if source in ("starter", "state-machine"):
        carried = {name: value for name, value in carried.items() if name not in REASON_ATTRIBUTES}
    return DeadLetter(
        message_id=message["MessageId"],
        body=message["Body"],
        source=source if source in ("starter", "state-machine") else "redrive-policy",
        error=strings.get("error"),
        event_id=strings.get("event_id"),
        execution_arn=strings.get("execution_arn"),
        attributes=carried,
        redrive_count=redrive_count,
    )


def provenance_attributes(letter: DeadLetter, now: datetime) -> dict[str, dict[str, Any]]:
    """The producer's attributes plus where this message comes from (within SQS's 10 attributes)."""
    provenance = [
        ("redrive_count", {"DataType": "Number", "StringValue": str(letter.redrive_count + 1)}),
        ("redriven_from", _string(letter.message_id)),
        ("dead_letter_source", _string(letter.source)),
        ("dead_letter_error", _string(letter.error or "none recorded")),
        ("redriven_at", _string(now.isoformat(timespec="seconds").replace("+00:00", "Z"))),
    ]
    attributes = dict(letter.attributes)
    for name, value in provenance:
        if len(attributes) >= MAX_MESSAGE_ATTRIBUTES:
            break
        attributes[PROVENANCE_PREFIX + name] = value
    return attributes


def _default_wait_seconds(sqs: Any) -> int:
    """Long polling on AWS (an empty answer then means empty); the embedded SQS answers exactly."""
    host = urlparse(getattr(sqs.meta, "endpoint_url", "") or "").hostname
    return 0 if host in _LOOPBACK_HOSTS else 1


class _Redrive:
    def __init__(self, sqs: Any, dlq_url: str, source_url: str, sfn: Any | None, visibility_timeout: int):
        self.sqs, self.dlq_url, self.source_url, self.sfn = sqs, dlq_url, source_url, sfn
        self.visibility_timeout = visibility_timeout
        self.held: list[str] = []  # receipt handles to make visible again

    def receive(self, count: int, wait_seconds: int) -> list[dict[str, Any]]:
        return self.sqs.receive_message(
            QueueUrl=self.dlq_url,
            MaxNumberOfMessages=count,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
            VisibilityTimeout=self.visibility_timeout,
            WaitTimeSeconds=wait_seconds,
        ).get("Messages", [])

    def handle(self, message: dict[str, Any], dry_run: bool, skip_errors: Collection[str]) -> RedriveItem:
        try:
            letter = read_dead_letter(message, self.sfn)
        except NotRedrivable as problem:
            self.held.append(message["ReceiptHandle"])
            return RedriveItem(message["MessageId"], "skipped", source="safety-net", reason=str(problem))
        item = RedriveItem(letter.message_id, "would_move", letter.source, letter.error, letter.event_id)
        if letter.error in skip_errors:
            self.held.append(message["ReceiptHandle"])
            return replace(item, action="skipped", reason=f"{letter.error} is not redriven")
        if dry_run:
            self.held.append(message["ReceiptHandle"])
            return item
        try:
            self.sqs.send_message(
                QueueUrl=self.source_url,
                MessageBody=letter.body,
                MessageAttributes=provenance_attributes(letter, datetime.now(UTC)),
            )
        except (ClientError, BotoCoreError) as error:
            self.held.append(message["ReceiptHandle"])
            return replace(item, action="failed", reason=f"send to source queue: {error}")
        self.sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])
        return replace(item, action="moved")

    def release(self) -> None:
        """Make every message that stays in the dead-letter queue visible again at once."""
        for start in range(0, len(self.held), 10):
            chunk = self.held[start : start + 10]
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.dlq_url,
                Entries=[{"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 0} for i, h in enumerate(chunk)],
            )
        self.held.clear()


def redrive(
    sqs: Any,
    dlq_url: str,
    source_url: str,
    dry_run: bool,
    limit: int | None,
    *,
    skip_errors: Collection[str] = (),
    sfn: Any | None = None,
    wait_time_seconds: int | None = None,
    visibility_timeout: int = 120,
) -> RedriveReport:
    """Move dead letters to the source queue (at most `limit`; `dry_run` only counts and lists).

    Messages whose error is in `skip_errors` (e.g. Onceflow.PayloadConflict, which needs a
    decision, or Onceflow.InvalidMessage, which fails again unchanged) stay where they are.
    Each message is looked at once per run: it is held invisible for `visibility_timeout`
    seconds while the run goes on, and whatever stays is made visible again at the end.
    """
    if limit is not None and limit < 0:
        raise ValueError("limit must be at least 0")
    run = _Redrive(sqs, dlq_url, source_url, sfn, visibility_timeout)
    wait_seconds = _default_wait_seconds(sqs) if wait_time_seconds is None else wait_time_seconds
    report = RedriveReport(dry_run=dry_run)
    seen: set[str] = set()
    try:
        while limit is None or report.count < limit:
            wanted = 10 if limit is None else min(10, limit - report.count)
            received = run.receive(wanted, wait_seconds)
            batch = [m for m in received if m["MessageId"] not in seen]
            run.held.extend(m["ReceiptHandle"] for m in received if m["MessageId"] in seen)
            if not batch:
                break  # empty, or only messages already looked at in this run came back
            for message in batch:
                seen.add(message["MessageId"])
                if limit is not None and report.count >= limit:
                    run.held.append(message["ReceiptHandle"])
                    continue
                report.items.append(run.handle(message, dry_run, skip_errors))
    finally:
        run.release()
    return report


def _stack_queues(cloudformation: Any, stack_name: str) -> tuple[str, str]:
    described = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    return outputs["DeadLetterQueueUrl"], outputs["SourceQueueUrl"]


def main(argv: list[str] | None = None) -> int:
    """`python -m onceflow.ops.redrive --stack-name NAME [--dry-run] [--limit N]`: redrive a deployed stack."""
    import argparse

    import boto3

    parser = argparse.ArgumentParser(prog="python -m onceflow.ops.redrive", description=main.__doc__)
    parser.add_argument("--stack-name", required=True, help="the deployed stack (its outputs name the queues)")
    parser.add_argument("--dry-run", action="store_true", help="only count and list what would move")
    parser.add_argument("--limit", type=int, default=None, help="move at most this many messages")
    parser.add_argument(
        "--skip-error", action="append", default=[], help="leave dead letters with this error (repeatable)"
    )
    options = parser.parse_args(argv)
    dlq_url, source_url = _stack_queues(boto3.client("cloudformation"), options.stack_name)
    report = redrive(
        boto3.client("sqs"),
        dlq_url,
        source_url,
        options.dry_run,
        options.limit,
        skip_errors=set(options.skip_error),
        sfn=boto3.client("stepfunctions"),
    )
    print(report.summary())
    return 1 if report.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

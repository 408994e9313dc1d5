"""Redrive: move dead letters back to the source queue, with a dry run, a count and a limit.

Safe because the pipeline is idempotent per event_id: a redriven event resumes from what is
recorded for it (new -> recorded and published; pending -> published only; sent -> nothing;
conflicting payload -> dead-lettered again, nothing written). docs/RUNBOOK.md says why per path.

What goes back is the original SQS body, byte for byte:
- a message dead-lettered by the starter, the state machine or the queue's redrive policy
  already carries it as its body;
- a legacy message from the safety net (before the reconciler took its place, the EventBridge
  rule put the whole status change event on the DLQ) is unwrapped: the original body is the
  execution input's `message.body`. When the event left the input out (too large), it is read
  with DescribeExecution if an `sfn` client is given.

Each moved message gets provenance attributes (`onceflow_redriven_from`, `onceflow_redrive_count`,
`onceflow_dead_letter_source`, `onceflow_dead_letter_error`, `onceflow_first_dead_letter`,
`onceflow_redriven_at`); the producer's own attributes are kept, the dead-letter reason
attributes are summarised by those. A message redriven again keeps its first reason and counts
up. A dead letter that comes back while a run goes on (its body was sent back by this run and
failed again) is left in place, so a redrive run never moves the same dead letter twice.
A message is deleted from the dead-letter queue only after the source queue accepted it: a crash
in between leaves a duplicate, which the pipeline absorbs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlparse

from botocore.exceptions import BotoCoreError, ClientError

from onceflow_common import dead_letters, status_change

PROVENANCE_PREFIX = "onceflow_"
REDRIVE_COUNT = dead_letters.REDRIVE_COUNT
# The first dead-letter reason a message had, "source: error", kept however often it is redriven.
FIRST_DEAD_LETTER = dead_letters.FIRST_DEAD_LETTER
MAX_MESSAGE_ATTRIBUTES = 10
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
SAFETY_NET = "safety-net"  # a legacy dead letter: the whole status change event as its body

Action = Literal["moved", "would_move", "skipped", "failed"]


class NotRedrivable(ValueError):
    """A dead letter whose original body cannot be recovered."""


@dataclass(frozen=True)
class DeadLetter:
    """One dead-lettered message, read: where it came from, why, and the body to send back."""

    message_id: str
    body: str
    source: str  # starter | state-machine | reconciler | safety-net | redrive-policy
    error: str | None
    event_id: str | None
    execution_arn: str | None
    attributes: dict[str, dict[str, Any]]  # the producer's, to carry over
    redrive_count: int
    first_dead_letter: str | None = None  # "source: error" of the first time, for a message redriven before
    cause: str | None = None
    group_id: str | None = None  # a FIFO dead letter's MessageGroupId: its message group in the source queue

    @property
    def reason(self) -> str:
        return f"{self.source}: {self.error or 'no error recorded'}"


@dataclass(frozen=True)
class RedriveItem:
    message_id: str
    action: Action
    source: str | None = None
    error: str | None = None
    event_id: str | None = None
    reason: str | None = None
    redrive_count: int = 0  # times it had been redriven before this run


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
        if not self.items:
            return "nothing to redrive: the dead-letter queue is empty"
        verb = "would move" if self.dry_run else "moved"
        lines = [f"{verb} {self.count}, skipped {self.skipped}, failed {self.failed} (examined {len(self.items)})"]
        lines += [f"  {reason}: {n}" for reason, n in self.by_reason().items()]
        again = [i for i in self.items if i.action in ("moved", "would_move") and i.redrive_count]
        if again:
            most = max(i.redrive_count for i in again)
            lines.append(f"  {len(again)} had been redriven before (up to {most} times): a redrive loop? see RUNBOOK")
        lines += [f"  skipped {i.message_id}: {i.reason}" for i in self.items if i.action == "skipped"]
        lines += [f"  failed {i.message_id}: {i.reason}" for i in self.items if i.action == "failed"]
        return "\n".join(lines)

    def __rich__(self) -> str:
        return self.summary()


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
    if status_change.original_body(text) is None:
        raise NotRedrivable("the execution input has no message.body string")
    return json.loads(text)


def _typed(attributes: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """SQS MessageAttributes as SendMessage takes them; plain strings (QueuedMessage) become String."""
    typed: dict[str, dict[str, Any]] = {}
    for name, value in attributes.items():
        if isinstance(value, dict):
            typed[name] = {k: v for k, v in value.items() if k in ("DataType", "StringValue", "BinaryValue")}
        else:
            typed[name] = dead_letters.string_attribute(str(value))
    return typed


def read_dead_letter(message: dict[str, Any], sfn: Any | None = None) -> DeadLetter:
    """What a received dead-letter message (ReceiveMessage's shape) is: source, reason, original body
    and, from a FIFO dead-letter queue, its message group."""
    letter = read(message["MessageId"], message["Body"], message.get("MessageAttributes", {}), sfn)
    group = message.get("Attributes", {}).get("MessageGroupId")
    return replace(letter, group_id=letter.group_id or group) if group else letter


def read(message_id: str, body: str, attributes: Mapping[str, Any], sfn: Any | None = None) -> DeadLetter:
    """The one reader of dead letters (redrive, status, reports). `attributes` typed or plain strings.

    Raises NotRedrivable for a legacy safety-net message whose original body cannot be recovered.
    """
    typed = _typed(attributes)
    strings = {name: value.get("StringValue") for name, value in typed.items()}
    count_text = strings.get(REDRIVE_COUNT) or "0"
    redrive_count = int(count_text) if count_text.isdigit() else 0
    first = strings.get(FIRST_DEAD_LETTER)
    carried = {name: value for name, value in typed.items() if not name.startswith(PROVENANCE_PREFIX)}
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if status_change.is_status_change(document):
        detail = document["detail"]
        execution_input = _execution_input(detail, sfn)
        return DeadLetter(
            message_id=message_id,
            body=execution_input["message"]["body"],
            source=SAFETY_NET,
            error=detail.get("error") or f"Execution.{detail.get('status')}",
            event_id=execution_input.get("event_id"),
            execution_arn=detail.get("executionArn"),
            attributes={},
            redrive_count=redrive_count,
            first_dead_letter=first,
            cause=detail.get("cause"),
            group_id=execution_input["message"].get("group_id") or None,
        )
    source = strings.get(dead_letters.SOURCE)
    written = source in dead_letters.WRITERS
    if written:
        carried = {name: value for name, value in carried.items() if name not in dead_letters.REASON_ATTRIBUTES}
    return DeadLetter(
        message_id=message_id,
        body=body,
        source=source if written and source else dead_letters.FROM_REDRIVE_POLICY,
        error=strings.get(dead_letters.ERROR),
        event_id=strings.get(dead_letters.EVENT_ID),
        execution_arn=strings.get(dead_letters.EXECUTION_ARN),
        attributes=carried,
        redrive_count=redrive_count,
        first_dead_letter=first,
        cause=strings.get(dead_letters.CAUSE),
    )


def provenance_attributes(letter: DeadLetter, now: datetime) -> dict[str, dict[str, Any]]:
    """The producer's attributes plus where this message comes from (within SQS's 10 attributes).

    The count goes up by one per redrive and the first reason stays what it was, so a message
    that keeps coming back shows it (`onceflow_redrive_count`, `onceflow_first_dead_letter`).
    """
    string = dead_letters.string_attribute
    provenance = [
        ("redrive_count", {"DataType": "Number", "StringValue": str(letter.redrive_count + 1)}),
        ("redriven_from", string(letter.message_id)),
        ("dead_letter_source", string(letter.source)),
        ("dead_letter_error", string(letter.error or "none recorded")),
        ("first_dead_letter", string(letter.first_dead_letter or letter.reason)),
        ("redriven_at", string(now.isoformat(timespec="seconds").replace("+00:00", "Z"))),
    ]
    attributes = dict(letter.attributes)
    for name, value in provenance:
        if len(attributes) >= MAX_MESSAGE_ATTRIBUTES:
            break
        attributes[PROVENANCE_PREFIX + name] = value
    return attributes


def fifo_resend_fields(source_url: str, letter: DeadLetter) -> dict[str, str]:
    """To a FIFO source queue: the letter's own message group, so it goes to the end of that group
    (after whatever of the group is queued now), and a fresh deduplication id (the dead letter's
    message id): the original's id may still be inside SQS's five-minute window, which would accept
    the resend and never deliver it, while a retried redrive of this same letter is dropped."""
    if not dead_letters.is_fifo(source_url):
        return {}
    return {
        "MessageGroupId": letter.group_id or dead_letters.UNKNOWN_GROUP,
        "MessageDeduplicationId": f"onceflow-redrive-{letter.message_id}",
    }


def body_digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def _default_wait_seconds(sqs: Any) -> int:
    """Long polling on AWS (an empty answer then means empty); the embedded SQS answers exactly."""
    host = urlparse(getattr(sqs.meta, "endpoint_url", "") or "").hostname
    return 0 if host in _LOOPBACK_HOSTS else 1


class _Redrive:
    def __init__(self, sqs: Any, dlq_url: str, source_url: str, sfn: Any | None, visibility_timeout: int):
        self.sqs, self.dlq_url, self.source_url, self.sfn = sqs, dlq_url, source_url, sfn
        self.visibility_timeout = visibility_timeout
        self.held: list[str] = []  # receipt handles to make visible again
        self.moved_bodies: set[str] = set()  # digests of the bodies sent back (or that would be) in this run
        self.started_ms = int(time.time() * 1000)

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
        item = RedriveItem(
            letter.message_id, "would_move", letter.source, letter.error, letter.event_id, None, letter.redrive_count
        )
        if letter.error in skip_errors:
            self.held.append(message["ReceiptHandle"])
            return replace(item, action="skipped", reason=f"{letter.error} is not redriven")
        digest = body_digest(letter.body)
        if digest in self.moved_bodies and self._arrived_during_run(message):
            # It failed again after this run sent it back: moving it again would loop. It stays, counted.
            self.held.append(message["ReceiptHandle"])
            return replace(item, action="skipped", reason="came back during this run after it was redriven")
        self.moved_bodies.add(digest)
        if dry_run:
            self.held.append(message["ReceiptHandle"])
            return item
        try:
            self.sqs.send_message(
                QueueUrl=self.source_url,
                MessageBody=letter.body,
                MessageAttributes=provenance_attributes(letter, datetime.now(UTC)),
                **fifo_resend_fields(self.source_url, letter),
            )
        except (ClientError, BotoCoreError) as error:
            self.held.append(message["ReceiptHandle"])
            return replace(item, action="failed", reason=f"send to source queue: {error}")
        self.sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])
        return replace(item, action="moved")

    def _arrived_during_run(self, message: dict[str, Any]) -> bool:
        """SentTimestamp is the queue's clock; a skewed client clock errs towards leaving it in place."""
        sent = message.get("Attributes", {}).get("SentTimestamp")
        return sent is None or not sent.isdigit() or int(sent) >= self.started_ms

    def release(self, map_: Callable[[Callable[[list[str]], Any], Iterable[list[str]]], Iterable[Any]] = map) -> None:
        """Make every message that stays in the dead-letter queue visible again at once."""

        def visible_again(chunk: list[str]) -> None:
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.dlq_url,
                Entries=[{"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 0} for i, h in enumerate(chunk)],
            )

        list(map_(visible_again, [self.held[start : start + 10] for start in range(0, len(self.held), 10)]))
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


def unknown_skip_errors(skip_errors: Collection[str], examined: RedriveReport) -> list[str]:
    """The `--skip-error` names that are no error the pipeline writes and that no dead letter of
    `examined` (a dry run over the queue) has: a typo, which would otherwise move everything."""
    seen = {item.error for item in examined.items}
    return sorted(set(skip_errors) - dead_letters.PIPELINE_ERRORS - seen)


@dataclass(frozen=True)
class QueueView:
    """What is in a dead-letter queue right now: counts from the queue, reasons from a sample."""

    visible: int
    in_flight: int
    letters: list[DeadLetter]
    unreadable: list[str]  # why some messages could not be read

    @property
    def empty(self) -> bool:
        return self.visible == 0 and self.in_flight == 0


def peek(
    sqs: Any,
    dlq_url: str,
    limit: int = 100,
    sfn: Any | None = None,
    map_: Callable[[Callable[[Any], Any], Iterable[Any]], Iterable[Any]] = map,
) -> QueueView:
    """Read up to `limit` dead letters without moving them (each is made visible again at once).
    `map_` runs the receives of a round, and the releases (a thread pool's map: at once)."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    visible, in_flight = (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )
    run = _Redrive(sqs, dlq_url, dlq_url, sfn, visibility_timeout=30)
    wait_seconds = _default_wait_seconds(sqs)
    letters: list[DeadLetter] = []
    unreadable: list[str] = []
    seen: set[str] = set()
    try:
        while visible and len(seen) < limit:
            wanted = max(1, min(limit, visible) - len(seen))
            rounds = map_(lambda n: run.receive(n, wait_seconds), [min(10, wanted - i) for i in range(0, wanted, 10)])
            received = [message for batch in rounds for message in batch]
            run.held.extend(m["ReceiptHandle"] for m in received)
            fresh = [m for m in received if m["MessageId"] not in seen]
            if not fresh:
                break
            for message in fresh:
                if message["MessageId"] in seen or len(seen) >= limit:
                    continue
                seen.add(message["MessageId"])
                try:
                    letters.append(read_dead_letter(message, sfn))
                except NotRedrivable as problem:
                    unreadable.append(f"{message['MessageId']}: {problem}")
    finally:
        run.release(map_)
    return QueueView(visible, in_flight, letters, unreadable)


def main(argv: list[str] | None = None) -> int:
    """`python -m onceflow.ops.redrive --stack-name NAME [--dry-run] [--limit N]`: redrive a deployed stack."""
    import argparse

    from onceflow.ops.stack import StackNotFound, Target, find_stack

    parser = argparse.ArgumentParser(prog="python -m onceflow.ops.redrive", description=main.__doc__)
    parser.add_argument("--stack-name", required=True, help="the deployed stack (its outputs name the queues)")
    parser.add_argument("--dry-run", action="store_true", help="only count and list what would move")
    parser.add_argument("--limit", type=int, default=None, help="move at most this many messages")
    parser.add_argument(
        "--skip-error", action="append", default=[], help="leave dead letters with this error (repeatable)"
    )
    options = parser.parse_args(argv)
    if options.limit is not None and options.limit < 0:
        parser.error(f"--limit {options.limit}: must be 0 or more")
    try:
        stack = find_stack(Target(endpoint_url=None), options.stack_name)
    except StackNotFound as problem:
        parser.exit(2, f"{parser.prog}: {problem}\n")
    report = redrive(
        stack.client("sqs"),
        stack.dead_letter_queue_url,
        stack.source_queue_url,
        options.dry_run,
        options.limit,
        skip_errors=set(options.skip_error),
        sfn=stack.client("stepfunctions"),
    )
    print(report.summary())
    return 1 if report.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`onceflow dead-letters`: the messages of a dead-letter queue as SQS holds them, one in full.

What the runbook had on-call do with `aws sqs receive-message --attribute-names All
--message-attribute-names All --visibility-timeout 0`, with the reading of the redrive tool on top
(who wrote it and why, the original body). Nothing is moved or deleted: every message received is
made visible again at once (ChangeMessageVisibility 0), as the redrive tool's dry run does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from onceflow.ops.redrive import DeadLetter, NotRedrivable, _default_wait_seconds, _Redrive, read_dead_letter

# The stack output of each dead-letter queue a person may want to read.
QUEUES = {
    "pipeline": "DeadLetterQueueUrl",
    "subscriber": "SubscriberDeadLetterQueueUrl",
    "safety-net": "SafetyNetDeadLetterQueueUrl",
}
SQS_ATTRIBUTES_SHOWN = (
    "SentTimestamp",
    "ApproximateFirstReceiveTimestamp",
    "ApproximateReceiveCount",
    "MessageGroupId",
    "MessageDeduplicationId",
    "SequenceNumber",
    "DeadLetterQueueSourceArn",
)


@dataclass(frozen=True)
class Letter:
    """One message of a dead-letter queue: SQS's view of it and, where readable, the pipeline's."""

    message: dict[str, Any]  # ReceiveMessage's shape, ReceiptHandle left out
    read: DeadLetter | None
    unreadable: str | None = None

    @property
    def message_id(self) -> str:
        return str(self.message["MessageId"])

    @property
    def event_id(self) -> str | None:
        if self.read is not None and self.read.event_id:
            return self.read.event_id
        value = (self.message.get("MessageAttributes") or {}).get("event_id") or {}
        return value.get("StringValue")

    @property
    def source(self) -> str:
        """Who wrote it: its `source` attribute (the subscriber's too), else the redrive tool's reading."""
        value = ((self.message.get("MessageAttributes") or {}).get("source") or {}).get("StringValue")
        return value or (self.read.source if self.read is not None else "unknown")

    @property
    def reason(self) -> str:
        if self.read is not None:
            return f"{self.source}: {self.read.error or 'no error recorded'}"
        return f"unreadable: {self.unreadable}"

    @property
    def sent(self) -> str:
        stamp = (self.message.get("Attributes") or {}).get("SentTimestamp")
        if not stamp or not stamp.isdigit():
            return "-"
        return datetime.fromtimestamp(int(stamp) / 1000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

    def matches(self, message_id: str | None, event_id: str | None) -> bool:
        return (message_id is None or self.message_id == message_id) and (event_id is None or self.event_id == event_id)

    def details(self) -> list[tuple[str, str]]:
        """(label, text) of everything SQS holds of it, then what only the pipeline's reading adds."""
        attributes = self.message.get("Attributes") or {}
        rows = [("message id", self.message_id), ("reason", self.reason)]
        for name in SQS_ATTRIBUTES_SHOWN:
            if name in attributes:
                rows.append(
                    (name, _stamp(str(attributes[name])) if name.endswith("Timestamp") else str(attributes[name]))
                )
        carried = self.message.get("MessageAttributes") or {}
        for name, value in sorted(carried.items()):
            text = value.get("StringValue")
            rows.append((f"attribute {name}", text if text is not None else f"({value.get('DataType')}, binary)"))
        if self.read is not None and "cause" not in carried and self.read.cause:
            rows.append(("cause", self.read.cause))  # a legacy safety-net letter's: in its body, not attributes
        if self.read is not None and "execution_arn" not in carried and self.read.execution_arn:
            rows.append(("execution", self.read.execution_arn))
        return rows

    def body(self) -> str:
        """The body, indented when it is JSON; for a legacy safety-net letter, the original body too."""
        text = str(self.message.get("Body", ""))
        try:
            shown = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            shown = text
        if self.read is not None and self.read.body != text:
            shown += f"\n(the original body it carries, which a redrive sends back:)\n{self.read.body}"
        return shown


def _stamp(millis: str) -> str:
    """SQS's epoch milliseconds, with the UTC time beside them."""
    if not millis.isdigit():
        return millis
    when = datetime.fromtimestamp(int(millis) / 1000, UTC).isoformat(timespec="milliseconds")
    return f"{millis} ({when.replace('+00:00', 'Z')})"


def letters(sqs: Any, queue_url: str, limit: int, sfn: Any | None = None) -> Iterator[Letter]:
    """Up to `limit` messages, each read once; all made visible again when the walk ends."""
    walk = _Redrive(sqs, queue_url, queue_url, sfn, visibility_timeout=30)
    wait_seconds = _default_wait_seconds(sqs)
    seen: set[str] = set()
    try:
        while len(seen) < limit:
            received = walk.receive(min(10, limit - len(seen)), wait_seconds)
            walk.held.extend(m["ReceiptHandle"] for m in received)
            fresh = [m for m in received if m["MessageId"] not in seen]
            if not fresh:
                return
            for message in fresh:
                seen.add(message["MessageId"])
                shown = {k: v for k, v in message.items() if k != "ReceiptHandle"}
                try:
                    yield Letter(shown, read_dead_letter(message, sfn))
                except NotRedrivable as problem:
                    yield Letter(shown, None, str(problem))
    finally:
        walk.release()

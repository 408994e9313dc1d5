"""Parse and validate one SQS record into the state machine's execution input.

Every rejection is an `InvalidMessage` naming the message, the field and the rule it broke.
The execution input depends only on the record (body, message id, SQS send time, a redrive's
count), so a redelivered message reproduces it exactly.

The input contract (statemachine/pipeline.asl.json reads it): event_id, payload_hash, payload,
received_at (the SQS send time), ttl (send time + RecordRetentionDays; the workflow writes it
only when the event is marked sent), pending_shard (the sparse pending index's shard), and
message {id, body, redrive_count} (the original body, for dead letters and redrives, and how often
it was redriven, which the workflow's dead letter carries on; with a FIFO source also
group_id, the record's MessageGroupId).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jmespath
from jmespath.exceptions import JMESPathError

from onceflow_common import dead_letters
from onceflow_common.pending import shard_for
from starter import jsontext
from starter.formats import FormatRejection
from starter.jsontext import canonical_json
from starter.limits import MAX_EVENT_ID_BYTES, MAX_EXECUTION_INPUT_BYTES, MAX_STATE_BYTES, WORKFLOW_STATE_OVERHEAD_BYTES
from starter.numbers import first_bad_number
from starter.payload_validation import PayloadRejection, validate_with_model

if TYPE_CHECKING:
    from starter.formats import EventFormat
    from starter.settings import Settings

__all__ = [
    "MAX_EXECUTION_INPUT_BYTES",
    "InvalidMessage",
    "PipelineEvent",
    "canonical_json",
    "parse_record",
    "payload_hash",
]


class InvalidMessage(Exception):
    """A message that can never succeed: it goes to the dead-letter queue straight away."""

    def __init__(self, message_id: str, field: str, rule: str, detail: str, event_id: str | None = None):
        self.message_id = message_id
        self.field = field
        self.rule = rule
        self.detail = detail
        self.event_id = event_id
        self.message_attributes: dict[str, Any] = {}  # the record's, set by parse_batch
        super().__init__(f"message {message_id}: field '{field}' breaks rule '{rule}': {detail}")


@dataclass(frozen=True)
class PipelineEvent:
    event_id: str
    payload_hash: str
    execution_input: str


def payload_hash(payload: Any) -> str:
    """SHA-256 of the canonical JSON form: key order and whitespace do not change it."""
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


@lru_cache(maxsize=16)
def _compiled(expression: str) -> jmespath.parser.ParsedResult:
    return jmespath.compile(expression)


def _search(path: str, document: Any, message_id: str) -> Any:
    try:
        return _compiled(path).search(document)
    except JMESPathError as error:  # e.g. a function applied to a value of the wrong type
        raise InvalidMessage(message_id, path, "jmespath", str(error)) from None


def _validate(model: type, document: Any, message_id: str, prefix: str) -> None:
    try:
        validate_with_model(model, document)
    except PayloadRejection as rejected:
        raise InvalidMessage(message_id, _field(prefix, rejected.field), rejected.rule, rejected.detail) from None


def _field(prefix: str, location: str) -> str:
    """A field's path in the body: the payload's path, then the field's in the payload."""
    return ".".join(part for part in (prefix, location) if part and part != "@") or "body"


def _decode_body(message_id: str, body: str) -> dict[str, Any]:
    try:
        decoded = jsontext.loads(body)
    except jsontext.NotJson as error:
        raise InvalidMessage(message_id, "body", "json", f"not valid JSON ({error})") from None
    if not isinstance(decoded, dict):
        raise InvalidMessage(message_id, "body", "json_object", f"must be a JSON object, got {type(decoded).__name__}")
    return decoded


def _unwrap(event_format: EventFormat, message_id: str, body: dict[str, Any]) -> dict[str, Any]:
    try:
        if event_format.screen is not None:
            event_format.screen(body)
        envelope_model = event_format.envelope_model
        if envelope_model is not None:
            _validate(envelope_model, body, message_id, "")
        if event_format.accept is not None:
            event_format.accept(body)
    except FormatRejection as rejected:
        raise InvalidMessage(message_id, rejected.field, rejected.rule, rejected.detail) from None
    try:
        return event_format.unwrap(body)
    except jsontext.NotJson as error:
        raise InvalidMessage(message_id, "Message", "json", f"the SNS message is not valid JSON ({error})") from None


def _event_id(document: dict[str, Any], event_format: EventFormat, path: str, message_id: str) -> str:
    if path == event_format.own_event_id_path and event_format.default_event_id is not None:
        value = event_format.default_event_id(document)
    else:
        value = _search(path, document, message_id)
    if not isinstance(value, str) or not value:
        found = "nothing" if value is None else "an empty string" if value == "" else f"a {type(value).__name__}"
        raise InvalidMessage(message_id, path, "event_id", f"must select a non-empty string, found {found}")
    size = len(value.encode())
    if size > MAX_EVENT_ID_BYTES:
        raise InvalidMessage(
            message_id, path, "event_id_length", f"at most {MAX_EVENT_ID_BYTES} bytes in UTF-8, got {size}"
        )
    return value


def _sent_at_ms(attributes: dict[str, Any]) -> int:
    """The message's own send time: the same on every redelivery, unlike the receive time.

    SQS always sets SentTimestamp; a hand-made event without it falls back to the first receive
    time, then to now (so its ttl is still in the future), and is then not reproducible.
    """
    for name in ("SentTimestamp", "ApproximateFirstReceiveTimestamp"):
        value = attributes.get(name)
        if isinstance(value, str) and value.isascii() and value.isdigit():
            return int(value)
    return int(time.time() * 1000)


def _iso(epoch_ms: int) -> str:
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _message(record: dict[str, Any], body_text: str, settings: Settings) -> dict[str, str]:
    """The original message, for dead letters and redrives; a FIFO source's keeps its group, which
    the workflow's FIFO dead-letter queue needs (and a redrive puts it back in)."""
    message = {
        "id": record["messageId"],
        "body": body_text,
        # A redriven message's count goes on in the workflow's dead letter (the ASL writes it).
        "redrive_count": dead_letters.redrive_count_of(record.get("messageAttributes")),
    }
    if settings.fifo:
        message["group_id"] = str((record.get("attributes") or {}).get("MessageGroupId") or "")
    return message


def parse_record(record: dict[str, Any], settings: Settings) -> PipelineEvent:
    """Validate one raw SQS record (Lambda event shape) and build its execution input."""
    message_id = record["messageId"]
    body_text = record.get("body") or ""
    decoded = _decode_body(message_id, body_text)
    event_format = settings.event_format
    document = _unwrap(event_format, message_id, decoded)
    event_id = _event_id(document, event_format, settings.event_id_path, message_id)
    bad_number = first_bad_number(document)  # unwrapped: an SNS envelope's Message is checked too
    if bad_number is not None:
        raise InvalidMessage(message_id, bad_number.field, bad_number.rule, bad_number.detail, event_id=event_id)
    payload = _search(event_format.payload_path, document, message_id)
    if event_format.payload_model is not None:
        try:
            _validate(event_format.payload_model, payload, message_id, event_format.payload_path)
        except InvalidMessage as invalid:
            invalid.event_id = event_id
            raise
    elif settings.payload_validator is not None:
        try:
            settings.payload_validator(payload)
        except PayloadRejection as rejected:
            field = _field(event_format.payload_path, rejected.field)
            raise InvalidMessage(message_id, field, rejected.rule, rejected.detail, event_id=event_id) from None
    sent_at_ms = _sent_at_ms(record.get("attributes") or {})
    digest = payload_hash(payload)
    execution_input = canonical_json(
        {
            "event_id": event_id,
            "payload_hash": digest,
            "payload": payload,
            "received_at": _iso(sent_at_ms),
            "ttl": sent_at_ms // 1000 + settings.record_retention_days * 86_400,
            "pending_shard": shard_for(event_id),
            "message": _message(record, body_text, settings),
        }
    )
    size = len(execution_input.encode())
    if size > MAX_EXECUTION_INPUT_BYTES:
        raise InvalidMessage(
            message_id,
            "body",
            "max_state_size",
            f"the execution input would be {size} bytes (the payload and the original body); with the "
            f"{WORKFLOW_STATE_OVERHEAD_BYTES} bytes the workflow adds, its largest state would exceed "
            f"Step Functions' {MAX_STATE_BYTES}-byte limit; at most {MAX_EXECUTION_INPUT_BYTES} bytes of input fit",
            event_id=event_id,
        )
    return PipelineEvent(event_id=event_id, payload_hash=digest, execution_input=execution_input)

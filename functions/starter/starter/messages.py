"""Parse and validate one SQS record into the state machine's execution input.

Every rejection is an `InvalidMessage` naming the message, the field and the rule it broke.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import jmespath
from pydantic import ValidationError

from starter.formats import EventFormat
from starter.settings import Settings

# Step Functions rejects execution input above 256 KiB.
MAX_EXECUTION_INPUT_BYTES = 262_144
MAX_EVENT_ID_LENGTH = 1024


class InvalidMessage(Exception):
    """A message that can never succeed: it goes to the dead-letter queue straight away."""

    def __init__(self, message_id: str, field: str, rule: str, detail: str, event_id: str | None = None):
        self.message_id = message_id
        self.field = field
        self.rule = rule
        self.detail = detail
        self.event_id = event_id
        super().__init__(f"message {message_id}: field '{field}' breaks rule '{rule}': {detail}")


@dataclass(frozen=True)
class PipelineEvent:
    event_id: str
    payload_hash: str
    execution_input: str


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def payload_hash(payload: Any) -> str:
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


@lru_cache(maxsize=16)
def _compiled(expression: str) -> jmespath.parser.ParsedResult:
    return jmespath.compile(expression)


def _validate(model: type, document: Any, message_id: str, prefix: str) -> None:
    try:
        model.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        field = ".".join(part for part in (prefix, location) if part and part != "@") or "body"
        raise InvalidMessage(message_id, field, first["type"], first["msg"]) from None


def _decode_body(message_id: str, body: str) -> dict[str, Any]:
    try:
        decoded = json.loads(body)
    except json.JSONDecodeError as error:
        raise InvalidMessage(message_id, "body", "json", f"not valid JSON ({error})") from None
    if not isinstance(decoded, dict):
        raise InvalidMessage(message_id, "body", "json_object", f"must be a JSON object, got {type(decoded).__name__}")
    return decoded


def _unwrap(event_format: EventFormat, message_id: str, body: dict[str, Any]) -> dict[str, Any]:
    if event_format.envelope_model is not None:
        _validate(event_format.envelope_model, body, message_id, "")
    try:
        return event_format.unwrap(body)
    except json.JSONDecodeError as error:
        raise InvalidMessage(message_id, "Message", "json", f"the SNS message is not valid JSON ({error})") from None


def _event_id(document: dict[str, Any], path: str, message_id: str) -> str:
    value = _compiled(path).search(document)
    if not isinstance(value, str) or not value:
        found = "nothing" if value is None else f"a {type(value).__name__}"
        raise InvalidMessage(message_id, path, "event_id", f"must select a non-empty string, found {found}")
    if len(value) > MAX_EVENT_ID_LENGTH:
        raise InvalidMessage(
            message_id, path, "event_id_length", f"at most {MAX_EVENT_ID_LENGTH} characters, got {len(value)}"
        )
    return value


def _received_at(sent_timestamp_ms: str | None) -> tuple[str, int]:
    """The message's own send time: deterministic across redeliveries, unlike the receive time."""
    epoch_ms = int(sent_timestamp_ms) if sent_timestamp_ms else 0
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"), epoch_ms // 1000


def parse_record(record: dict[str, Any], settings: Settings) -> PipelineEvent:
    """Validate one raw SQS record (Lambda event shape) and build its execution input."""
    message_id = record["messageId"]
    body_text = record.get("body") or ""
    document = _unwrap(settings.event_format, message_id, _decode_body(message_id, body_text))
    event_id = _event_id(document, settings.event_id_path, message_id)
    payload = _compiled(settings.event_format.payload_path).search(document)
    if settings.event_format.payload_model is not None:
        try:
            _validate(settings.event_format.payload_model, payload, message_id, settings.event_format.payload_path)
        except InvalidMessage as invalid:
            invalid.event_id = event_id
            raise
    received_at, sent_epoch = _received_at(record.get("attributes", {}).get("SentTimestamp"))
    digest = payload_hash(payload)
    execution_input = canonical_json(
        {
            "event_id": event_id,
            "payload_hash": digest,
            "payload": payload,
            "received_at": received_at,
            "ttl": sent_epoch + settings.record_retention_days * 86_400,
            "message": {"id": message_id, "body": body_text},
        }
    )
    size = len(execution_input.encode())
    if size > MAX_EXECUTION_INPUT_BYTES:
        raise InvalidMessage(
            message_id,
            "body",
            "max_size",
            f"the execution input would be {size} bytes; Step Functions accepts at most {MAX_EXECUTION_INPUT_BYTES}",
            event_id=event_id,
        )
    return PipelineEvent(event_id=event_id, payload_hash=digest, execution_input=execution_input)

"""One notification of the pipeline, read from the SQS record that delivered it.

The state machine's `Publish notification` sends the event's payload as the message and two
message attributes: `event_id` (the producer's id of the event, the key of exactly-once) and
`payload_hash` (SHA-256 of its canonical JSON: two notifications of one event carry the same).
A subscription with raw message delivery (the template's) hands both over as SQS message
attributes and the payload as the body; without it, the body is SNS's JSON envelope, whose
`MessageAttributes` carry them. Both are read here. The SQS message id is never the key: each
delivery of a duplicate notification has its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from onceflow_subscriber.errors import InvalidNotification

# The attribute names `Publish notification` writes (tests/static checks them against the ASL).
EVENT_ID_ATTRIBUTE = "event_id"
PAYLOAD_HASH_ATTRIBUTE = "payload_hash"
# DynamoDB's limit on a partition key value (the marker's key).
MAX_EVENT_ID_BYTES = 2048


@dataclass(frozen=True)
class Notification:
    event_id: str
    payload_hash: str
    payload: dict[str, Any]
    message_id: str  # the SQS message that delivered it (for logs and the marker, never a key)
    body: str  # the SQS body as received, what a dead letter carries

    def invalid(self, field: str, rule: str, detail: str) -> InvalidNotification:
        """A rejection of this notification by the subscriber's own rules (e.g. a missing payload field)."""
        return InvalidNotification(self.message_id, field, rule, detail, self.event_id)


def _string_attributes(record: dict[str, Any]) -> tuple[dict[str, str], str, str]:
    """(attributes, body, where the attributes were read) of a raw delivery or an SNS envelope."""
    body = record.get("body", "")
    raw = record.get("messageAttributes") or {}
    if EVENT_ID_ATTRIBUTE in raw:
        values = {name: value.get("stringValue") for name, value in raw.items() if isinstance(value, dict)}
        return {k: v for k, v in values.items() if isinstance(v, str)}, body, "messageAttributes"
    try:
        envelope = json.loads(body)
    except ValueError:
        return {}, body, "messageAttributes"
    if isinstance(envelope, dict) and envelope.get("Type") == "Notification" and "Message" in envelope:
        attributes = envelope.get("MessageAttributes") or {}
        values = {name: value.get("Value") for name, value in attributes.items() if isinstance(value, dict)}
        return {k: v for k, v in values.items() if isinstance(v, str)}, str(envelope["Message"]), "MessageAttributes"
    return {}, body, "messageAttributes"


def parse_notification(record: dict[str, Any]) -> Notification:
    """The notification in an SQS record as Lambda hands it over, or InvalidNotification naming the rule."""
    message_id = str(record.get("messageId", "?"))
    attributes, payload_text, where = _string_attributes(record)
    event_id = attributes.get(EVENT_ID_ATTRIBUTE, "")
    if not event_id:
        raise InvalidNotification(
            message_id,
            f"{where}.{EVENT_ID_ATTRIBUTE}",
            "required",
            "no event_id attribute: not a pipeline notification",
        )
    if len(event_id.encode()) > MAX_EVENT_ID_BYTES:
        raise InvalidNotification(
            message_id,
            f"{where}.{EVENT_ID_ATTRIBUTE}",
            f"at most {MAX_EVENT_ID_BYTES} bytes",
            f"event_id has {len(event_id.encode())} bytes in UTF-8 (DynamoDB's limit for a partition key)",
        )
    payload_hash = attributes.get(PAYLOAD_HASH_ATTRIBUTE, "")
    if not payload_hash:
        raise InvalidNotification(
            message_id, f"{where}.{PAYLOAD_HASH_ATTRIBUTE}", "required", "no payload_hash attribute", event_id
        )
    try:
        # Decimal, not float: amounts stay exact on their way into DynamoDB numbers.
        payload = json.loads(payload_text, parse_float=Decimal)
    except ValueError as error:
        raise InvalidNotification(message_id, "body", "JSON object", f"not JSON: {error}", event_id) from None
    if not isinstance(payload, dict):
        raise InvalidNotification(
            message_id, "body", "JSON object", f"a JSON {type(payload).__name__}, not an object", event_id
        )
    return Notification(event_id, payload_hash, payload, message_id, record.get("body", ""))

"""Where the event_id and the payload sit in a message body, per kind of producer.

Each format names a Powertools parser model for the envelope (validated first, so a malformed
envelope is rejected with the field that is wrong), where the payload is, and the default
JMESPath for the event_id. EVENT_ID_PATH overrides the default; it is evaluated against the
body after unwrapping (an SNS envelope's `Message` is JSON-decoded in place).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from starter import jsontext
from starter.models import Order, S3ObjectRef


@dataclass(frozen=True)
class EventFormat:
    name: str
    envelope: str | None  # a model in starter.envelopes, imported on first use
    payload_path: str
    payload_model: type[BaseModel] | None
    event_id_path: str

    @property
    def envelope_model(self) -> type[BaseModel] | None:
        if self.envelope is None:
            return None
        return getattr(importlib.import_module("starter.envelopes"), self.envelope)

    def unwrap(self, body: dict[str, Any]) -> dict[str, Any]:
        """The document that EVENT_ID_PATH and payload_path are evaluated against.

        Raises jsontext.NotJson when an SNS envelope's Message is not JSON.
        """
        if self.name == "sns" and isinstance(body.get("Message"), str):
            return {**body, "Message": jsontext.loads(body["Message"])}
        return body


FORMATS: dict[str, EventFormat] = {
    "json": EventFormat("json", None, "@", Order, "order_id"),
    "eventbridge": EventFormat("eventbridge", "EventBridgeModel", "detail", Order, "detail.order_id"),
    "sns": EventFormat("sns", "SnsNotificationModel", "Message", Order, "Message.order_id"),
    "s3": EventFormat("s3", "SingleRecordS3Model", "Records[0].s3.object", S3ObjectRef, "Records[0].s3.object.key"),
}

"""Where the event_id and the payload sit in a message body, per kind of producer.

Each format names a Powertools parser model for the envelope (validated first, so a malformed
envelope is rejected with the field that is wrong) and where the payload is. The domain says where
its event_id is in the payload (PAYLOAD_EVENT_ID_PATH); a format's default event_id path is that
path under the payload's (json: as it is; eventbridge: under `detail`; sns: under the decoded
`Message`). EVENT_ID_PATH (a JMESPath) overrides it; it is evaluated against the body after
unwrapping (an SNS envelope's `Message` is JSON-decoded in place) and used as found. What the
payload itself must be is the domain's choice too (payload_validation.py).

S3 event notifications (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html):
only `ObjectCreated:*` events are accepted, one record per message. The default event_id is the
object key, decoded as S3 encodes it in events (URL-encoded, `+` for a space), then `#` and the
object's `versionId` (versioned buckets) or else its `sequencer`: every new version of a key is
a new event, and a repeated notification of one version is the same event. Other event types
(`ObjectRemoved:*`, restore, replication, lifecycle) and the `s3:TestEvent` S3 sends when a
notification is configured are dead-lettered with the rule they broke (`s3_event_type`,
`s3_test_event`): subscribe the queue to `s3:ObjectCreated:*` only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from starter import jsontext

if TYPE_CHECKING:
    from pydantic import BaseModel


class FormatRejection(ValueError):
    """A well-formed envelope of a kind this format does not accept."""

    def __init__(self, field: str, rule: str, detail: str):
        self.field, self.rule, self.detail = field, rule, detail
        super().__init__(detail)


@dataclass(frozen=True)
class EventFormat:
    name: str
    envelope: str | None  # a model in starter.envelopes, imported on first use
    payload_path: str
    # A model of the format's own payload in starter.models (s3's object), imported on first use
    # (pydantic is slow to import); the other formats carry the domain's payload.
    payload_model_name: str | None = None
    # The format's own default event_id path (s3's names where its computed id comes from); None:
    # the domain's path under the payload's.
    own_event_id_path: str | None = None
    default_event_id: Callable[[dict[str, Any]], Any] | None = None  # instead of event_id_path
    screen: Callable[[dict[str, Any]], None] | None = None  # before the envelope model; raises FormatRejection
    accept: Callable[[dict[str, Any]], None] | None = None  # after it; raises FormatRejection

    @property
    def envelope_model(self) -> type[BaseModel] | None:
        if self.envelope is None:
            return None
        return getattr(importlib.import_module("starter.envelopes"), self.envelope)

    @property
    def payload_model(self) -> type[BaseModel] | None:
        if self.payload_model_name is None:
            return None
        return getattr(importlib.import_module("starter.models"), self.payload_model_name)

    def event_id_path(self, payload_event_id_path: str | None) -> str | None:
        """The default event_id path for a domain whose event_id sits at `payload_event_id_path` in
        its payload; None when the format has none of its own and the domain named none."""
        if self.own_event_id_path is not None:
            return self.own_event_id_path
        if not payload_event_id_path:
            return None
        return payload_event_id_path if self.payload_path == "@" else f"{self.payload_path}.{payload_event_id_path}"

    def unwrap(self, body: dict[str, Any]) -> dict[str, Any]:
        """The document that EVENT_ID_PATH and payload_path are evaluated against.

        Raises jsontext.NotJson when an SNS envelope's Message is not JSON.
        """
        if self.name == "sns" and isinstance(body.get("Message"), str):
            return {**body, "Message": jsontext.loads(body["Message"])}
        return body


def _reject_s3_test_event(body: dict[str, Any]) -> None:
    if body.get("Event") == "s3:TestEvent" and "Records" not in body:
        raise FormatRejection(
            "Event",
            "s3_test_event",
            "an s3:TestEvent, sent once when a bucket notification is configured; it carries no object",
        )


def _accept_s3(body: dict[str, Any]) -> None:
    event_name = body["Records"][0]["eventName"]
    if not event_name.startswith("ObjectCreated:"):
        raise FormatRejection(
            "Records[0].eventName", "s3_event_type", f"{event_name!r}: only ObjectCreated:* events are accepted"
        )


def s3_object_version_id(document: dict[str, Any]) -> str | None:
    """`<decoded key>#<versionId or sequencer>`; None when the record has neither."""
    s3_object = document["Records"][0]["s3"]["object"]
    version = s3_object.get("versionId") or s3_object.get("sequencer")
    key = s3_object.get("key")
    if not isinstance(version, str) or not version or not isinstance(key, str) or not key:
        return None
    return f"{unquote_plus(key)}#{version}"


FORMATS: dict[str, EventFormat] = {
    "json": EventFormat("json", None, "@"),
    "eventbridge": EventFormat("eventbridge", "EventBridgeModel", "detail"),
    "sns": EventFormat("sns", "SnsNotificationModel", "Message"),
    "s3": EventFormat(
        "s3",
        "SingleRecordS3Model",
        "Records[0].s3.object",
        "S3ObjectRef",
        "Records[0].s3.object.{key,versionId|sequencer}",
        default_event_id=s3_object_version_id,
        # Before the envelope model, so the test event gets its own rule rather than "Records missing".
        screen=_reject_s3_test_event,
        accept=_accept_s3,
    ),
}

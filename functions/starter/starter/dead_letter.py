"""Send a message that can never succeed to the dead-letter queue, reason attached."""

from __future__ import annotations

import re
from typing import Any

from starter.messages import InvalidMessage

ERROR_NAME = "Onceflow.InvalidMessage"
# SQS accepts only these characters (the XML 1.0 set) in bodies and attribute values.
_NOT_SQS_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _string(value: str) -> dict[str, str]:
    # The reason names the broken field even when its value has characters SQS would refuse.
    return {"DataType": "String", "StringValue": _NOT_SQS_TEXT.sub("\ufffd", value) or "-"}


def reason_attributes(invalid: InvalidMessage) -> dict[str, dict[str, str]]:
    attributes = {
        "error": _string(ERROR_NAME),
        "cause": _string(str(invalid)),
        "field": _string(invalid.field),
        "rule": _string(invalid.rule),
        "source": _string("starter"),
        "source_message_id": _string(invalid.message_id),
    }
    if invalid.event_id:
        attributes["event_id"] = _string(invalid.event_id)
    return attributes


def send_to_dead_letter_queue(sqs: Any, queue_url: str, body: str, invalid: InvalidMessage) -> str:
    """The original body, unchanged, so that an operator can fix it and redrive it."""
    response = sqs.send_message(QueueUrl=queue_url, MessageBody=body, MessageAttributes=reason_attributes(invalid))
    return str(response["MessageId"])

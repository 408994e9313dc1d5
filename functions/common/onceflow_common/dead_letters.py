"""How a dead letter carries its reason: the message attribute names, one home for all writers
(the starter, the state machine's ASL, the reconciler, the subscriber building block) and readers (the redrive tool, reports).

The state machine's ASL cannot import this module; a static test checks that the attribute names
its `Send to dead-letter queue` state writes are these.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

# The attributes every dead letter may carry. `error`, `cause` and `source` are always present.
ERROR = "error"
CAUSE = "cause"
FIELD = "field"
RULE = "rule"
SOURCE = "source"
SOURCE_MESSAGE_ID = "source_message_id"
EVENT_ID = "event_id"
EXECUTION_ARN = "execution_arn"
REASON_ATTRIBUTES = frozenset({ERROR, CAUSE, FIELD, RULE, SOURCE, SOURCE_MESSAGE_ID, EVENT_ID, EXECUTION_ARN})

# What a redrive adds to each message it sends back (onceflow/ops/redrive.py): how often the message
# was redriven and its first dead-letter reason. A writer that dead-letters such a message again
# carries both over (`carried_provenance`), so the count goes on and a redrive loop shows.
REDRIVE_COUNT = "onceflow_redrive_count"
FIRST_DEAD_LETTER = "onceflow_first_dead_letter"
# Every attribute a writer may put on a dead letter.
WRITTEN_ATTRIBUTES = REASON_ATTRIBUTES | {REDRIVE_COUNT, FIRST_DEAD_LETTER}

# Who wrote the dead letter (the `source` attribute). A message SQS moved by the redrive policy has none.
FROM_STARTER = "starter"
FROM_STATE_MACHINE = "state-machine"
FROM_RECONCILER = "reconciler"
# The subscriber building block (functions/subscriber), into its own dead-letter queue.
FROM_SUBSCRIBER = "subscriber"
FROM_REDRIVE_POLICY = "redrive-policy"
WRITERS = frozenset({FROM_STARTER, FROM_STATE_MACHINE, FROM_RECONCILER})

# The errors of the pipeline's own making a dead letter can carry (the ASL's Pass states and Fail
# paths, the starter, the reconciler, the subscriber building block); the others are AWS's (a task's
# `DynamoDb.…`, `States.Timeout`, a stopped execution's own). tests/operations/test_redrive.py
# checks it against the ASL and the functions.
PIPELINE_ERRORS = frozenset(
    {
        "Onceflow.CannotApply",
        "Onceflow.EffectRefused",
        "Onceflow.InvalidMessage",
        "Onceflow.InvalidNotification",
        "Onceflow.PayloadConflict",
        "Onceflow.RecordRetriesExhausted",
        "Onceflow.StuckPending",
        "Onceflow.UnknownStatus",
    }
)

# SQS accepts only #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF (the XML 1.0 set) in
# bodies and attribute values; these are the others. Written as what is refused, not as the negation
# of what is accepted: the same characters, but `re` compiles that negation into a map of every
# code point, about 30 ms at every import (every command's start, every cold Lambda).
_NOT_SQS_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def string_attribute(value: str) -> dict[str, str]:
    """An SQS String attribute; characters SQS would refuse become U+FFFD, and empty becomes "-"."""
    return {"DataType": "String", "StringValue": _NOT_SQS_TEXT.sub("\ufffd", value) or "-"}


def carried_provenance(message_attributes: Mapping[str, Any] | None) -> dict[str, dict[str, str]]:
    """The redrive count and first reason among an SQS record's attributes (Lambda's event shape,
    `stringValue`), as SendMessage attributes for its next dead letter; none if it was never redriven."""
    carried: dict[str, dict[str, str]] = {}
    for name, data_type in ((REDRIVE_COUNT, "Number"), (FIRST_DEAD_LETTER, "String")):
        value = ((message_attributes or {}).get(name) or {}).get("stringValue")
        if isinstance(value, str) and value:
            carried[name] = {"DataType": data_type, "StringValue": value}
    return carried


def redrive_count_of(message_attributes: Mapping[str, Any] | None) -> str:
    """How often an SQS record (Lambda's event shape) was redriven, "0" if never: the count the
    starter puts in the execution input (`message.redrive_count`) for the workflow's dead letter."""
    value = ((message_attributes or {}).get(REDRIVE_COUNT) or {}).get("stringValue")
    return value if isinstance(value, str) and value.isascii() and value.isdigit() else "0"


def reason_attributes(
    *,
    error: str,
    cause: str,
    source: str,
    field: str | None = None,
    rule: str | None = None,
    source_message_id: str | None = None,
    event_id: str | None = None,
    execution_arn: str | None = None,
) -> dict[str, dict[str, str]]:
    """The message attributes of a dead letter: the three every writer gives, then those it knows."""
    optional = {
        FIELD: field,
        RULE: rule,
        SOURCE_MESSAGE_ID: source_message_id,
        EVENT_ID: event_id,
        EXECUTION_ARN: execution_arn,
    }
    attributes = {ERROR: string_attribute(error), CAUSE: string_attribute(cause), SOURCE: string_attribute(source)}
    attributes.update({name: string_attribute(value) for name, value in optional.items() if value is not None})
    return attributes


# A FIFO queue's name, and so its URL, ends with ".fifo" (SQS requires it).
FIFO_SUFFIX = ".fifo"
# The group of a letter whose message group is not known (an execution input from before FIFO).
UNKNOWN_GROUP = "onceflow-unknown-group"


def is_fifo(queue_url: str) -> bool:
    return queue_url.endswith(FIFO_SUFFIX)


def fifo_fields(queue_url: str, group_id: str | None, deduplication_key: str) -> dict[str, str]:
    """SendMessage's MessageGroupId and MessageDeduplicationId for a FIFO dead-letter queue (none
    for a standard one). The letter keeps its message's group; the deduplication id is a digest of
    what makes this letter one occurrence (`deduplication_key`), so a retried send is dropped by SQS
    and a later dead-lettering of the same event is not."""
    if not is_fifo(queue_url):
        return {}
    return {
        "MessageGroupId": group_id or UNKNOWN_GROUP,
        "MessageDeduplicationId": hashlib.sha256(deduplication_key.encode()).hexdigest(),
    }

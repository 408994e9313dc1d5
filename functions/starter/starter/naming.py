"""Execution names: deterministic, at most 80 characters, findable in the console."""

from __future__ import annotations

import hashlib
import json
import re

MAX_NAME_LENGTH = 80
READABLE_PART_LENGTH = 48
DIGEST_LENGTH = 24
# Step Functions forbids whitespace, brackets, wildcards, " # % \ ^ | ~ ` $ & , ; : / and control
# characters; with CloudWatch logging on (as template.yaml sets it) names should only use
# 0-9, A-Z, a-z, - and _. Everything else in the readable part becomes "_".
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]+")


def execution_name(event_id: str, message_id: str) -> str:
    """`<readable event_id prefix>-<digest of event_id and SQS message id>`.

    The same delivery always gets the same name (so a redelivery is recognised by
    ExecutionAlreadyExists); a producer's resend has a new message id and so a new name,
    and the state machine dedupes it by event_id. The digest covers the whole event_id, so two
    ids that share a readable prefix still get different names.
    """
    readable = _NOT_ALLOWED.sub("_", event_id)[:READABLE_PART_LENGTH].strip("_-") or "event"
    # JSON-encoded pair: unambiguous (no separator a value could contain) and safe for any string.
    digest = hashlib.sha256(json.dumps([event_id, message_id]).encode()).hexdigest()[:DIGEST_LENGTH]
    return f"{readable}-{digest}"

"""Execution names: deterministic, at most 80 characters, findable in the console."""

from __future__ import annotations

import hashlib
import re

MAX_NAME_LENGTH = 80
READABLE_PART_LENGTH = 48
DIGEST_LENGTH = 24
# Step Functions forbids whitespace, brackets, wildcards and ? * < > { } [ ] : ; , \ | ^ ~ $ # % & `
# and control characters; keep a conservative subset so names are also safe in log queries.
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.-]+")


def execution_name(event_id: str, message_id: str) -> str:
    """`<readable event_id prefix>-<digest of event_id and SQS message id>`.

    The same delivery always gets the same name (so a redelivery is recognised by
    ExecutionAlreadyExists); a producer's resend has a new message id and so a new name,
    and the state machine dedupes it by event_id.
    """
    readable = _NOT_ALLOWED.sub("_", event_id)[:READABLE_PART_LENGTH].strip("_.-") or "event"
    digest = hashlib.sha256(f"{event_id}\n{message_id}".encode()).hexdigest()[:DIGEST_LENGTH]
    return f"{readable}-{digest}"

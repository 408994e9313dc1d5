"""Dead letters from the safety net, redriven by SQS itself (the console's "Start DLQ redrive").

The safety net puts the whole "Step Functions Execution Status Change" event on the dead-letter
queue. When SQS moves such a message back to the source queue, the original SQS body is inside:
`detail.input` (a JSON string, the execution input) → `message.body`. Handing that body on makes
the redrive an ordinary delivery, which resumes from the recorded state.
"""

from __future__ import annotations

import json
from typing import Any

SOURCE = "aws.states"
DETAIL_TYPE = "Step Functions Execution Status Change"


def is_status_change(document: Any) -> bool:
    return (
        isinstance(document, dict) and document.get("source") == SOURCE and document.get("detail-type") == DETAIL_TYPE
    )


def original_body(document: dict[str, Any]) -> str | None:
    """The original SQS body, or None when the event left the input out (over 248 KB)."""
    raw_input = (document.get("detail") or {}).get("input")
    if not isinstance(raw_input, str):
        return None
    try:
        body = json.loads(raw_input).get("message", {}).get("body")
    except (json.JSONDecodeError, AttributeError):
        return None
    return body if isinstance(body, str) else None

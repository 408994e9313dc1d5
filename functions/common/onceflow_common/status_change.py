"""Step Functions "Execution Status Change" events, as EventBridge delivers them.

AWS: https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html
Delivery is best effort: nothing may depend on every such event arriving.
"""

from __future__ import annotations

import json
from typing import Any

SOURCE = "aws.states"
DETAIL_TYPE = "Step Functions Execution Status Change"
# Step Functions leaves the input out of the event when escaped input and output exceed 248 KB.
MAX_EVENT_DATA_BYTES = 248 * 1024
# Executions that dead-lettered their event themselves end FAILED with this error.
DEAD_LETTERED_ERROR = "Onceflow.DeadLettered"


def is_status_change(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and document.get("source") == SOURCE
        and document.get("detail-type") == DETAIL_TYPE
        and isinstance(document.get("detail"), dict)
    )


def original_body(execution_input: str | None) -> str | None:
    """The original SQS body inside an execution input (`message.body`), or None if it has none."""
    if not isinstance(execution_input, str):
        return None
    try:
        body = json.loads(execution_input).get("message", {}).get("body")
    except (json.JSONDecodeError, AttributeError):
        return None
    return body if isinstance(body, str) else None

"""CloudWatch Logs bytes of one execution at each logging level, from its history events.

Step Functions logs history events as JSON records (id, type, details, previous_event_id,
event_timestamp, execution_arn, redrive_count):
https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html
Which events each level logs: ALL every event; ERROR the events that report a failure (types
ending in Failed, Aborted or TimedOut, and FailStateEntered); FATAL only the execution's own
failure; OFF nothing: https://docs.aws.amazon.com/step-functions/latest/dg/cloudwatch-log-level.html
Without IncludeExecutionData the records leave out input, output and task parameters.

Method: each history event the engine recorded is rendered as such a record (compact JSON) and
its UTF-8 bytes are counted; CloudWatch Logs bills ingestion by these bytes.
"""

from __future__ import annotations

import json
from typing import Any

LEVELS = ("ALL", "ERROR", "FATAL", "OFF")
_FATAL = {"ExecutionFailed", "ExecutionAborted", "ExecutionTimedOut"}
_EXECUTION_DATA = {"input", "output", "parameters", "inputDetails", "outputDetails"}


def logged_at(level: str, event_type: str) -> bool:
    if level == "ALL":
        return True
    if level == "ERROR":
        return event_type.endswith(("Failed", "Aborted", "TimedOut")) or event_type == "FailStateEntered"
    if level == "FATAL":
        return event_type in _FATAL
    return False


def _details(event: dict[str, Any]) -> dict[str, Any]:
    for key, value in event.items():
        if key.endswith("EventDetails") and isinstance(value, dict):
            return value
    return {}


def log_record(event: dict[str, Any], execution_arn: str, include_execution_data: bool) -> str:
    details = _details(event)
    if not include_execution_data:
        details = {key: value for key, value in details.items() if key not in _EXECUTION_DATA}
    timestamp = event.get("timestamp")
    millis = int(timestamp.timestamp() * 1000) if hasattr(timestamp, "timestamp") else 0
    record = {
        "id": str(event.get("id", "")),
        "type": event.get("type", ""),
        "details": details,
        "previous_event_id": str(event.get("previousEventId", 0)),
        "event_timestamp": str(millis),
        "execution_arn": execution_arn,
        "redrive_count": "0",
    }
    return json.dumps(record, separators=(",", ":"), default=str)


def log_bytes(history: list[dict[str, Any]], execution_arn: str, level: str, include_execution_data: bool) -> int:
    """Bytes Step Functions sends to CloudWatch Logs for this history at this level."""
    return sum(
        len(log_record(event, execution_arn, include_execution_data).encode("utf-8"))
        for event in history
        if logged_at(level, str(event.get("type", "")))
    )

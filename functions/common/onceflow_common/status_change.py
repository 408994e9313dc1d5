"""Step Functions "Execution Status Change" events, as EventBridge delivers them, and the one rule
for which ended executions still need a dead letter.

AWS: https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html
Delivery is best effort (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-states.html):
nothing may depend on every such event arriving, which is why the reconciler also sweeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SOURCE = "aws.states"
DETAIL_TYPE = "Step Functions Execution Status Change"
# Step Functions leaves the input out of the event when escaped input and output exceed 248 KB.
MAX_EVENT_DATA_BYTES = 248 * 1024
# Executions that dead-lettered their event themselves end FAILED with this error.
DEAD_LETTERED_ERROR = "Onceflow.DeadLettered"
# Statuses of an execution that ended outside the workflow's own paths (FAILED only with another error).
ENDED_BADLY = ("FAILED", "TIMED_OUT", "ABORTED")


def is_status_change(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and document.get("source") == SOURCE
        and document.get("detail-type") == DETAIL_TYPE
        and isinstance(document.get("detail"), dict)
    )


def needs_dead_letter(status: str, error: str | None) -> bool:
    """An execution that ended here left its event neither finished nor dead-lettered.

    The same rule as template.yaml's SafetyNetRule pattern (a static test keeps the two equal).
    """
    return status in ("TIMED_OUT", "ABORTED") or (status == "FAILED" and error != DEAD_LETTERED_ERROR)


def original_body(execution_input: str | None) -> str | None:
    """The original SQS body inside an execution input (`message.body`), or None if it has none."""
    if not isinstance(execution_input, str):
        return None
    try:
        body = json.loads(execution_input).get("message", {}).get("body")
    except (json.JSONDecodeError, AttributeError):
        return None
    return body if isinstance(body, str) else None


def group_of(execution_input: str | None) -> str | None:
    """A FIFO source message's group (`message.group_id` of the starter's input), or None."""
    if not isinstance(execution_input, str):
        return None
    try:
        group = json.loads(execution_input).get("message", {}).get("group_id")
    except (json.JSONDecodeError, AttributeError):
        return None
    return group if isinstance(group, str) and group else None


def redrive_count_in(execution_input: str | None) -> str | None:
    """How often the execution's message had been redriven (`message.redrive_count`), or None."""
    if not isinstance(execution_input, str):
        return None
    try:
        count = json.loads(execution_input).get("message", {}).get("redrive_count")
    except (json.JSONDecodeError, AttributeError):
        return None
    return count if isinstance(count, str) and count.isdigit() else None


def event_id_of(execution_input: str | None) -> str | None:
    """The event_id the starter put in an execution input, or None."""
    if not isinstance(execution_input, str):
        return None
    try:
        found = json.loads(execution_input).get("event_id")
    except (json.JSONDecodeError, AttributeError):
        return None
    return found if isinstance(found, str) else None


@dataclass(frozen=True)
class EndedExecution:
    """What the reconciler needs of an ended execution, from an event or from DescribeExecution."""

    execution_arn: str
    status: str
    error: str | None
    cause: str | None
    input: str | None  # None: the event left it out (over MAX_EVENT_DATA_BYTES); read it with DescribeExecution
    stopped_at: float | None = None  # epoch seconds

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> EndedExecution:
        if not is_status_change(event):
            raise ValueError("not a Step Functions Execution Status Change event")
        detail = event["detail"]
        included = (detail.get("inputDetails") or {}).get("included", True)
        return cls(
            execution_arn=str(detail["executionArn"]),
            status=str(detail["status"]),
            error=detail.get("error"),
            cause=detail.get("cause"),
            input=detail.get("input") if included else None,
            stopped_at=detail["stopDate"] / 1000 if isinstance(detail.get("stopDate"), int | float) else None,
        )

    @classmethod
    def from_description(cls, described: dict[str, Any]) -> EndedExecution:
        """From a DescribeExecution response."""
        return cls(
            execution_arn=described["executionArn"],
            status=described["status"],
            error=described.get("error"),
            cause=described.get("cause"),
            input=described.get("input"),
            stopped_at=described["stopDate"].timestamp() if described.get("stopDate") else None,
        )

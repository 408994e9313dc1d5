"""Execution histories written by hand, in the shape boto3's get_execution_history returns."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from onceflow.ops.executions import ExecutionResult

ARN_PREFIX = "arn:aws:states:us-east-1:123456789012:execution:Synthetic:"


class History:
    def __init__(self, start: datetime | None = None):
        self.events: list[dict[str, Any]] = []
        self.clock = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.status = "RUNNING"
        self.add("ExecutionStarted", executionStartedEventDetails={"input": "{}"})

    def add(self, kind: str, **details: Any) -> History:
        self.clock += timedelta(milliseconds=5)
        self.events.append({"type": kind, "id": len(self.events) + 1, "timestamp": self.clock, **details})
        return self

    def state(self, name: str, kind: str, *attempts: str | None) -> History:
        """Enter and leave a state; each attempt is None (the task succeeded) or an error name."""
        self.add(f"{kind}StateEntered", stateEnteredEventDetails={"name": name, "input": json.dumps({"in": name})})
        for outcome in attempts:
            self.add("TaskScheduled", taskScheduledEventDetails={"resource": "invoke", "resourceType": "lambda"})
            if outcome is None:
                self.add("TaskSucceeded", taskSucceededEventDetails={"output": "{}"})
            else:
                self.add("TaskFailed", taskFailedEventDetails={"error": outcome, "cause": f"{outcome} happened"})
        if kind != "Fail":
            self.add(f"{kind}StateExited", stateExitedEventDetails={"name": name, "output": json.dumps({"out": name})})
        return self

    def succeed(self) -> History:
        self.status = "SUCCEEDED"
        return self.add("ExecutionSucceeded", executionSucceededEventDetails={"output": "{}"})

    def fail(self, error: str) -> History:
        self.status = "FAILED"
        return self.add("ExecutionFailed", executionFailedEventDetails={"error": error, "cause": "it failed"})

    def result(self, name: str) -> ExecutionResult:
        return ExecutionResult(ARN_PREFIX + name, name, self.status, {"event_id": name}, self.events)

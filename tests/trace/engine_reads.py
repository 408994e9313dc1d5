"""The reads of executions as the embedded engine answers them, however they were sent: one by one, or
in a batch (ops/batched_calls.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from moto.stepfunctions.responses import StepFunctionResponse

READS = {"GetExecutionHistory": "get_execution_history", "DescribeExecution": "describe_execution"}


def count_engine_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """A Counter of GetExecutionHistory and DescribeExecution answered from now to the test's end."""
    asked: Counter[str] = Counter()
    for operation, method in READS.items():
        answer = getattr(StepFunctionResponse, method)

        def counted(response: StepFunctionResponse, answer: Any = answer, operation: str = operation) -> Any:
            asked.update([operation])
            return answer(response)

        monkeypatch.setattr(StepFunctionResponse, method, counted)
    return asked

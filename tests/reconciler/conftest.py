"""Fixtures for the reconciler tests: the real reconciler function, run by the local function
runtime, and executions stopped at a chosen state (the operator's StopExecution)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from onceflow.devtools.schedules.hooks import ExecutionInterrupts
from onceflow.local.function_runtime import FunctionRuntime
from onceflow.local.safety_net import scheduled_event
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult, wait_for_all
from tests.support import order

RECONCILER = "ReconcilerFunction"


@dataclass
class Reconciler:
    runtime: FunctionRuntime
    logs: io.StringIO

    def sweep(self, after: timedelta = timedelta(0)) -> dict[str, Any]:
        """One scheduled run, due `after` from now."""
        return self.runtime.invoke(scheduled_event(datetime.now(UTC) + after))

    def status_change(self, event: dict[str, Any]) -> dict[str, Any]:
        return self.runtime.invoke(event)

    def metric(self, name: str) -> list[float]:
        """The values of an EMF metric the reconciler printed, in order (what CloudWatch receives)."""
        values: list[float] = []
        for line in self.logs.getvalue().splitlines():
            if not line.startswith("{") or '"_aws"' not in line:
                continue
            document = json.loads(line)
            if name in document:
                values.extend(document[name] if isinstance(document[name], list) else [document[name]])
        return values


def reconciler_for(stack: LocalStack, threshold_seconds: int, **environment: str) -> Reconciler:
    """The reconciler with this pending threshold and any other environment variables given."""
    logs = io.StringIO()
    runtime = FunctionRuntime(
        stack,
        RECONCILER,
        extra_environment={"PENDING_THRESHOLD_SECONDS": str(threshold_seconds), **environment},
        log_stream=logs,
    )
    return Reconciler(runtime, logs)


@pytest.fixture
def reconciler(stack: LocalStack) -> Reconciler:
    """Threshold 0: any pending event counts as pending too long (the tests fast-forward)."""
    return reconciler_for(stack, 0)


@pytest.fixture
def interrupts(stack: LocalStack) -> Iterator[ExecutionInterrupts]:
    with ExecutionInterrupts(stack.client("stepfunctions")).installed() as armed:
        yield armed


def start_and_stop(
    stack: LocalStack, interrupts: ExecutionInterrupts, order_ids: list[str], state: str = "Publish notification"
) -> list[ExecutionResult]:
    """Orders sent through the real starter; each execution stopped on entering `state` (after Record)."""
    from onceflow.local.event_source import SqsEventSource
    from onceflow.local.function_runtime import StarterRuntime

    fired_before = len(interrupts.fired)
    for order_id in order_ids:
        interrupts.arm(order_id, state, "stop")
    sqs = stack.client("sqs")
    for order_id in order_ids:
        sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order(order_id)))
    starter = StarterRuntime(stack, log_stream=io.StringIO())
    SqsEventSource(sqs, stack.source_queue_url, stack.event_source, starter.invoke).run_until_empty()
    results = wait_for_all(stack.client("stepfunctions"), stack.state_machine_arn)
    assert sorted(f.event_id for f in interrupts.fired[fired_before:]) == sorted(order_ids), "every armed stop fired"
    return results


def execution_name_part(arn: str) -> str:
    return re.sub(r".*:", "", arn)

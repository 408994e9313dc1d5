"""A synthetic run of many executions of the real pipeline definition, to size the trace page."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from onceflow.ops.executions import ExecutionResult, histories_kept
from tests.trace.histories import ARN_PREFIX, History

DEFINITION_PATH = Path(__file__).resolve().parents[2] / "statemachine" / "pipeline.asl.json"
RECORD, LOOK_UP, LEFT = "Record event and business item", "Look up earlier record", "What is left to do?"
PUBLISH, MARK, DLQ = "Publish notification", "Mark as sent", "Send to dead-letter queue"


def definition() -> dict[str, Any]:
    return json.loads(DEFINITION_PATH.read_text())


START = datetime(2026, 1, 1, tzinfo=UTC)


def _one(i: int, rng: random.Random) -> ExecutionResult:
    h = History(START + timedelta(seconds=i))  # one a second: the list's order and time filter mean something
    name = f"order-{i:05d}-{rng.getrandbits(32):08x}"
    kind = rng.random()
    if kind < 0.70:  # new: recorded, published (sometimes after retries), marked sent
        publish = [None] if rng.random() < 0.9 else ["SNS.ThrottledException", None]
        h.state(RECORD, "Task", None).state(PUBLISH, "Task", *publish).state(MARK, "Task", None).succeed()
    elif kind < 0.85:  # a duplicate: already sent
        h.state(RECORD, "Task", "DynamoDb.TransactionCanceledException").state(LOOK_UP, "Task", None)
        h.state(LEFT, "Choice").state("Already sent", "Succeed").succeed()
    elif kind < 0.95:  # resumed from pending
        h.state(RECORD, "Task", "DynamoDb.TransactionCanceledException").state(LOOK_UP, "Task", None)
        h.state(LEFT, "Choice").state(PUBLISH, "Task", None).state(MARK, "Task", None).succeed()
    else:  # SNS outage: dead-lettered
        h.state(RECORD, "Task", None).state(PUBLISH, "Task", *["SNS.InternalErrorException"] * 4)
        h.state(DLQ, "Task", None).state("Dead-lettered", "Fail").fail("Onceflow.DeadLettered")
    result = h.result(name)
    return ExecutionResult(result.arn, name, result.status, {"event_id": f"order-{i:05d}"}, result.history)


def executions(count: int, seed: int = 5) -> list[ExecutionResult]:
    rng = random.Random(seed)
    return [_one(i, rng) for i in range(count)]


def pruned(count: int, first: int = 0) -> list[ExecutionResult]:
    """Executions whose history a history budget pruned, as collect() reads them: no events, and
    DescribeExecution's answer (dates, status, input, output or error)."""
    results = []
    for i in range(first, first + count):
        name, started = f"order-{i:05d}-pruned", START + timedelta(seconds=i)
        failed = i % 20 == 0
        described: dict[str, Any] = {
            "executionArn": ARN_PREFIX + name,
            "name": name,
            "status": "FAILED" if failed else "SUCCEEDED",
            "startDate": started,
            "stopDate": started + timedelta(milliseconds=40),
            "input": json.dumps({"event_id": f"order-{i:05d}"}),
        }
        if failed:
            described |= {"error": "Onceflow.DeadLettered", "cause": "sent to the dead-letter queue"}
        else:
            described["output"] = json.dumps({"status": "sent"})
        results.append(
            ExecutionResult(ARN_PREFIX + name, name, described["status"], {"event_id": f"order-{i:05d}"}, [], described)
        )
    return results


def budgeted(results: list[ExecutionResult], budget: int) -> list[ExecutionResult]:
    """`results` (oldest first) as a run with a history budget reads them: the executions the budget
    keeps (onceflow.ops.executions.histories_kept: failed ones first) with their histories, the
    others with what DescribeExecution still knows."""
    kept = histories_kept([r.status for r in results], budget)
    return [r if i in kept else _as_pruned(r) for i, r in enumerate(results)]


def _as_pruned(result: ExecutionResult) -> ExecutionResult:
    first, last = result.history[0], result.history[-1]
    described: dict[str, Any] = {
        "executionArn": result.arn,
        "name": result.name,
        "status": result.status,
        "startDate": first["timestamp"],
        "stopDate": last["timestamp"],
        "input": json.dumps(result.input),
    }
    failed = last.get("executionFailedEventDetails")
    if failed:
        described |= {"error": failed.get("error"), "cause": failed.get("cause")}
    else:
        described["output"] = json.dumps({"status": "sent"})
    return ExecutionResult(result.arn, result.name, result.status, result.input, [], described)

"""The demo on a small stream with every fault kind, in both modes: the report's numbers recounted
independently. On EXPRESS, executions cannot be listed nor their histories read (Standard-only APIs:
https://docs.aws.amazon.com/step-functions/latest/dg/choosing-workflow-type.html), so the paths are
judged from the starter's logged outcome of each record instead."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest

from onceflow.local.demo import SCHEDULE_EVERY_CHUNKS, DemoOptions, DemoRun, run_demo
from onceflow.local.report import PATH_ALREADY_SENT, PATH_CONFLICT, PATH_DEAD_LETTERED, PATH_NEW, PATH_RESUMED
from onceflow.ops.observe import drain, scan

FAULT_KINDS = [
    "starter crash after StartExecution, before ack",
    "SNS outage (failed publishes)",
    "DynamoDB throttling (transactions)",
    "DynamoDB transaction conflicts",
    "redeliveries of handled messages",
    "dead letters redriven after the outage",
    "subscriber crash after its write, before the ack",
    "notifications delivered again to the subscriber",
]


@pytest.fixture(scope="module", params=["STANDARD", "EXPRESS"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def starter_log() -> io.StringIO:
    return io.StringIO()


CHUNKS = 8


@pytest.fixture(scope="module")
def demo(embedded_aws, mode, starter_log) -> DemoRun:
    options = DemoOptions(
        events=40, duplicate_rate=0.3, poison=6, conflicts=2, concurrency=2, chunks=CHUNKS, seed=3, mode=mode
    )
    starter_log.seek(0)
    starter_log.truncate()
    return run_demo(options, aws=embedded_aws, log_stream=starter_log)


def starter_outcomes(log: io.StringIO) -> Counter[str]:
    lines = [json.loads(line) for line in log.getvalue().splitlines() if line.strip()]
    return Counter(line["message"] for line in lines if "message" in line)


# STANDARD only: Express sends no status change events and cannot be stopped (StopExecution is Standard-only).
STANDARD_FAULT_KINDS = ["executions stopped after Record (an operator's StopExecution)", "status change events lost"]


def test_every_fault_kind_really_happened(demo, mode):
    for kind in FAULT_KINDS + (STANDARD_FAULT_KINDS if mode == "STANDARD" else []):
        assert demo.faults.counts.get(kind, 0) > 0, kind
    assert demo.faults.counts["redeliveries reported failed"] == 0


def test_the_reconciler_s_schedule_fires_after_every_third_chunk_and_after_the_last(demo):
    """A count of chunks, not of wall seconds: at time scale 0 (the tests', the demo's default) a schedule
    paced by its period times the time scale fired after every chunk, and at 0.01 as often as the
    machine's speed made it. Here: after chunks 3 and 6, after the last and after the redrive, in
    either mode (the executions that ended are the engine's count: the safety net lists no Express
    execution, and the schedule never fired with Express)."""
    assert demo.faults.counts["dead letters redriven after the outage"] > 0  # the redrive's call has ended executions
    assert demo.pipeline.schedule.runs == CHUNKS // SCHEDULE_EVERY_CHUNKS + 2


def test_report_passes_and_matches_the_tables(demo):
    report, stack = demo.report, demo.pipeline.stack
    assert report.passed, [v for v in report.verdicts if not v.passed]
    assert [v.name[:2] for v in report.verdicts] == ["R1", "R2", "R3", "R4"]  # R4: the example subscriber
    dynamodb = stack.client("dynamodb")
    rows = scan(dynamodb, stack.business_table)
    states = scan(dynamodb, stack.processed_events_table)
    assert report.business_rows == len(rows) == 40
    assert report.unique_events >= 40  # poison with a readable event_id counts too
    assert {s["status"] for s in states} == {"sent"}
    by_event = {s["event_id"]: s for s in states}
    assert all(r["execution_arn"] == by_event[r[stack.business_key]]["execution_arn"] for r in rows)


def test_report_matches_notifications_and_dead_letters(demo):
    report, stack = demo.report, demo.pipeline.stack
    received = Counter(m.attributes["event_id"] for m in demo.pipeline.inbox.received)
    assert report.notifications == sum(received.values())
    assert report.notified_events == len(received) == 40
    assert report.duplicate_notifications == sum(n - 1 for n in received.values())
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url, delete=False)
    letters = Counter(m.attributes["error"] for m in dead)
    assert report.dead_letters_by_reason == dict(letters)
    assert set(letters) == {"Onceflow.InvalidMessage", "Onceflow.PayloadConflict"}
    # Each of the 6 poison messages dead-lettered (one may be twice: a batch the starter crashed on
    # after dead-lettering it is delivered again, at least once), and the 2 conflicts.
    poison = {m.body for m in dead if m.attributes["error"] == "Onceflow.InvalidMessage"}
    assert len(poison) == 6 and letters["Onceflow.InvalidMessage"] >= 6
    assert letters["Onceflow.PayloadConflict"] == 2


def test_every_path_was_taken(demo, mode, starter_log):
    """STANDARD: read from the execution histories. EXPRESS: what an Express user can read instead,
    the starter's outcome of each record (its executions are neither listed nor described)."""
    if mode == "STANDARD":
        paths = demo.report.executions_by_path
        assert sum(paths.values()) == demo.report.executions == len(demo.executions)
        assert paths[PATH_NEW] + paths.get(PATH_RESUMED, 0) >= 40
        for kind in (PATH_ALREADY_SENT, PATH_CONFLICT, PATH_DEAD_LETTERED, PATH_RESUMED):
            assert paths.get(kind, 0) > 0, kind
        return
    assert demo.executions == [] and demo.report.executions == 0  # not listed, as on AWS
    outcomes = starter_outcomes(starter_log)
    assert outcomes["Execution finished the event"] >= 40  # new, resumed and already-sent paths
    # Payload conflicts and the SNS outage's publishes: the workflow dead-lettered them itself.
    dead_lettered = outcomes["Execution dead-lettered the event"]
    assert dead_lettered >= 2 + demo.faults.counts["dead letters redriven after the outage"]
    assert outcomes["Already sent with this payload: acknowledged without an execution"] > 0
    assert "Execution started" not in outcomes  # no asynchronous execution in EXPRESS
    rows = scan(demo.pipeline.stack.client("dynamodb"), demo.pipeline.stack.business_table)
    assert all(":express:" in row["execution_arn"] for row in rows)

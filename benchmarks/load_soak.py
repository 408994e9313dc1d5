"""Load/soak benchmark: thousands of events with 30% duplicates and the fault mix, then recovery.

    .venv/bin/python benchmarks/load_soak.py                      # 3000 events
    .venv/bin/python benchmarks/load_soak.py --events 1000 --chunks 10 --json results.json

Not a test. One embedded AWS, one stack from template.yaml, the real starter behind the emulated
SQS event source. The stream is split into chunks; each chunk carries producer resends, concurrent
copies and redeliveries of already handled records (together `--duplicates` of all deliveries),
and one failure window of the fault mix (SNS within and beyond the Publish retries, DynamoDB
throttling and transaction conflicts, StartExecution and dead-letter send failures), a starter
crash, and executions stopped or timed out at the crash boundaries (onceflow.devtools.schedules). The
safety net sweeps after every chunk; at the end the dead-letter queue is redriven until quiet.

Printed: events/s, executions and state transitions per event (from the execution histories;
a retry is a transition, as AWS bills it), API calls per event by service (counted at the
embedded endpoint: what the pipeline calls, separated from what this harness calls to observe),
the duplicate-notification rate, the invariants (onceflow.devtools.schedules.invariants) and resident
memory sampled over the run. Finished executions are read once, after their chunk, and only
their aggregates are kept; then what moto retains of finished work and AWS would not keep in this
process is released (release_emulator_state; `--keep-emulator-state` keeps it, to show the
emulator's share). What still grows is the data: two items per event, and one execution record
per execution (its name must stay known for ExecutionAlreadyExists).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import random
import resource
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from onceflow.devtools.schedules import INTERRUPTIBLE_STATES, Open
from onceflow.devtools.schedules.hooks import ExecutionInterrupts, StarterCrashed, StarterCrashes
from onceflow.devtools.schedules.invariants import Evidence, check
from onceflow.devtools.schedules.runner import RetryingSafetyNet
from onceflow.devtools.schedules.windows import FaultWindows
from onceflow.domain import Domain, fresh_bodies
from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.local.demo import NOT_REDRIVEN, chunked_stream, expectations, redrive_transient
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.report import successful_records
from onceflow.local.stack import deploy
from onceflow.local.starter_parse import StarterParser
from onceflow.ops.executions import ExecutionResult, history, list_executions
from onceflow.ops.observe import drain, scan
from onceflow.ops.workflow import RECORD

# One failure window per chunk, in turn: (fault, failures injected; None = for the whole chunk).
FAULT_MIX: list[tuple[str, int | None]] = [
    ("sns_publish", 3),  # within the Publish retries
    ("record_throttled", 5),
    ("mark_sent_throttled", 4),
    ("record_conflict", 4),
    ("start_execution", 3),
    ("dead_letter_send", 2),
    ("sns_publish", None),  # an outage: beyond the retries, to the DLQ, redriven at the end
]
# Calls this harness makes to observe the run (not the pipeline's own): reported apart.
OBSERVATION = {
    "states": {"ListExecutions", "DescribeExecution", "GetExecutionHistory", "DescribeStateMachine"},
    "sqs": {"GetQueueAttributes", "GetQueueUrl", "CreateQueue"},
    "dynamodb": {"Scan", "DescribeTable", "UpdateTimeToLive"},
}
OBSERVED_QUEUE = "onceflow-notification-inbox"
RECOVERY_ROUNDS = 7


# --- counting API calls at the endpoint ----------------------------------------------------------
class CallCounter:
    """WSGI middleware in front of moto: counts requests by service, operation and SQS queue."""

    def __init__(self, app: Callable[..., Any]):
        self.app = app
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        key = self.classify(environ, body)
        with self._lock:
            self.counts[key] += 1
        return self.app(environ, start_response)

    @staticmethod
    def classify(environ: dict[str, Any], body: bytes) -> tuple[str, str, str]:
        authorization = environ.get("HTTP_AUTHORIZATION", "")
        service = authorization.split("Credential=", 1)[-1].split("/")[3] if "Credential=" in authorization else "?"
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        queue = ""
        if target:
            operation = target.rsplit(".", 1)[-1]
            if service == "sqs":
                try:
                    queue = str(json.loads(body or b"{}").get("QueueUrl", "")).rsplit("/", 1)[-1]
                except ValueError:
                    queue = ""
        else:
            form = parse_qs(body.decode(errors="replace")) if body else {}
            operation = (form.get("Action") or [environ.get("REQUEST_METHOD", "?")])[0]
        return service, operation, queue


def install_counter(aws: EmbeddedAws) -> CallCounter:
    """Put the counter inside the embedded AWS's request lock (its WSGI app, a private attribute)."""
    serialized = aws._app
    if serialized is None or not hasattr(serialized, "_app"):
        raise SystemExit("onceflow.engine.server changed: cannot find its WSGI app to count calls")
    counter = CallCounter(serialized._app)
    serialized._app = counter
    return counter


# --- memory ----------------------------------------------------------------------------------------
def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux: the high-water mark is what there is
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssSampler(threading.Thread):
    def __init__(self, every: float = 0.5):
        super().__init__(name="rss-sampler", daemon=True)
        self.every = every
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MB)
        self._halt = threading.Event()
        self._began = time.monotonic()

    def run(self) -> None:
        while not self._halt.wait(self.every):
            self.samples.append((time.monotonic() - self._began, rss_mb()))

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


# --- the stream ------------------------------------------------------------------------------------
@dataclass
class Chunk:
    bodies: list[str]
    redeliveries: int
    fault: tuple[str, int | None]
    crash_after_starts: int  # the chunk's first invocation dies after this many StartExecutions
    interrupts: list[tuple[str, str, str]]  # (event_id, state, how)


def build_stream(options: argparse.Namespace, rng: random.Random, domain: Domain) -> list[Chunk]:
    parts, redeliveries = chunked_stream(fresh_bodies(domain, options.events), options.duplicates, options.chunks, rng)
    chunks = []
    for index, part in enumerate(parts):
        ids = [event_id for event_id in map(domain.event_id_of, part) if event_id]
        interrupts = [
            (event, rng.choice(INTERRUPTIBLE_STATES), rng.choice(["stop", "timeout"]))
            for event in rng.sample(ids, min(options.interrupts_per_chunk, len(ids)))
        ]
        chunks.append(
            Chunk(
                bodies=part,
                redeliveries=redeliveries // len(parts) + (1 if index < redeliveries % len(parts) else 0),
                fault=FAULT_MIX[index % len(FAULT_MIX)],
                crash_after_starts=rng.choice([0, 3, 10]),  # before StartExecution, mid-batch, before the ack
                interrupts=interrupts,
            )
        )
    return chunks


# --- reading finished executions once --------------------------------------------------------------
@dataclass
class ExecutionTally:
    seen: set[str] = field(default_factory=set)
    by_status: Counter[str] = field(default_factory=Counter)
    state_entries: int = 0
    retries: int = 0
    records_per_event: Counter[str] = field(default_factory=Counter)

    def read_finished(self, sfn: Any, state_machine_arn: str) -> None:
        for execution in list_executions(sfn, state_machine_arn):
            arn = execution["executionArn"]
            if execution["status"] == "RUNNING" or arn in self.seen:
                continue
            self.seen.add(arn)
            self.by_status[execution["status"]] += 1
            events = history(sfn, arn)
            entered = sum(1 for e in events if e["type"].endswith("StateEntered"))
            scheduled = sum(1 for e in events if e["type"] == "TaskScheduled")
            task_entries = sum(1 for e in events if e["type"] == "TaskStateEntered")
            self.state_entries += entered
            self.retries += scheduled - task_entries
            described = json.loads(sfn.describe_execution(executionArn=arn).get("input") or "{}")
            result = ExecutionResult(arn, execution["name"], execution["status"], described, events)
            self.records_per_event[described.get("event_id", "")] += successful_records(result)

    @property
    def executions(self) -> int:
        return len(self.seen)


def release_emulator_state(aws: EmbeddedAws, arns: set[str]) -> int:
    """Drop what moto keeps of finished work that AWS would not keep in this process.

    - the in-memory evaluation state (history, context) of executions already read: the execution
      itself stays, with its name, status, input and dates, so ListExecutions, DescribeExecution and
      StartExecution's ExecutionAlreadyExists behave as before; only GetExecutionHistory of a
      released execution answers with no events (on AWS the history lives in the service);
    - finished worker threads, which moto's interpreter appends to a module-level list
      (TMP_THREADS) that nothing reads;
    - moto's registry of every model instance ever made (deleted SQS messages, old items...),
      kept only for its /moto-api/data.json dashboard; the backends keep what is live.
    Returns how many executions were released.
    """
    from moto.core.model_instances import reset_model_data
    from moto.stepfunctions.parser import utils as parser_utils
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    released = 0
    with aws.lock:  # no request is being handled meanwhile
        parser_utils.TMP_THREADS[:] = [thread for thread in parser_utils.TMP_THREADS if thread.is_alive()]
        reset_model_data()
        for state_machine in stepfunctions_parser_backends[ACCOUNT_ID][REGION].state_machines:
            for execution in state_machine.executions:
                worker = execution.exec_worker
                ended = execution.exec_arn in arns and execution.status != "RUNNING"
                if ended and worker is not None and worker.env is not None:
                    worker.env = None
                    released += 1
    return released


# --- the run -----------------------------------------------------------------------------------------
def run(options: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(options.seed)
    sampler = RssSampler()
    sampler.start()
    with EmbeddedAws(time_scale=0.0) as aws:
        counter = install_counter(aws)
        stack = deploy(aws.endpoint_url)
        chunks = build_stream(options, rng, stack.domain)
        crashes = StarterCrashes()
        logs = open(os.devnull, "w")  # noqa: SIM115 - the starter's log stream for the whole run, closed below
        pipeline = LocalPipeline(aws, stack, log_stream=logs, invoke_wrapper=crashes.wrap)
        sfn = stack.client("stepfunctions")
        interrupts = ExecutionInterrupts(stack.client("stepfunctions"))
        safety_net = RetryingSafetyNet(pipeline.safety_net)  # LocalPipeline sweeps it whenever idle
        pipeline.safety_net = safety_net  # type: ignore[assignment]
        windows = FaultWindows(stack.dead_letter_queue_url, safety_net)  # type: ignore[arg-type]
        tally = ExecutionTally()
        sent: list[str] = []
        counter.counts.clear()  # from here on: the run, not the deployment
        began = time.monotonic()
        rss_by_chunk: list[tuple[int, float]] = []

        def process() -> None:
            pipeline.process(concurrency=options.concurrency, timeout=options.timeout)

        with interrupts.installed(), crashes.counting_starts(pipeline.starter.module), windows:
            for index, chunk in enumerate(chunks):
                fault, times = chunk.fault
                windows.open(Open(fault, times, steps=1))
                crashes.arm(chunk.crash_after_starts)
                for event_id, state, how in chunk.interrupts:
                    interrupts.arm(event_id, state, how)  # type: ignore[arg-type]
                pipeline.send(chunk.bodies)
                sent.extend(chunk.bodies)
                process()
                handled = pipeline.event_source.acknowledged_records
                for record in rng.sample(handled, min(chunk.redeliveries, len(handled))):
                    with suppress(StarterCrashed):  # SQS hands an already handled record to the starter again
                        pipeline.event_source.invoke({"Records": [record]})
                process()
                windows.close_all()
                crashes.disarm()
                interrupts.disarm()
                safety_net.sweep()
                tally.read_finished(sfn, stack.state_machine_arn)
                if not options.keep_emulator_state:
                    release_emulator_state(aws, tally.seen)
                pipeline.event_source.acknowledged_records.clear()  # redeliveries come from the last chunk
                rss_by_chunk.append((tally.executions, rss_mb()))
                progress(index + 1, len(chunks), began, tally)
        redriven, converged = 0, False
        for _ in range(RECOVERY_ROUNDS):  # the operator after the incident: redrive until quiet
            safety_net.sweep()
            moved = redrive_transient(pipeline)
            redriven += moved
            if not moved:
                converged = True
                break
            process()
        tally.read_finished(sfn, stack.state_machine_arn)
        seconds = time.monotonic() - began
        pipeline_calls = Counter(counter.counts)
        judging_began = time.monotonic()
        evidence = Evidence(
            expectations=expectations(StarterParser(stack), sent),
            state_records=scan(stack.client("dynamodb"), stack.processed_events_table),
            business_rows=scan(stack.client("dynamodb"), stack.business_table),
            notifications=list(pipeline.inbox.collect()),
            dead_letters=drain(stack.client("sqs"), stack.dead_letter_queue_url, delete=False),
            executions=[],  # read once per chunk: R2's record count is checked from the tally below
            running_executions=pipeline.running_executions(),
            recovery_converged=converged,
            business_key=stack.business_key,
            record_state=RECORD,
        )
        report, violations = check(evidence, NOT_REDRIVEN)
        violations += [f"{e}: recorded {n} times" for e, n in tally.records_per_event.items() if n > 1]
        judging_seconds = time.monotonic() - judging_began
        starter_errors = pipeline.event_source.stats.crashed_batches
        logs.close()
    sampler.stop()
    return summarise(
        options, chunks, sent, seconds, tally, pipeline_calls, evidence, report, violations, sampler, rss_by_chunk
    ) | {
        "faults_injected": dict(windows.injected),
        "interrupts_fired": dict(Counter(f"{f.how}@{f.state}" for f in interrupts.fired)),
        "starter_crashes": crashes.crashed_before_start + crashes.crashed_after_start,
        "crashed_batches": starter_errors,
        "redriven": redriven,
        "judging_seconds": round(judging_seconds, 1),
    }


def progress(done: int, total: int, began: float, tally: ExecutionTally) -> None:
    elapsed = time.monotonic() - began
    print(f"  chunk {done}/{total}: {tally.executions} executions, {elapsed:.0f}s, rss {rss_mb():.0f} MB", flush=True)


def _per_service(calls: Counter[tuple[str, str, str]]) -> tuple[dict[str, int], dict[str, int]]:
    pipeline: Counter[str] = Counter()
    observation: Counter[str] = Counter()
    for (service, operation, queue), n in calls.items():
        observing = operation in OBSERVATION.get(service, set()) or queue == OBSERVED_QUEUE
        (observation if observing else pipeline)[service] += n
    return dict(pipeline), dict(observation)


def summarise(
    options: argparse.Namespace,
    chunks: list[Chunk],
    sent: list[str],
    seconds: float,
    tally: ExecutionTally,
    calls: Counter[tuple[str, str, str]],
    evidence: Evidence,
    report: Any,
    violations: list[str],
    sampler: RssSampler,
    rss_by_chunk: list[tuple[int, float]],
) -> dict[str, Any]:
    events = len({e.event_id for e in evidence.expectations if e.event_id})
    pipeline, observation = _per_service(calls)
    notified = Counter(m.attributes.get("event_id", "") for m in evidence.notifications)
    return {
        "events": events,
        "messages_sent": len(sent),
        "redeliveries": sum(c.redeliveries for c in chunks),
        "seconds": round(seconds, 1),
        "events_per_second": round(events / seconds, 2),
        "executions": tally.executions,
        "executions_by_status": dict(tally.by_status),
        "executions_per_event": round(tally.executions / events, 3),
        "state_transitions_per_event": round((tally.state_entries + tally.retries) / events, 2),
        "of_which_retries_per_event": round(tally.retries / events, 3),
        "pipeline_calls_per_event": {s: round(n / events, 2) for s, n in sorted(pipeline.items())},
        "observation_calls_per_event": {s: round(n / events, 2) for s, n in sorted(observation.items())},
        "calls": {f"{s}:{o}" + (f"@{q}" if q else ""): n for (s, o, q), n in sorted(calls.items())},
        "notifications": sum(notified.values()),
        "duplicate_notification_rate": round(sum(n - 1 for n in notified.values() if n > 1) / max(1, events), 4),
        "dead_letters_left": dict(Counter(m.attributes.get("error", "(none)") for m in evidence.dead_letters)),
        "verdicts": {v.name: v.passed for v in report.verdicts},
        "invariant_violations": violations[:20],
        "invariant_violation_count": len(violations),
        "rss_mb_by_executions": [(n, round(mb)) for n, mb in rss_by_chunk],
        "rss_mb_peak_sampled": round(max((mb for _, mb in sampler.samples), default=rss_mb())),
        "ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def print_results(results: dict[str, Any]) -> None:
    width = max(len(k) for k in results)
    for key, value in results.items():
        if key == "calls":
            continue
        print(f"{key:<{width}}  {value}")
    print("calls at the endpoint (service:operation@queue):")
    for name, n in sorted(results["calls"].items(), key=lambda item: -item[1]):
        print(f"  {n:>8}  {name}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--duplicates", type=float, default=0.3, help="share of all deliveries that are duplicates")
    parser.add_argument("--chunks", type=int, default=21, help="chunks of the stream (3 turns of the fault mix)")
    parser.add_argument("--interrupts-per-chunk", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2, help="concurrent starter invocations")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=3600, help="bound on each wait, seconds")
    parser.add_argument(
        "--keep-emulator-state",
        action="store_true",
        help="keep what moto retains of finished work (histories, threads, its instance registry)",
    )
    parser.add_argument("--json", help="also write the results to this file")
    options = parser.parse_args(list(argv) if argv is not None else None)
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)
    results = run(options)
    print_results(results)
    if options.json:
        with open(options.json, "w") as out:
            json.dump(results, out, indent=2)
    return 1 if results["invariant_violation_count"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

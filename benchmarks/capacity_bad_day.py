"""The bad day: each mode driven at 0.5x, 1x and 3x its modelled capacity for one simulated hour,
then drained, on the embedded AWS with AWS's quotas enforced (onceflow/engine/bookkeeping/quotas.py),
with the product as it is ("after") and as it was before issue 19 ("before").

    nice -n 10 .venv/bin/python benchmarks/capacity_bad_day.py
    .venv/bin/python benchmarks/capacity_bad_day.py --modes STANDARD --factors 3 --json out.json

Not a test. How the world is built, honestly (printed with the results):
- Virtual time: one clock of simulated seconds (engine/bookkeeping/quotas.py VirtualClock) that moves only when
  this loop advances it, once the world has done all it can at the current instant: due events
  sent, the starter given every batch its gate allows, and every running execution either ended or
  waiting on the clock (a throttled state transition). So the figures do not depend on the
  machine's speed or load: a slow machine takes longer in real seconds, not in simulated ones.
  The starter's own throttling back-off passes time on that clock (the loop's starter is one
  serial consumer; the producer keeps sending while it waits); failed records become visible again after the queue's visibility timeout on
  it. Not on it: botocore's retry back-offs and the workflow's Retry/Wait delays take no simulated
  time (none fire without faults, and botocore's 0-2 s would refill a fraction of one token),
  nor does a re-queued record's SQS delay (sent without delay).
- AWS's rates do not fit one process, so every rate is divided by one factor k per mode, chosen so
  the modelled capacity of the defaults becomes `--rate` events per simulated second: the
  producer's rate, the quotas' refill rates and bucket sizes, and the starter's throughput (the
  model's MaximumConcurrency x BatchSize / stated batch time, a gate on the event source's
  batches, since Lambda's concurrency cannot be divided: a bucket of one batch's records refilled
  at the modelled Lambda rate / k; a batch is polled once the gate holds as many records as it
  can take, BatchSize with a backlog, and spends them). The loop's starter is one serial
  consumer, so a bucket is floored at one batch (BatchSize calls, three transitions each): AWS's
  1,300-token bucket never throttles a batch, one divided by k would (it holds less than a token).
Runs per mode, all at the same traffic (x of the defaults' modelled capacity):
- after, defaults: the template's defaults (MaximumConcurrency sized by the model);
- after, MaximumConcurrency 20 (STANDARD): Step Functions binds first, the starter waits out the
  throttle and re-queues what outlasts an invocation (EXPRESS at 20 meets DynamoDB's new-table
  throughput first, which the engine does not enforce: not run);
- before: the pipeline before issue 19, MaximumConcurrency 10 (the old default) and the old
  starter: a throttled StartExecution (after botocore's own 3 attempts) reports the record
  failed, SQS redelivers it after the visibility timeout, and past maxReceiveCount its redrive
  policy dead-letters a valid event (no reason attached);
- before, MaximumConcurrency 20: the old starter where Step Functions binds harder;
- after / before, a neighbour takes 3/4 of StartExecution (at 1x): another workload of the
  account drains three quarters of the bucket's refill all along (a sustained throttle, the
  issue's case): what a record throttled for longer than maxReceiveCount receives meets.

Printed per run: events in, completed, dead-lettered by reason, lost, throttled calls by bucket,
re-queued records, backlog peak against the model's, and drain time against the model's
prediction (the backlog left when the hour ends over the modelled rate of the run's settings).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

from onceflow.devtools.capacity import model_capacity, read_capacity_settings
from onceflow.devtools.capacity.engine import engine_quotas
from onceflow.devtools.capacity.model import PATHS, ModeCapacity
from onceflow.devtools.capacity.quotas import load_quotas
from onceflow.devtools.cost.prices import load_prices
from onceflow.engine import EmbeddedAws
from onceflow.engine.bookkeeping.quotas import (
    START_EXECUTION_STANDARD,
    START_SYNC_EXECUTION,
    STATE_TRANSITION_STANDARD,
    BucketSpec,
    EngineQuotas,
    TokenBucket,
    VirtualClock,
)
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import deploy
from onceflow.local.template import TEMPLATE_PATH
from onceflow.ops.observe import drain, scan

HOUR = 3600.0
SWEEP_SECONDS = 600.0  # the safety net's sweep and the inbox, every ten simulated minutes
SETTLE_REAL_SECONDS = 60.0  # at most this long (real) for the running executions to reach the clock
OLD_DEFAULT_CONCURRENCY = "10"  # MaximumConcurrency's default before issue 19
NEIGHBOUR = 0.75  # share of StartExecution's refill another workload of the account takes, in its runs
# Where MaximumConcurrency 20 makes Step Functions bind first: STANDARD (EXPRESS's next limit is
# DynamoDB's new-table throughput, which the engine does not enforce).
STEP_FUNCTIONS_BINDS_AT_20 = {"STANDARD"}
PLAN = (  # config, parameters, the old starter?, the neighbour's share, factors (None: --factors)
    ("after, defaults", {}, False, 0.0, None),
    ("after, MaximumConcurrency 20", {"MaximumConcurrency": "20"}, False, 0.0, (3.0,)),
    ("after, a neighbour takes 3/4 of StartExecution", {}, False, NEIGHBOUR, (1.0,)),
    ("before (MaximumConcurrency 10)", {"MaximumConcurrency": OLD_DEFAULT_CONCURRENCY}, True, 0.0, None),
    ("before, MaximumConcurrency 20", {"MaximumConcurrency": "20"}, True, 0.0, (3.0,)),
    (
        "before, a neighbour takes 3/4 of StartExecution",
        {"MaximumConcurrency": OLD_DEFAULT_CONCURRENCY},
        True,
        NEIGHBOUR,
        (1.0,),
    ),
)


@dataclass
class Run:
    mode: str
    config: str
    factor: float
    k: float
    events_in: int = 0
    completed: int = 0
    dead_lettered: dict[str, int] = field(default_factory=dict)
    valid_dead_lettered_for_throttling: int = 0
    lost: int = 0
    throttled: dict[str, int] = field(default_factory=dict)
    requeued: int = 0
    redelivered: int = 0  # receives of a message received before (ApproximateReceiveCount > 1)
    backlog_peak: int = 0
    model_backlog_peak: float = 0.0
    backlog_at_hour_end: int = 0
    drain_seconds: float | None = None
    model_drain_seconds: float | None = None
    model_sustained_per_hour: float = 0.0
    real_seconds: float = 0.0
    batches: int = 0
    records_handed: int = 0
    settle_timeouts: int = 0

    @property
    def drain_ratio(self) -> float | None:
        if not self.drain_seconds or not self.model_drain_seconds:
            return None
        return self.drain_seconds / self.model_drain_seconds


def _world(capacity: ModeCapacity, k: float, clock: VirtualClock, neighbour: float) -> EngineQuotas:
    published = engine_quotas(capacity.region, scale=k, clock=clock)
    start = START_EXECUTION_STANDARD if capacity.settings.mode == "STANDARD" else START_SYNC_EXECUTION
    spec = published.specs[start]
    published.specs[start] = BucketSpec(spec.bucket, spec.refill_per_second * (1 - neighbour))
    in_flight = float(capacity.settings.batch_size)  # the loop's starter: one batch at a time
    transitions = float(len(PATHS["new event"]))
    specs = {}
    for name, spec in published.specs.items():
        floor = in_flight * (transitions if name == STATE_TRANSITION_STANDARD else 1.0)
        specs[name] = BucketSpec(max(spec.bucket, floor), spec.refill_per_second)
    return EngineQuotas(specs, clock, region=capacity.region, scale=k)


def _body(i: int) -> str:
    return json.dumps({"order_id": f"order-{i:06d}", "customer_id": "customer-7", "amount": "42.50", "currency": "EUR"})


@contextlib.contextmanager
def _starter(sleep_on_clock: Callable[[float], None], old: bool) -> Iterator[None]:
    """The starter's throttling back-off passes time on the virtual clock; `old`: the starter before
    issue 19, each Step Functions call made once (botocore's standard retries, 3 attempts, as then),
    a throttled one reporting its record failed."""
    from starter import executions

    sleep, wait = executions.sleep, executions.call_waiting_out_throttling
    executions.sleep = sleep_on_clock
    if old:
        executions.call_waiting_out_throttling = lambda call, *args, **kwargs: call()
    try:
        yield
    finally:
        executions.sleep, executions.call_waiting_out_throttling = sleep, wait


def _visible(pipeline: LocalPipeline) -> int:
    attributes = pipeline.sqs.get_queue_attributes(
        QueueUrl=pipeline.stack.source_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def _settle(pipeline: LocalPipeline, clock: VirtualClock) -> tuple[int, bool]:
    """Wait (real time) until every running execution has ended or waits on the clock; the running
    count, and whether that happened within SETTLE_REAL_SECONDS."""
    deadline = time.monotonic() + SETTLE_REAL_SECONDS
    while True:
        running = pipeline.running_executions()
        if running <= clock.sleeping():
            return running, True
        if time.monotonic() > deadline:
            return running, False
        time.sleep(0.005)


def run_once(
    mode: str, config: str, parameters: dict[str, str], factor: float, k: float, old: bool, neighbour: float = 0.0
) -> Run:
    assumed = load_prices().assumptions
    settings = read_capacity_settings(TEMPLATE_PATH, {"StateMachineType": mode, **parameters})
    capacity = model_capacity(settings, load_quotas("us-east-1"), assumed)
    start_limit = next(lim for lim in capacity.limits if lim.name.startswith("Step Functions Start"))
    left_to_us = (start_limit.events_per_second or 0.0) * (1 - neighbour)  # what the account's other workload leaves
    sustained = min(capacity.sustained, left_to_us) / k  # events per simulated second in the scaled world
    arrivals = factor * capacity_of_defaults(mode) / k
    clock = VirtualClock()
    quotas = _world(capacity, k, clock, neighbour)
    run = Run(mode, config, factor, k)
    run.model_backlog_peak = max(0.0, arrivals - sustained) * HOUR
    run.model_sustained_per_hour = sustained * HOUR
    began = time.monotonic()
    with EmbeddedAws(quotas=quotas) as aws:  # time_scale 0: nothing sleeps for real
        stack = deploy(aws.endpoint_url, parameter_overrides={"StateMachineType": mode, **parameters})
        log = io.StringIO()
        pipeline = LocalPipeline(aws, stack, log_stream=log)
        source = pipeline.event_source
        source.clock = clock.now
        invoke = source.invoke

        def counting(event: dict) -> dict:  # receives spent again: a message received before
            run.redelivered += sum(int(r["attributes"]["ApproximateReceiveCount"]) > 1 for r in event["Records"])
            return invoke(event)

        source.invoke = counting
        lambda_limit = next(lim for lim in capacity.limits if lim.name.startswith("Lambda"))
        gate_refill = (lambda_limit.events_per_second or 0) / k
        gate = TokenBucket("starter records", BucketSpec(float(settings.batch_size), gate_refill), clock)
        sent = 0
        hour_end_seen = False
        next_sweep = SWEEP_SECONDS
        traffic = threading.RLock()

        def catch_up(note_hour_end: bool) -> None:
            """The producer sends what is due by now; with `note_hour_end` (inside the starter's
            back-off), the backlog is measured too, and noted if the hour has just ended (the loop
            measures it after the starters' turn)."""
            nonlocal sent
            now = clock.now()
            due = int(arrivals * min(now, HOUR)) - sent
            if due > 0:
                pipeline.send([_body(sent + i) for i in range(due)])
                sent += due
            if not note_hour_end:
                return
            if due > 0:  # mid-batch: the loop measures the backlog after the starters' turn
                run.backlog_peak = max(run.backlog_peak, pipeline.queue_depth(stack.source_queue_url))
            if now >= HOUR and not hour_end_seen:
                note_hour_end_backlog(pipeline.queue_depth(stack.source_queue_url))

        def note_hour_end_backlog(depth: int) -> None:
            nonlocal hour_end_seen
            hour_end_seen = True
            run.backlog_at_hour_end = depth
            run.model_drain_seconds = depth / sustained if depth else None

        def next_arrival_or_hour_end() -> float:
            moments = [HOUR] if not hour_end_seen else []
            if (sent + 1) / arrivals <= HOUR:
                moments.append((sent + 1) / arrivals + 1e-9)
            return min(moments, default=float("inf"))

        def starter_sleep(seconds: float) -> None:
            """The starter's back-off: time passes, and the producer keeps sending meanwhile."""
            with traffic:  # (EXPRESS's records run side by side)
                target = clock.now() + seconds
                while (now := clock.now()) < target:
                    clock.advance(min(target, next_arrival_or_hour_end()) - now)
                    catch_up(note_hour_end=True)

        with _starter(starter_sleep, old):
            while True:
                now = clock.now()
                catch_up(note_hour_end=False)
                source.release_due()
                while True:  # the starters: every batch their time allows now (a batch spends its records)
                    wanted = min(settings.batch_size, _visible(pipeline))
                    if not wanted or not gate.take(wanted):
                        break
                    gate.tokens += wanted - source.poll_once()  # what the batch did not hold goes back
                running, settled = _settle(pipeline, clock)
                run.settle_timeouts += not settled
                now = clock.now()  # the starter's back-off may have moved it
                depth = pipeline.queue_depth(stack.source_queue_url)
                run.backlog_peak = max(run.backlog_peak, depth)
                if now >= HOUR and not hour_end_seen:
                    note_hour_end_backlog(depth)
                if now >= next_sweep:
                    pipeline.safety_net.sweep()
                    pipeline.inbox.collect()
                    next_sweep += SWEEP_SECONDS
                if hour_end_seen and depth == 0 and running == 0:
                    if run.backlog_at_hour_end:
                        run.drain_seconds = now - HOUR
                    break
                # The next instant anything can happen.
                moments = [next_sweep, next_arrival_or_hour_end(), *(until for until, _ in source.invisible_until)]
                if wanted:  # when the starters' time allows the next batch
                    moments.append(now + (wanted - gate.tokens) / gate_refill)
                if (wake := clock.next_wake()) is not None:
                    moments.append(wake)
                clock.advance(max(1e-6, min(moments) - now + 1e-9))
        pipeline.safety_net.sweep()
        pipeline.run_schedule_if_anything_ended()
        run.events_in = sent
        stats = source.stats
        run.batches, run.records_handed = stats.batches, stats.records
        dynamodb, sqs = stack.client("dynamodb"), stack.client("sqs")
        orders = {row["order_id"] for row in scan(dynamodb, stack.business_table)}
        letters = drain(sqs, stack.dead_letter_queue_url)
        reasons: Counter[str] = Counter()
        dead_ids = set()
        for letter in letters:
            reason = letter.attributes.get("rule") or letter.attributes.get("error") or "redrive policy (no reason)"
            reasons[reason] += 1
            dead_ids.add(json.loads(letter.body).get("order_id"))
        run.completed = len(orders)
        run.dead_lettered = dict(reasons)
        run.valid_dead_lettered_for_throttling = len(dead_ids - orders)  # every body is valid
        run.lost = len({f"order-{i:06d}" for i in range(sent)} - orders - dead_ids)
        run.throttled = {name: n for name, n in quotas.throttled().items() if n}
        run.requeued = log.getvalue().count("sent to the queue again")
    run.real_seconds = time.monotonic() - began
    return run


_DEFAULTS: dict[str, float] = {}


def capacity_of_defaults(mode: str) -> float:
    """The modelled capacity with the template's defaults: the 1x of every run of this mode."""
    if mode not in _DEFAULTS:
        settings = read_capacity_settings(TEMPLATE_PATH, {"StateMachineType": mode})
        _DEFAULTS[mode] = model_capacity(settings, load_quotas("us-east-1"), load_prices().assumptions).sustained
    return _DEFAULTS[mode]


HEADER = (
    "mode",
    "config",
    "x",
    "in",
    "completed",
    "dead-lettered (reason)",
    "lost",
    "throttled calls",
    "re-queued",
    "receives spent again",
    "backlog peak (model)",
    "drain s (model, ratio)",
    "real s",
)


def _row(r: Run) -> list[str]:
    ratio = f"{r.drain_ratio:.2f}" if r.drain_ratio is not None else "-"
    drained = f"{r.drain_seconds:.0f}" if r.drain_seconds is not None else "-"
    model = f"{r.model_drain_seconds:.0f}" if r.model_drain_seconds is not None else "-"
    throttled = ", ".join(f"{name} {n}" for name, n in r.throttled.items()) or "0"
    dead = ", ".join(f"{reason} {n}" for reason, n in r.dead_lettered.items()) or "0"
    settle = f" ({r.settle_timeouts} settle timeouts)" if r.settle_timeouts else ""
    return [
        r.mode,
        r.config,
        f"{r.factor:g}",
        str(r.events_in),
        str(r.completed),
        dead,
        str(r.lost),
        throttled,
        str(r.requeued),
        str(r.redelivered),
        f"{r.backlog_peak} ({r.model_backlog_peak:.0f})",
        f"{drained} ({model}, {ratio})",
        f"{r.real_seconds:.0f}{settle}",
    ]


def _print(runs: list[Run], rate: float) -> None:
    ks = ", ".join(sorted({f"{r.mode} k={r.k:,.0f}" for r in runs}))
    print(
        f"\nVirtual time; every rate / k ({ks}) so the defaults' modelled capacity is {rate} events per"
        " simulated s; buckets floored at one batch; re-queues without delay.\n"
    )
    print("| " + " | ".join(HEADER) + " |")
    print("|" + " --- |" * len(HEADER))
    for r in runs:
        print("| " + " | ".join(_row(r)) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", nargs="+", default=["STANDARD", "EXPRESS"])
    parser.add_argument("--factors", nargs="+", type=float, default=[0.5, 1.0, 3.0])
    parser.add_argument("--rate", type=float, default=0.05, help="modelled capacity in events per simulated s")
    parser.add_argument("--configs", nargs="+", help="only these configs (by their first word: after, before)")
    parser.add_argument("--json", help="write the runs here")
    args = parser.parse_args()
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    logging.getLogger("samtranslator").setLevel(logging.ERROR)
    runs: list[Run] = []
    for mode in args.modes:
        k = capacity_of_defaults(mode) / args.rate
        for config, parameters, old, neighbour, factors in PLAN:
            if args.configs and not any(config.startswith(c) for c in args.configs):
                continue
            if "MaximumConcurrency 20" in config and mode not in STEP_FUNCTIONS_BINDS_AT_20:
                continue
            for factor in factors or args.factors:
                if factor not in args.factors:
                    continue
                run = run_once(mode, config, parameters, factor, k, old, neighbour)
                runs.append(run)
                _print([run], args.rate)
    _print(runs, args.rate)
    if args.json:
        with open(args.json, "w") as out:
            json.dump([asdict(r) for r in runs], out, indent=2)


if __name__ == "__main__":
    main()

"""The bad day: each mode driven at 0.5x, 1x and 3x its modelled capacity for one simulated hour,
then drained, on the embedded AWS with AWS's quotas enforced (onceflow/local/engine/quotas.py).

    nice -n 10 .venv/bin/python benchmarks/capacity_bad_day.py
    .venv/bin/python benchmarks/capacity_bad_day.py --modes STANDARD --factors 3 --json out.json

Not a test. How the world is scaled, honestly (printed with the results):
- One simulated second is `--time-scale` real seconds: the engine's QuotaClock, the event source's
  visibility timeouts and the engine's Retry/Wait and back-off sleeps all run on it.
- AWS's rates do not fit one process, so every rate is divided by one factor k per mode, chosen so
  the modelled capacity becomes `--rate` events per simulated second: the producer's rate, the
  quotas' refill rates and bucket sizes (their seconds of burst stay AWS's), and the starter's
  throughput (the model's MaximumConcurrency x BatchSize / stated batch time, enforced here as a
  gate on the event source's batches, since Lambda's concurrency cannot be divided). A bucket is
  floored at one full batch per concurrent starter of the defaults (BatchSize x MaximumConcurrency
  tokens): AWS's 1,300-token bucket never throttles the starters' simultaneous batches, a bucket
  divided by k would. The starters' time is a gate of MaximumConcurrency x BatchSize records refilled
  at the modelled Lambda rate / k, each batch spending its records.
- Re-queued throttled records are sent without delay (their 2 s.. delay is in SQS's real seconds).
Each mode runs with the template's defaults (MaximumConcurrency sized by the model) and at 3x also
"unsized" (MaximumConcurrency 20), where Step Functions binds first and the starter is throttled
for the whole hour: the case the starter's throttle handling is for.

Printed per run: events in, completed, dead-lettered by reason, lost, throttled calls by bucket,
re-queued records, backlog peak against the model's, and drain time against the model's
prediction (the backlog left when the hour ends over the modelled rate).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from onceflow.devtools.capacity import model_capacity, read_capacity_settings
from onceflow.devtools.capacity.engine import engine_quotas
from onceflow.devtools.capacity.model import ModeCapacity
from onceflow.devtools.capacity.quotas import load_quotas
from onceflow.devtools.cost.prices import load_prices
from onceflow.local.embedded import EmbeddedAws
from onceflow.local.engine.quotas import BucketSpec, EngineQuotas, QuotaClock, TokenBucket
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import deploy
from onceflow.local.template import TEMPLATE_PATH
from onceflow.ops.observe import drain, scan

HOUR = 3600.0
UNSIZED = {"MaximumConcurrency": "20"}


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
    backlog_peak: int = 0
    model_backlog_peak: float = 0.0
    backlog_at_hour_end: int = 0
    drain_seconds: float | None = None
    model_drain_seconds: float | None = None
    real_seconds: float = 0.0
    batches: int = 0
    records_handed: int = 0

    @property
    def drain_ratio(self) -> float | None:
        if not self.drain_seconds or not self.model_drain_seconds:
            return None
        return self.drain_seconds / self.model_drain_seconds


def _world(capacity: ModeCapacity, k: float, clock: QuotaClock, batch_size: int, concurrency: int) -> EngineQuotas:
    published = engine_quotas(capacity.region, scale=k, clock=clock)
    floor = float(batch_size * concurrency)
    specs = {
        name: BucketSpec(max(spec.bucket, floor), spec.refill_per_second) for name, spec in published.specs.items()
    }
    return EngineQuotas(specs, clock, region=capacity.region, scale=k)


def _body(i: int) -> str:
    return json.dumps({"order_id": f"order-{i:06d}", "customer_id": "customer-7", "amount": "42.50", "currency": "EUR"})


def run_once(
    mode: str, config: str, parameters: dict[str, str], factor: float, k: float, time_scale: float, requeue: bool = True
) -> Run:
    assumed = load_prices().assumptions
    settings = read_capacity_settings(TEMPLATE_PATH, {"StateMachineType": mode, **parameters})
    capacity = model_capacity(settings, load_quotas("us-east-1"), assumed)
    sustained = capacity.sustained / k  # events per simulated second in the scaled world
    arrivals = factor * capacity_of_defaults(mode) / k
    clock = QuotaClock(time_scale)
    defaults = read_capacity_settings(TEMPLATE_PATH, {"StateMachineType": mode})
    quotas = _world(capacity, k, clock, settings.batch_size, defaults.maximum_concurrency)
    run = Run(mode, config, factor, k)
    run.model_backlog_peak = max(0.0, arrivals - sustained) * HOUR
    began = time.monotonic()
    with EmbeddedAws(time_scale=time_scale, quotas=quotas) as aws:
        stack = deploy(aws.endpoint_url, parameter_overrides={"StateMachineType": mode, **parameters})
        if not requeue:  # "before": a record throttled for a whole invocation is reported failed
            stack.starter_environment.pop("SOURCE_QUEUE_URL", None)
        log = io.StringIO()
        pipeline = LocalPipeline(aws, stack, log_stream=log)
        from starter import throttling

        throttling.MAX_DELAY_SECONDS = 0
        lambda_limit = next(lim for lim in capacity.limits if lim.name.startswith("Lambda"))
        # The starters' time, in records: up to MaximumConcurrency full batches at once, refilled at
        # the modelled Lambda rate / k; a batch spends one token per record it held (a short batch
        # is a short invocation, as on Lambda).
        gate = TokenBucket(
            "starter records",
            BucketSpec(
                float(settings.maximum_concurrency * settings.batch_size), (lambda_limit.events_per_second or 0) / k
            ),
            clock,
        )
        sent = 0
        hour_end_seen = False
        last_sweep = 0.0
        started = clock.now()  # the hour starts once the stack is up (deploying takes real seconds)
        while True:
            now = clock.now() - started
            due = int(arrivals * min(now, HOUR)) - sent
            if due > 0:
                pipeline.send([_body(sent + i) for i in range(due)])
                sent += due
            worked = 0
            if gate.take():
                worked = pipeline.event_source.poll_once()
                gate.tokens -= worked - 1  # an empty poll gives its token back
            depth = pipeline.queue_depth(stack.source_queue_url)
            run.backlog_peak = max(run.backlog_peak, depth)
            if now >= HOUR and not hour_end_seen:
                hour_end_seen = True
                run.backlog_at_hour_end = depth
                run.model_drain_seconds = depth / sustained if depth else None
            if now - last_sweep > 600:
                pipeline.safety_net.sweep()
                pipeline.inbox.collect()
                last_sweep = now
            if hour_end_seen and depth == 0 and pipeline.running_executions() == 0:
                if run.backlog_at_hour_end:
                    run.drain_seconds = now - HOUR
                break
            if not worked:
                time.sleep(min(0.05, time_scale))
        pipeline.safety_net.sweep()
        pipeline.run_schedule_if_anything_ended()
        run.events_in = sent
        stats = pipeline.event_source.stats
        run.batches, run.records_handed = stats.batches, stats.records
        dynamodb, sqs = stack.client("dynamodb"), stack.client("sqs")
        orders = {row["order_id"] for row in scan(dynamodb, stack.order_records_table)}
        letters = drain(sqs, stack.dead_letter_queue_url)
        reasons: Counter[str] = Counter()
        dead_ids = set()
        for letter in letters:
            reason = letter.attributes.get("rule") or letter.attributes.get("error") or "redrive policy (no reason)"
            reasons[reason] += 1
            dead_ids.add(json.loads(letter.body).get("order_id"))
        run.completed = len(orders)
        run.dead_lettered = dict(reasons)
        run.valid_dead_lettered_for_throttling = len(dead_ids)  # every body is valid: any letter is one
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


def _print(runs: list[Run], rate: float, time_scale: float) -> None:
    print(
        f"\nScaled world: 1 simulated s = {time_scale} real s; every rate / k so each mode's modelled capacity is"
        f" {rate} events per simulated s; buckets floored at BatchSize x the defaults' MaximumConcurrency; re-queues without delay.\n"
    )
    header = (
        "mode",
        "config",
        "x",
        "k",
        "in",
        "completed",
        "dead-lettered (reason)",
        "lost",
        "throttled calls",
        "backlog peak (model)",
        "drain s (model, ratio)",
        "real s",
    )
    print(" | ".join(header))
    for r in runs:
        ratio = f"{r.drain_ratio:.2f}" if r.drain_ratio is not None else "-"
        drained = f"{r.drain_seconds:.0f}" if r.drain_seconds is not None else "-"
        model = f"{r.model_drain_seconds:.0f}" if r.model_drain_seconds is not None else "-"
        print(
            " | ".join(
                [
                    r.mode,
                    r.config,
                    f"{r.factor:g}",
                    f"{r.k:,.0f}",
                    str(r.events_in),
                    str(r.completed),
                    json.dumps(r.dead_lettered) if r.dead_lettered else "0",
                    str(r.lost),
                    json.dumps(r.throttled) if r.throttled else "0",
                    str(r.requeued),
                    f"{r.backlog_peak} ({r.model_backlog_peak:.0f})",
                    f"{drained} ({model}, {ratio})",
                    f"{r.real_seconds:.0f}",
                ]
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", nargs="+", default=["STANDARD", "EXPRESS"])
    parser.add_argument("--factors", nargs="+", type=float, default=[0.5, 1.0, 3.0])
    parser.add_argument("--rate", type=float, default=0.04, help="modelled capacity in events per simulated s")
    parser.add_argument("--time-scale", type=float, default=0.01, help="real seconds per simulated second")
    parser.add_argument("--no-unsized", action="store_true", help="skip the 3x run with MaximumConcurrency 20")
    parser.add_argument(
        "--before",
        action="store_true",
        help="also the unsized 3x run with throttled records reported failed (no re-queue)",
    )
    parser.add_argument("--json", help="write the runs here")
    args = parser.parse_args()
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    logging.getLogger("samtranslator").setLevel(logging.ERROR)
    runs: list[Run] = []
    for mode in args.modes:
        k = capacity_of_defaults(mode) / args.rate
        plan = [("defaults", {}, factor) for factor in args.factors]
        if not args.no_unsized:
            plan.append(("unsized (MaximumConcurrency 20)", UNSIZED, 3.0))
        plan_runs = [(config, parameters, factor, True) for config, parameters, factor in plan]
        if args.before:
            plan_runs.append(("before: unsized, no re-queue", UNSIZED, 3.0, False))
        for config, parameters, factor, requeue in plan_runs:
            run = run_once(mode, config, parameters, factor, k, args.time_scale, requeue)
            runs.append(run)
            _print([run], args.rate, args.time_scale)
    _print(runs, args.rate, args.time_scale)
    if args.json:
        with open(args.json, "w") as out:
            json.dump([asdict(r) for r in runs], out, indent=2)


if __name__ == "__main__":
    main()

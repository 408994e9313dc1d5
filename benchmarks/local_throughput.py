"""Local pipeline throughput: events per second for growing streams with 30% duplicates.

    .venv/bin/python benchmarks/local_throughput.py            # 200, 1000, 5000 events
    .venv/bin/python benchmarks/local_throughput.py --sizes 200 1000 --baseline

Each run: a fresh embedded AWS and stack, the stream sent to the source queue, the real starter
behind the emulated event source, until every execution has finished. The goal is flat scaling
(5,000-event throughput at least half of the 200-event one). `--baseline` repeats the runs with
onceflow's engine speed-ups off, i.e. moto's own per-execution cost.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import random
import resource
import time

from onceflow.local.demo import make_orders
from onceflow.local.embedded import EmbeddedAws
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import deploy
from onceflow.ops.observe import scan


def run(events: int, duplicate_rate: float, speedups: bool, concurrency: int) -> dict[str, float]:
    rng = random.Random(events)
    bodies = [json.dumps(o) for o in make_orders(events, rng)]
    duplicates = round(events * duplicate_rate / (1 - duplicate_rate))
    bodies += [rng.choice(bodies) for _ in range(duplicates)]
    rng.shuffle(bodies)
    with EmbeddedAws(time_scale=0.0, speedups=speedups) as aws:
        stack = deploy(aws.endpoint_url)
        pipeline = LocalPipeline(aws, stack, log_stream=io.StringIO())
        began = time.perf_counter()
        chunks = iter([bodies[i : i + 50] for i in range(0, len(bodies), 50)])  # a producer streaming
        pipeline.process(concurrency=concurrency, timeout=3600, feed=chunks)
        seconds = time.perf_counter() - began
        rows = len(scan(stack.client("dynamodb"), stack.order_records_table))
        executions = len(pipeline.executions())
    if rows != events:
        raise SystemExit(f"{events} events but {rows} business rows: the run is wrong, not just slow")
    return {
        "events": events,
        "messages": len(bodies),
        "executions": executions,
        "seconds": seconds,
        "events_per_second": events / seconds,
        "ms_per_execution": seconds / executions * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 5000])
    parser.add_argument("--duplicates", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--baseline", action="store_true", help="also run with the engine speed-ups off")
    args = parser.parse_args()
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    modes = [True, False] if args.baseline else [True]
    results: dict[bool, list[dict[str, float]]] = {}
    print(
        f"{'mode':<10}{'events':>8}{'messages':>10}{'executions':>12}{'seconds':>10}{'events/s':>10}{'ms/exec':>9}{'RSS MB':>8}"
    )
    for speedups in modes:
        for size in args.sizes:
            r = run(size, args.duplicates, speedups, args.concurrency)
            results.setdefault(speedups, []).append(r)
            mode = "onceflow" if speedups else "moto"
            print(
                f"{mode:<10}{r['events']:>8}{r['messages']:>10}{r['executions']:>12}{r['seconds']:>10.1f}"
                f"{r['events_per_second']:>10.1f}{r['ms_per_execution']:>9.1f}{r['peak_rss_mb']:>8.0f}",
                flush=True,
            )
    fast = results[True]
    if len(fast) > 1:
        ratio = fast[-1]["events_per_second"] / fast[0]["events_per_second"]
        verdict = "flat enough" if ratio >= 0.5 else "NOT flat"
        print(
            f"scaling: {fast[-1]['events']}-event throughput is {ratio:.2f}x the {fast[0]['events']}-event one ({verdict})"
        )


if __name__ == "__main__":
    main()

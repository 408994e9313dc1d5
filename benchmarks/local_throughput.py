"""Local pipeline throughput: events per second for growing streams with 30% duplicates, with the
engine's speed-ups on, as they were before issue 13, and off (moto's own cost), side by side.

    .venv/bin/python benchmarks/local_throughput.py                          # 200 and 2,000 events
    .venv/bin/python benchmarks/local_throughput.py --sizes 200 2000 5000
    .venv/bin/python benchmarks/local_throughput.py --sizes 200 --modes onceflow moto

Each run is a fresh interpreter (so peak RSS is that run's): a fresh embedded AWS and stack, the
stream fed to the source queue as a producer would, the real starter behind the emulated event
source, until every execution has finished. Rates are given per wall second and per CPU second
(user + sys of every thread, `time.process_time`), because the wall clock of a shared machine says
more about the neighbours than about the engine. The modes:

- onceflow: every speed-up (onceflow.engine.speedups), and histories of finished executions
  kept within the long-run budget (`--history-budget`; they are pruned oldest first);
- before:   the speed-ups as they were before issue 13 (parse cache, item-level rollback; the
  client cache of that time never took effect), every history kept;
- moto:     no speed-up, every history kept.

Targets (issue 13): onceflow ≥ 3x before at 200 and 2,000 events, 2,000-event rate ≥ 0.9x the
200-event one, peak RSS under 500 MB at 5,000 events.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

MODES: dict[str, tuple[str, int | None]] = {
    # mode -> (speed-ups, histories kept; None: all)
    "onceflow": ("all", 1000),
    "before": ("parse_cache,item_rollback", None),
    "moto": ("none", None),
}


def parse_speedups(spec: str, off: list[str] | None = None) -> Any:
    """'all', 'none' or 'a,b' (minus `off`), in the form EmbeddedAws(speedups=...) takes."""
    from onceflow.engine.speedups import resolve

    return resolve(spec) - set(off or [])


def run(
    events: int,
    duplicate_rate: float,
    speedups: Any,
    concurrency: int,
    history_budget: int | None = None,
    around_processing: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> dict[str, Any]:
    from onceflow.domain import fresh_bodies
    from onceflow.engine import EmbeddedAws
    from onceflow.local.pipeline import LocalPipeline
    from onceflow.local.stack import deploy
    from onceflow.ops.executions import list_executions
    from onceflow.ops.observe import scan

    rng = random.Random(events)
    with EmbeddedAws(time_scale=0.0, speedups=speedups, history_budget=history_budget) as aws:
        stack = deploy(aws.endpoint_url)
        bodies = fresh_bodies(stack.domain, events)
        duplicates = round(events * duplicate_rate / (1 - duplicate_rate))
        bodies += [rng.choice(bodies) for _ in range(duplicates)]
        rng.shuffle(bodies)
        pipeline = LocalPipeline(aws, stack, log_stream=io.StringIO())
        chunks = iter([bodies[i : i + 50] for i in range(0, len(bodies), 50)])  # a producer streaming
        with around_processing():
            began, cpu_began = time.perf_counter(), time.process_time()
            pipeline.process(concurrency=concurrency, timeout=3600, feed=chunks)
            seconds, cpu = time.perf_counter() - began, time.process_time() - cpu_began
        rows = len(scan(stack.client("dynamodb"), stack.business_table))
        executions = len(list_executions(pipeline.sfn, stack.state_machine_arn))
        unfinished = pipeline.running_executions()
    if rows != events or unfinished:
        raise SystemExit(f"{events} events: {rows} business rows, {unfinished} still running: the run is wrong")
    return {
        "events": events,
        "messages": len(bodies),
        "executions": executions,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "events_per_second": events / seconds,
        "events_per_cpu_second": events / cpu,
        "cpu_ms_per_execution": cpu / executions * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_in_fresh_interpreter(mode: str, events: int, args: argparse.Namespace) -> dict[str, Any]:
    speedups, budget = MODES[mode]
    if mode == "onceflow":
        budget = args.history_budget
    command = [
        sys.executable,
        __file__,
        "--one",
        str(events),
        "--speedups",
        speedups,
        "--duplicates",
        str(args.duplicates),
        "--concurrency",
        str(args.concurrency),
        *(["--history-budget", str(budget)] if budget is not None else []),
    ]
    return fresh_run(command, f"{mode} run of {events} events")


def fresh_run(command: list[str], what: str, environment: dict[str, str] | None = None) -> dict[str, Any]:
    """A benchmark's `--one` run in a fresh interpreter (the project first on PYTHONPATH): the JSON it prints last."""
    root = Path(__file__).resolve().parents[1]
    base = os.environ if environment is None else environment
    environment = {**base, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), base.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, cwd=root, env=environment)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--before-sizes", type=int, nargs="+", help="sizes for the before mode (default --sizes)")
    parser.add_argument(
        "--moto-sizes", type=int, nargs="+", help="sizes for the moto mode (default --sizes; it is 6x slower)"
    )
    parser.add_argument("--duplicates", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--history-budget", type=int, default=MODES["onceflow"][1])
    parser.add_argument("--speedups", default="all", help=argparse.SUPPRESS)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one run, in this interpreter, as JSON
    args = parser.parse_args()
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    if args.one is not None:
        result = run(args.one, args.duplicates, parse_speedups(args.speedups), args.concurrency, args.history_budget)
        print(json.dumps(result))
        return

    print(f"load average at start: {' '.join(f'{x:.2f}' for x in _load())}; commit {_commit()}")
    header = f"{'mode':<10}{'events':>7}{'msgs':>6}{'execs':>6}{'wall s':>8}{'CPU s':>8}{'ev/s':>7}{'ev/CPU-s':>9}{'CPU ms/ex':>10}{'RSS MB':>7}"
    print(header)
    results: dict[tuple[str, int], dict[str, Any]] = {}
    for mode in args.modes:
        for size in {"moto": args.moto_sizes, "before": args.before_sizes}.get(mode) or args.sizes:
            r = run_in_fresh_interpreter(mode, size, args)
            results[(mode, size)] = r
            print(
                f"{mode:<10}{r['events']:>7}{r['messages']:>6}{r['executions']:>6}{r['seconds']:>8.1f}"
                f"{r['cpu_seconds']:>8.1f}{r['events_per_second']:>7.1f}{r['events_per_cpu_second']:>9.1f}"
                f"{r['cpu_ms_per_execution']:>10.1f}{r['peak_rss_mb']:>7.0f}",
                flush=True,
            )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in _load())}")
    for size in args.sizes:
        for other in ("before", "moto"):
            if ("onceflow", size) in results and (other, size) in results:
                fast, slow = results[("onceflow", size)], results[(other, size)]
                print(
                    f"{size} events: onceflow is {fast['events_per_cpu_second'] / slow['events_per_cpu_second']:.1f}x "
                    f"{other} per CPU second, {fast['events_per_second'] / slow['events_per_second']:.1f}x per wall second"
                )
    for mode in args.modes:
        sized = [results[(mode, s)] for s in args.sizes if (mode, s) in results]
        if len(sized) > 1:
            small, large = sized[0], sized[-1]
            ratio = large["events_per_cpu_second"] / small["events_per_cpu_second"]
            print(
                f"{mode}: {large['events']}-event rate is {ratio:.2f}x the {small['events']}-event one per CPU second "
                f"({large['events_per_second'] / small['events_per_second']:.2f}x per wall second)"
            )


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
    )
    return done.stdout.strip() or "unknown"


def _load() -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ()


if __name__ == "__main__":
    main()

"""What Python's garbage collector costs a local pipeline run, with the collector_thresholds speed-up
on and off, side by side (engine/speedups/collector_thresholds.py; issue 33).

    .venv/bin/python benchmarks/gc_cost.py                         # 1,000 events, 2 rounds
    .venv/bin/python benchmarks/gc_cost.py --events 5000 --rounds 3

Each run is local_throughput.py's (a fresh interpreter, a fresh embedded AWS and stack, the stream
fed to the source queue, the real starter, every execution to its end), with `gc.callbacks` timing
every collection while the events are processed: how many of each generation and the seconds they
took (wall seconds between the collector's start and stop, in the one process). Rounds alternate
the order (on, off, off, on, ...); the figure of each side is its lowest total. The run's CPU is
printed too, but it varies more from run to run on a shared machine than the collector's share does.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIDES = {"on": "all", "off": "all-collector_thresholds"}


def one_run(events: int, speedups: str) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from local_throughput import run

    from onceflow.engine.speedups import resolve

    seconds: Counter[int] = Counter()
    counts: Counter[int] = Counter()
    began = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            seconds[info["generation"]] += time.perf_counter() - began[0]
            counts[info["generation"]] += 1

    @contextmanager
    def collections_timed() -> Iterator[None]:
        gc.callbacks.append(timed)
        try:
            yield
        finally:
            gc.callbacks.remove(timed)

    off = resolve(speedups.removeprefix("all-")) if speedups.startswith("all-") else frozenset()
    result = run(events, 0.3, resolve("all") - off, 2, 1000, collections_timed)
    result["gc"] = {str(generation): [counts[generation], seconds[generation]] for generation in (0, 1, 2)}
    return result


def in_fresh_interpreter(events: int, side: str) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from local_throughput import fresh_run

    environment = {name: value for name, value in os.environ.items() if name != "ONCEFLOW_SPEEDUPS_OFF"}
    command = [sys.executable, __file__, "--one", str(events), "--speedups", SIDES[side]]
    return fresh_run(command, f"the {side} run of {events} events", environment)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one run, in this interpreter, as JSON
    parser.add_argument("--speedups", default="all", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        import logging

        logging.getLogger("moto").setLevel(logging.CRITICAL)
        print(json.dumps(one_run(args.one, args.speedups)))
        return
    print(f"load average at start: {_load()}")
    print(
        f"{'side':<5}{'events':>7}{'execs':>6}{'CPU s':>7}{'RSS MB':>7}  collections (count, s) per generation   total s"
    )
    best: dict[str, dict[str, Any]] = {}
    for round_number in range(args.rounds):
        order = ["on", "off"] if round_number % 2 == 0 else ["off", "on"]
        for side in order:
            r = in_fresh_interpreter(args.events, side)
            total = sum(s for _, s in r["gc"].values())
            per_generation = "  ".join(f"{g}: {n:>4} {s:5.2f}" for g, (n, s) in r["gc"].items())
            print(
                f"{side:<5}{r['events']:>7}{r['executions']:>6}{r['cpu_seconds']:>7.1f}{r['peak_rss_mb']:>7.0f}"
                f"  {per_generation}   {total:5.2f}",
                flush=True,
            )
            r["gc_total"] = total
            if side not in best or total < best[side]["gc_total"]:
                best[side] = r
    on, off = best["on"], best["off"]
    print(f"load average at end: {_load()}")
    print(
        f"collector: {on['gc_total']:.2f} s on against {off['gc_total']:.2f} s off "
        f"({on['gc_total'] / off['gc_total']:.2f}x), {on['gc_total'] / on['cpu_seconds']:.1%} and "
        f"{off['gc_total'] / off['cpu_seconds']:.1%} of their runs' CPU; peak RSS {on['peak_rss_mb']:.0f} "
        f"against {off['peak_rss_mb']:.0f} MB"
    )


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()

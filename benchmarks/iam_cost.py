"""What IAM enforcement costs (issue 31): the same slices with enforcement on and off, interleaved in
one run, each in a fresh process with `ONCEFLOW_IAM` set for it.

    .venv/bin/python benchmarks/iam_cost.py                          # pipeline + demo, 2 rounds
    .venv/bin/python benchmarks/iam_cost.py --events 300 --rounds 3
    .venv/bin/python benchmarks/iam_cost.py --suite tests/test_end_to_end.py tests/subscriber

Slices:
- pipeline: the default stack deployed on a fresh embedded AWS, `--events` orders sent (a tenth of
  them sent twice, as redeliveries) and processed through the real starter, state machine, safety
  net and reconciler (LocalPipeline.process); the figure is the processing alone (wall and the
  process's CPU, all threads), without start-up and deploy; with enforcement on, the CPU spent in
  the decisions themselves is printed too (the on/off difference is within the shared machine's
  noise; this is the cost itself);
- demo: `onceflow demo --events N` as a user runs it (wall, and CPU of the process);
- suite (only with `--suite PATHS`): pytest on those paths (`-p no:randomly -q`), wall and CPU.

Rounds alternate which side runs first; the lowest of each side's rounds is its figure (the machine
is shared), and the ratio on/off is printed per slice.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
Measure = Callable[[bool, Path], tuple[float, float]]


def _child(command: list[str], iam: bool, cwd: Path = ROOT) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall s, CPU s) of a child process run with ONCEFLOW_IAM on or off."""
    environment = {**os.environ, "ONCEFLOW_IAM": "on" if iam else "off", "PYTHONUNBUFFERED": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{' '.join(command[:4])} … failed (exit {done.returncode}) with IAM {'on' if iam else 'off'}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def pipeline_slice(events: int) -> Measure:
    def measure(iam: bool, scratch: Path) -> tuple[float, float]:
        _, _, done = _child([sys.executable, __file__, "--pipeline-child", str(events)], iam)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        if iam:
            share = figures["decision_cpu"] / figures["cpu"]
            print(
                f"    (on: {figures['decisions']} authorizations, {figures['decision_cpu']:.3f} s CPU in them, "
                f"{share:.1%} of the processing's CPU)"
            )
        return figures["wall"], figures["cpu"]

    return measure


def demo_slice(events: int) -> Measure:
    def measure(iam: bool, scratch: Path) -> tuple[float, float]:
        out = scratch / f"demo-{'on' if iam else 'off'}"
        command = [sys.executable, "-c", "from onceflow.cli import main; main()", "demo"]
        wall, cpu, _ = _child([*command, "--events", str(events), "--out", str(out)], iam)
        return wall, cpu

    return measure


def suite_slice(paths: list[str]) -> Measure:
    def measure(iam: bool, scratch: Path) -> tuple[float, float]:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *paths]
        wall, cpu, _ = _child(command, iam)
        return wall, cpu

    return measure


class DecisionClock:
    """The CPU the enforcement's own decisions take, on every thread: each request's authorization
    (enforcement.authorize) and each SNS delivery's admission (sns_delivery.admitted), timed with the
    calling thread's CPU clock. A benchmark's instrument: the functions run as they are."""

    def __init__(self) -> None:
        import threading

        from onceflow.engine.iam import enforcement, sns_delivery

        self.seconds, self.calls = 0.0, 0
        self._lock = threading.Lock()
        for module, name in ((enforcement, "authorize"), (sns_delivery, "admitted")):
            setattr(module, name, self._timed(getattr(module, name)))

    def _timed(self, function: Callable[..., object]) -> Callable[..., object]:
        def timed(*args: object, **kwargs: object) -> object:
            began = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                with self._lock:
                    self.seconds += time.thread_time() - began
                    self.calls += 1

        return timed


def pipeline_child(events: int) -> None:
    """In the child: deploy, then time the processing of `events` orders (and a tenth resent)."""
    import logging

    logging.disable(logging.WARNING)
    from onceflow.engine import EmbeddedAws
    from onceflow.local.pipeline import LocalPipeline
    from onceflow.local.stack import deploy

    bodies = [
        {"order_id": f"order-{i:05d}", "customer_id": f"customer-{i % 7}", "amount": 10.0 + i, "currency": "EUR"}
        for i in range(events)
    ]
    with EmbeddedAws(time_scale=0.0) as aws:
        pipeline = LocalPipeline(aws, deploy(aws.endpoint_url))
        decisions = DecisionClock()
        began, cpu = time.monotonic(), time.process_time()
        pipeline.send([*bodies, *bodies[: max(1, events // 10)]])
        pipeline.process(concurrency=2, timeout=600)
        wall, cpu = time.monotonic() - began, time.process_time() - cpu
        denied = len(aws.iam.denials.all())
    if denied:
        raise SystemExit(f"{denied} requests were refused: the slice must run as the template allows")
    print(json.dumps({"wall": wall, "cpu": cpu, "decisions": decisions.calls, "decision_cpu": decisions.seconds}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200, help="orders through the pipeline slice")
    parser.add_argument("--demo-events", type=int, default=100, help="onceflow demo --events (0: no demo slice)")
    parser.add_argument("--suite", nargs="*", default=[], metavar="PATH", help="pytest paths to time on and off")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pipeline-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pipeline_child is not None:
        pipeline_child(args.pipeline_child)
        return
    slices: dict[str, Measure] = {f"pipeline, {args.events} events (+10% resent)": pipeline_slice(args.events)}
    if args.demo_events:
        slices[f"onceflow demo --events {args.demo_events}"] = demo_slice(args.demo_events)
    if args.suite:
        slices[f"pytest {' '.join(args.suite)}"] = suite_slice(args.suite)
    print(f"load average at start: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; {os.cpu_count()} CPUs")
    best: dict[tuple[str, bool], tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="onceflow-iam-cost-") as scratch_name:
        scratch = Path(scratch_name)
        print(f"{'slice':<48}{'IAM':>5}{'wall s':>9}{'CPU s':>8}")
        for round_number in range(args.rounds):
            sides = (True, False) if round_number % 2 == 0 else (False, True)
            for name, measure in slices.items():
                for iam in sides:
                    wall, cpu = measure(iam, scratch)
                    print(f"{name:<48}{'on' if iam else 'off':>5}{wall:>9.2f}{cpu:>8.2f}", flush=True)
                    if (name, iam) not in best or wall < best[(name, iam)][0]:
                        best[(name, iam)] = (wall, cpu)
    print(f"load average at end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print("\nlowest of the rounds, on / off:")
    for name in slices:
        (wall_on, cpu_on), (wall_off, cpu_off) = best[(name, True)], best[(name, False)]
        print(
            f"{name}: wall {wall_on:.2f} s on, {wall_off:.2f} s off ({wall_on / wall_off:.2f}x); "
            f"CPU {cpu_on:.2f} s on, {cpu_off:.2f} s off ({cpu_on / cpu_off:.2f}x)"
        )


if __name__ == "__main__":
    main()

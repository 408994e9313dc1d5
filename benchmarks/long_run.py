"""A long local run the way a user runs it: `onceflow start` in one process, `onceflow send --count N
--duplicates 0.2` from another, until the source queue is empty and no execution runs. For each
size, a fresh `onceflow start` (its own port); this prints, side by side, the messages per wall
second, the server's CPU per message, and its peak RSS, plus the rate over the first and the last
fifth of the messages (a rate that falls as the run grows shows there).

    .venv/bin/python benchmarks/long_run.py                             # 1,000, 5,000 and 20,000 orders
    .venv/bin/python benchmarks/long_run.py --sizes 1000 5000 --before  # also without the issue-21 fixes

`--before` runs each size again with ONCEFLOW_SPEEDUPS_OFF naming the speed-ups that keep the cost
per event flat (LONG_RUN_SPEEDUPS below): the engine as it was before issue 21 on those points.
The server's CPU and RSS are read from /proc (Linux): user + system time of the `onceflow start`
process, measured from when its stack is deployed, and its VmHWM; after each run, its CPU while idle
(the executions done, nothing sent). Targets (issue 21): the 20,000-order rate at least 0.9x the
1,000-order one, RSS flat and under 600 MB at 20,000, idle CPU near zero.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The speed-ups issue 21 added (onceflow.engine.speedups): what `--before` switches off.
LONG_RUN_SPEEDUPS = ("execution_index", "index_query")
DUPLICATES = 0.2
IDLE_SETTLE_SECONDS = 5  # after the run, before the idle CPU is read
IDLE_SECONDS = 10


@dataclass
class RunResult:
    mode: str
    orders: int
    messages: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    rss_at_end_mb: float
    first_fifth_rate: float
    last_fifth_rate: float
    rows: int
    idle_cpu_percent: float
    samples: list[tuple[float, int]] = field(default_factory=list, repr=False)

    @property
    def rate(self) -> float:
        return self.messages / self.seconds

    @property
    def cpu_ms_per_message(self) -> float:
        return self.cpu_seconds / self.messages * 1000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _memory_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def interrupt(process: subprocess.Popen[Any], timeout: float) -> None:
    """Ctrl-C for a server process; killed if it has not ended after `timeout` seconds."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _onceflow() -> list[str]:
    script = Path(sys.executable).with_name("onceflow")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from onceflow.cli import main; main()"]


def _wait_ready(server: subprocess.Popen[str], log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while "Then: onceflow send" not in log.read_text():
        if server.poll() is not None:
            raise SystemExit(f"onceflow start exited with {server.returncode}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            raise SystemExit(f"onceflow start not ready after {timeout} s:\n{log.read_text()[-4000:]}")
        time.sleep(0.5)


def _depth(sqs: Any, queue_url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


def _running(sfn: Any, state_machine_arn: str) -> bool:
    page = sfn.list_executions(stateMachineArn=state_machine_arn, statusFilter="RUNNING", maxResults=1)
    return bool(page["executions"])


SUMMARY_SECONDS = 1  # `onceflow start --summary-every`
LOG_POLL_SECONDS = 0.1  # how often its log is read for a new summary line
_HANDLED = re.compile(r"^starter: [\d,]+ record\(s\) handled \(total ([\d,]+)\)", re.MULTILINE)


def _handled(log: Path) -> int:
    """Records the starter has handled so far (the total on `onceflow start`'s latest summary line,
    printed every few seconds: onceflow/local/start_progress.py)."""
    totals = _HANDLED.findall(log.read_text())
    return int(totals[-1].replace(",", "")) if totals else 0


def _fifth_rates(samples: list[tuple[float, int]], messages: int) -> tuple[float, float]:
    """Messages per second while the first fifth and the last fifth of the messages were handled,
    from the totals on `onceflow start`'s summary lines (a line a second, each seen within
    LOG_POLL_SECONDS): the time a count was reached is interpolated between the lines around it."""
    points = [(0.0, 0), *samples]

    def time_when_handled(count: float) -> float:
        for (t0, c0), (t1, c1) in itertools.pairwise(points):
            if c1 >= count:
                return t0 + (t1 - t0) * (count - c0) / max(c1 - c0, 1)
        return points[-1][0]

    fifth = messages / 5
    first = fifth / max(time_when_handled(fifth), 1e-9)
    last = fifth / max(points[-1][0] - time_when_handled(messages - fifth), 1e-9)
    return first, last


def run_one(mode: str, orders: int, timeout: float, progress: int = 0) -> RunResult:
    from onceflow.ops.stack import Target, find_stack

    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    environment.pop("ONCEFLOW_SPEEDUPS_OFF", None)
    if mode == "before":
        environment["ONCEFLOW_SPEEDUPS_OFF"] = ",".join(LONG_RUN_SPEEDUPS)
    with tempfile.TemporaryDirectory(prefix="onceflow-long-run-") as scratch:
        log = Path(scratch) / "start.log"
        with log.open("w") as out:
            server = subprocess.Popen(
                # A summary line a second: the handled counts the fifths' rates are read from.
                [
                    *_onceflow(),
                    "start",
                    "--port",
                    str(port),
                    "--template",
                    str(ROOT / "template.yaml"),
                    "--summary-every",
                    str(SUMMARY_SECONDS),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=scratch,
                env=environment,
                text=True,
            )
        try:
            _wait_ready(server, log)
            stack = find_stack(Target(endpoint), "onceflow-local")
            sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
            peak = {"rss": 0.0}
            stop_sampling = threading.Event()

            def sample_rss() -> None:
                while not stop_sampling.wait(0.5):
                    peak["rss"] = max(peak["rss"], _memory_mb(server.pid, "VmRSS"))

            sampler = threading.Thread(target=sample_rss, daemon=True)
            sampler.start()
            cpu_began, began = _cpu_seconds(server.pid), time.monotonic()
            sender = subprocess.Popen(
                [
                    *_onceflow(),
                    "send",
                    "--endpoint",
                    endpoint,
                    "--count",
                    str(orders),
                    "--duplicates",
                    str(DUPLICATES),
                    "--template",
                    str(ROOT / "template.yaml"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=environment,
            )
            messages = orders + round(orders * DUPLICATES / (1 - DUPLICATES))
            samples: list[tuple[float, int]] = []
            reported = (0.0, 0, cpu_began)  # elapsed, handled, CPU at the last progress line
            checked = 0.0  # when the queue and the executions were last checked (once a second: they cost the server)
            while True:
                time.sleep(LOG_POLL_SECONDS)
                elapsed = time.monotonic() - began
                handled = _handled(log)
                if not samples or handled != samples[-1][1]:  # a new summary line, seen within LOG_POLL_SECONDS
                    samples.append((elapsed, handled))
                if elapsed - checked < 1.0:
                    continue
                checked = elapsed
                if progress and samples and samples[-1][1] - reported[1] >= progress:
                    cpu_now, (then, handled_then, cpu_then) = _cpu_seconds(server.pid), reported
                    handled_now = samples[-1][1]
                    print(
                        f"  {mode} {orders}: {handled_now} handled after {elapsed:.0f} s; since the last line "
                        f"{(handled_now - handled_then) / (elapsed - then):.1f} msg/s, "
                        f"{(cpu_now - cpu_then) / (handled_now - handled_then) * 1000:.1f} CPU ms/msg; "
                        f"RSS {_memory_mb(server.pid, 'VmRSS'):.0f} MB",
                        flush=True,
                    )
                    reported = (elapsed, handled_now, cpu_now)
                if sender.poll() is not None:
                    depth = _depth(sqs, stack.source_queue_url)
                    if depth == 0 and not _running(sfn, stack.state_machine_arn):
                        break
                if elapsed > timeout:
                    raise SystemExit(f"{mode} {orders}: not done after {timeout} s")
            if sender.returncode != 0:
                raise SystemExit(f"onceflow send failed: {sender.stdout.read() if sender.stdout else ''}")
            seconds = time.monotonic() - began
            cpu = _cpu_seconds(server.pid) - cpu_began
            # The records of the last second are on the next summary line: its time, once it is printed,
            # is when they were told handled (at most SUMMARY_SECONDS late, as every line is).
            while _handled(log) < messages and time.monotonic() - began < seconds + 3 * SUMMARY_SECONDS:
                time.sleep(LOG_POLL_SECONDS)
            if _handled(log) != samples[-1][1]:
                samples.append((time.monotonic() - began, _handled(log)))
            # Idle: what `onceflow start` costs once the run is over (its loop, sweeps and event source).
            time.sleep(IDLE_SETTLE_SECONDS)
            idle_began = _cpu_seconds(server.pid)
            time.sleep(IDLE_SECONDS)
            idle = (_cpu_seconds(server.pid) - idle_began) / IDLE_SECONDS * 100
            stop_sampling.set()
            sampler.join()
            rss_now = _memory_mb(server.pid, "VmRSS")
            peak_rss = max(peak["rss"], _memory_mb(server.pid, "VmHWM"))
            rows = sum(
                page["Count"]
                for page in stack.client("dynamodb")
                .get_paginator("scan")
                .paginate(TableName=stack.business_table, Select="COUNT")
            )
        finally:
            interrupt(server, 60)
    first, last = _fifth_rates(samples, messages)
    return RunResult(mode, orders, messages, seconds, cpu, peak_rss, rss_now, first, last, rows, idle, samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000], help="orders per run")
    parser.add_argument("--before", action="store_true", help="also run each size with LONG_RUN_SPEEDUPS off")
    parser.add_argument("--before-sizes", type=int, nargs="+", help="sizes for the before runs (default --sizes)")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds a run may take")
    parser.add_argument("--progress", type=int, default=0, help="print a line every this many messages handled")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    print(f"load average at start: {' '.join(load)}; commit {commit.stdout.strip()}; duplicates {DUPLICATES}")
    header = (
        f"{'mode':<8}{'orders':>7}{'msgs':>7}{'wall s':>8}{'msg/s':>7}{'first':>7}{'last':>7}"
        f"{'CPU s':>8}{'CPU ms/msg':>11}{'peak RSS MB':>12}{'RSS end':>8}{'rows':>7}{'idle %':>7}"
    )
    print(header, flush=True)
    runs: list[tuple[str, int]] = [("after", size) for size in args.sizes]
    if args.before:
        runs += [("before", size) for size in (args.before_sizes or args.sizes)]
    results: dict[tuple[str, int], RunResult] = {}
    for mode, size in runs:
        r = run_one(mode, size, args.timeout, args.progress)
        results[(mode, size)] = r
        print(
            f"{r.mode:<8}{r.orders:>7}{r.messages:>7}{r.seconds:>8.1f}{r.rate:>7.1f}{r.first_fifth_rate:>7.1f}"
            f"{r.last_fifth_rate:>7.1f}{r.cpu_seconds:>8.1f}{r.cpu_ms_per_message:>11.1f}{r.peak_rss_mb:>12.0f}"
            f"{r.rss_at_end_mb:>8.0f}{r.rows:>7}{r.idle_cpu_percent:>7.1f}",
            flush=True,
        )
        if r.rows != r.orders:
            print(f"  !! {r.rows} business rows for {r.orders} orders: the run is wrong")
    print(f"load average at end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print("msg/s: messages (orders and their resends) per wall second; first/last: while the first and the")
    print("last fifth of the messages were handled; CPU: the `onceflow start` process only; idle %: its CPU")
    print(f"over {IDLE_SECONDS} s once the run is over, in % of one core.")
    for mode in ("after", "before"):
        sized = sorted((size, r) for (m, size), r in results.items() if m == mode)
        if len(sized) > 1:
            (small, a), (large, b) = sized[0], sized[-1]
            print(
                f"{mode}: {large}-order rate {b.rate / a.rate:.2f}x the {small}-order one per wall second, "
                f"CPU per message {b.cpu_ms_per_message / a.cpu_ms_per_message:.2f}x; "
                f"in the {large}-order run the last fifth ran at {b.last_fifth_rate / b.first_fifth_rate:.2f}x "
                "the first fifth's rate"
            )


if __name__ == "__main__":
    main()

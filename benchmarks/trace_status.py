"""`onceflow trace` and `onceflow status` against a running `onceflow start` with many executions,
as a user runs them (fresh interpreters, wall time), and what a kept history costs in memory.

    python -m benchmarks.trace_status                 # 5,000 executions, budget 1,000
    python -m benchmarks.trace_status --executions 20000
    python -m benchmarks.trace_status --memory-only   # the history budget's memory cost
    python -m benchmarks.trace_status --only status   # `status` alone (no trace page)
    python -m benchmarks.trace_status --requests idle_gates --executions 200
                                                      # server CPU per request, a speed-up off and on

The executions are started with StartExecution (the starter's input, from threads in this
process), so filling does not wait on the queue: every 10th resends an earlier event (the
"already sent" path) and every 20th resends it with another payload (dead-lettered, FAILED).
Beside the commands, the same reads done the way `trace` did before (ListExecutions pages of
100, one GetExecutionHistory after another) are timed in this process, side by side; so are
`status`'s reads now (onceflow/ops/status.py) and as it made them before (every execution listed,
the state table scanned, then the latest histories and the dead-letter sample, one after another).
Both commands also run with the client commands' speed-ups switched off
(ONCEFLOW_CLIENT_SPEEDUPS_OFF=all: option values through pydantic, timestamps through dateutil's
tzlocal, JSON responses through botocore's walk of the shape), interleaved with the default runs
(`trace` three times each way, the median printed); and two per-request costs are timed in this process
both ways: moto's server matching a host against every backend's URL patterns against the
engine's dispatch_cache, and botocore's timestamp parser against the commands' own.
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "functions" / "starter"), str(ROOT / "functions" / "common")]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(port: int, budget: int, environment: dict[str, str] | None = None) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "onceflow",
            "start",
            "--port",
            str(port),
            "--time-scale",
            "0",
            "--history-budget",
            str(budget),
        ],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("`onceflow start` ended early")
        if line.startswith("Then: onceflow send"):
            return process
    process.terminate()
    raise RuntimeError("no banner from `onceflow start` within 300 s")


def _client(endpoint: str, service: str) -> object:
    return boto3.client(
        service, endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )


def _fill(endpoint: str, count: int) -> tuple[str, float]:
    from tests.support import execution_input, order

    sfn = _client(endpoint, "stepfunctions")
    arn = sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]  # type: ignore[attr-defined]

    def one(i: int) -> None:
        earlier = i // 10 * 10 if i % 10 == 9 else i
        body = order(f"order-bench-{earlier:06d}", amount=1.0 if i % 20 == 19 else 42.5)
        sfn.start_execution(stateMachineArn=arn, name=f"bench-{i:06d}", input=execution_input(body, f"m-{i}"))  # type: ignore[attr-defined]

    began = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(count)))
    while sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING", maxResults=1)["executions"]:  # type: ignore[attr-defined]
        time.sleep(1)
    return arn, time.perf_counter() - began


def _command(argv: list[str], environment: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "onceflow", *argv],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"onceflow {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - began


SAMPLE = 500
TRACE_ROUNDS = 3  # `trace` runs of each kind (the median is printed, every wall beside it)
CLIENT_OFF = {"ONCEFLOW_CLIENT_SPEEDUPS_OFF": "all"}


def _cpu_of_children() -> float:
    usage = os.times()
    return usage.children_user + usage.children_system


def _command_cpu(argv: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one `onceflow` run."""
    before = _cpu_of_children()
    wall = _command(argv, environment)
    return wall, _cpu_of_children() - before


def _per_call_costs(endpoint: str, arn: str) -> list[tuple[str, float, float]]:
    """(what, before us, now us) per call, timed here: moto's host matching for a Step Functions
    request against dispatch_cache's, botocore's timestamp parser against onceflow/ops/timestamps.py's
    (on ListExecutions' dates)."""
    import timeit

    from botocore.utils import parse_timestamp as botocore_parse
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    from onceflow.engine.speedups.dispatch_cache import _backend_for_host
    from onceflow.ops.timestamps import parse_timestamp

    modules = tuple(backends.list_of_moto_modules())  # as dispatch_cache has it in both cases
    listing, backends.list_of_moto_modules = backends.list_of_moto_modules, lambda: modules
    try:
        app, cached, host = (
            DomainDispatcherApplication(create_backend_app),
            _backend_for_host(),
            "states.us-east-1.amazonaws.com",
        )
        moto_us = (
            timeit.timeit(lambda: DomainDispatcherApplication.get_backend_for_host(app, host), number=500) / 500 * 1e6
        )
        cached_us = timeit.timeit(lambda: cached(app, host), number=500) / 500 * 1e6
    finally:
        backends.list_of_moto_modules = listing
    page = _client(endpoint, "stepfunctions").list_executions(stateMachineArn=arn, maxResults=1000)  # type: ignore[attr-defined]
    epochs = [e["startDate"].timestamp() for e in page["executions"]] or [time.time()]
    theirs = timeit.timeit(lambda: [botocore_parse(v) for v in epochs], number=5) / 5 / len(epochs) * 1e6
    ours = timeit.timeit(lambda: [parse_timestamp(v) for v in epochs], number=5) / 5 / len(epochs) * 1e6
    return [
        ("host -> backend, twice per request (us each)", moto_us, cached_us),
        ("a response timestamp parsed (us)", theirs, ours),
    ]


def _before(endpoint: str, arn: str) -> tuple[float, float]:
    """The reads as `trace` and `status` made them before: pages of 100, then one history after
    another; SAMPLE histories (spread over old and new) are read and the time scaled to all."""
    from onceflow.ops.executions import history

    sfn = _client(endpoint, "stepfunctions")
    began = time.perf_counter()
    listed = [
        e for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=arn) for e in page["executions"]
    ]  # type: ignore[attr-defined]
    listing = time.perf_counter() - began
    sample = listed[:: max(1, len(listed) // SAMPLE)][:SAMPLE]
    began = time.perf_counter()
    for summary in sample:
        history(sfn, summary["executionArn"])
    return listing, listing + (time.perf_counter() - began) * len(listed) / len(sample)


def _status_reads(endpoint: str) -> tuple[float, float]:
    """`status`'s reads in this process (clients made first): now, and as it made them before."""
    from onceflow.ops.executions import history, list_executions, oldest_first
    from onceflow.ops.redrive import peek
    from onceflow.ops.stack import Target, find_stack
    from onceflow.ops.status import read_status

    stack = find_stack(Target(endpoint), "onceflow-local")
    sfn, sqs, dynamodb = (stack.client(s) for s in ("stepfunctions", "sqs", "dynamodb"))
    stack.client("cloudwatch")
    began = time.perf_counter()
    read_status(stack)
    now = time.perf_counter() - began
    began = time.perf_counter()
    executions = oldest_first(list_executions(sfn, stack.state_machine_arn))
    for summary in executions[-20:]:
        history(sfn, summary["executionArn"])
    for page in dynamodb.get_paginator("scan").paginate(
        TableName=stack.processed_events_table,
        ConsistentRead=True,
        ProjectionExpression="#s",
        ExpressionAttributeNames={"#s": "status"},
    ):
        len(page["Items"])
    sqs.get_queue_attributes(QueueUrl=stack.source_queue_url, AttributeNames=["ApproximateNumberOfMessages"])
    peek(sqs, stack.dead_letter_queue_url, limit=100, sfn=sfn)
    sfn.list_tags_for_resource(resourceArn=stack.state_machine_arn)
    return now, time.perf_counter() - began


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settle(pid: int, timeout: float = 180.0) -> float:
    """Wait until `onceflow start` is done with the fill's aftermath (its safety net and reconciler
    sweep over what ended): under 10% of a core for 2 s. Returns the seconds waited."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        before = _cpu_seconds(pid)
        time.sleep(2)
        if _cpu_seconds(pid) - before < 0.2:
            break
    return time.monotonic() - began


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def memory_per_history(executions: int = 150) -> float:
    """MB a kept history costs: traced memory (traced from before the executions ran) before and
    after pruning every one of them."""
    from onceflow.engine import EmbeddedAws
    from onceflow.engine.bookkeeping.retention import Retention
    from onceflow.local.stack import deploy
    from tests.support import execution_input, order

    with EmbeddedAws(time_scale=0.0) as aws:
        stack = deploy(aws.endpoint_url)
        sfn = stack.client("stepfunctions")
        tracemalloc.start()
        for i in range(executions):
            sfn.start_execution(
                stateMachineArn=stack.state_machine_arn, name=f"m-{i}", input=execution_input(order(f"o-{i}"), f"m{i}")
            )
        while sfn.list_executions(stateMachineArn=stack.state_machine_arn, statusFilter="RUNNING")["executions"]:
            time.sleep(0.5)
        gc.collect()
        kept = tracemalloc.take_snapshot()
        with aws.lock:
            pruned = Retention(max_histories=0).prune()
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        freed = -sum(stat.size_diff for stat in after.compare_to(kept, "filename"))
        return freed / pruned / 1e6


REQUEST_KINDS = ("DescribeExecution", "GetExecutionHistory", "ListTagsForResource")


def _requests(endpoint: str, arn: str, kind: str, count: int) -> float:
    """`count` requests of `kind` from this process (one kept connection), one after another."""
    sfn = _client(endpoint, "stepfunctions")
    arns = [e["executionArn"] for e in sfn.list_executions(stateMachineArn=arn, maxResults=100)["executions"]]  # type: ignore[attr-defined]
    calls = {
        "DescribeExecution": lambda i: sfn.describe_execution(executionArn=arns[i % len(arns)]),  # type: ignore[attr-defined]
        "GetExecutionHistory": lambda i: sfn.get_execution_history(executionArn=arns[i % len(arns)]),  # type: ignore[attr-defined]
        "ListTagsForResource": lambda i: sfn.list_tags_for_resource(resourceArn=arn),  # type: ignore[attr-defined]
    }
    began = time.perf_counter()
    for i in range(count):
        calls[kind](i)
    return time.perf_counter() - began


def server_requests(speedup: str, executions: int, count: int = 200, rounds: int = 3) -> None:
    """Server CPU per request from another process, `speedup` switched off and on: two `onceflow
    start`, filled alike, read in alternation (so the machine's load falls on both alike)."""
    servers = {}
    try:
        for label, off in (("off", speedup), ("on", "")):
            port = _free_port()
            environment = {**os.environ, "ONCEFLOW_SPEEDUPS_OFF": off}
            servers[label] = (f"http://127.0.0.1:{port}", _start(port, 1000, environment))
        arns = {label: _fill(endpoint, executions)[0] for label, (endpoint, _) in servers.items()}
        for _, process in servers.values():
            _settle(process.pid)
        cpu: dict[tuple[str, str], list[float]] = {}
        wall: dict[tuple[str, str], list[float]] = {}
        loads = [os.getloadavg()[0]]
        for _ in range(rounds):
            for kind in REQUEST_KINDS:
                for label, (endpoint, process) in servers.items():
                    before = _cpu_seconds(process.pid)
                    wall.setdefault((kind, label), []).append(_requests(endpoint, arns[label], kind, count) / count)
                    cpu.setdefault((kind, label), []).append((_cpu_seconds(process.pid) - before) / count)
            loads.append(os.getloadavg()[0])
    finally:
        for _, process in servers.values():
            process.terminate()
            process.wait(timeout=60)
    print(
        f"server CPU per request, `{speedup}` off / on ({executions} executions, {rounds} rounds of {count} "
        f"serial requests each, median); load (1 min) {', '.join(f'{load:.1f}' for load in loads)}"
    )
    print(f"{'request':24}{'off ms':>9}{'on ms':>9}{'on/off':>8}{'wall off':>10}{'wall on':>9}")
    for kind in REQUEST_KINDS:
        off, on = (sorted(cpu[(kind, label)])[rounds // 2] * 1000 for label in ("off", "on"))
        wall_off, wall_on = (sorted(wall[(kind, label)])[rounds // 2] * 1000 for label in ("off", "on"))
        print(f"{kind:24}{off:>9.2f}{on:>9.2f}{on / off:>8.2f}{wall_off:>10.2f}{wall_on:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--memory-only", action="store_true")
    parser.add_argument("--only", choices=("status", "trace", "all"), default="all", help="which command to time")
    parser.add_argument("--requests", metavar="SPEEDUP", help="server CPU per request with this speed-up off and on")
    options = parser.parse_args()
    if options.requests:
        server_requests(options.requests, options.executions)
        return
    if options.memory_only:
        print(f"a kept history: {memory_per_history():.3f} MB (traced memory freed by pruning, per execution)")
        return
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    environment = {**os.environ, "ONCEFLOW_ENDPOINT": endpoint}
    server = _start(port, options.budget)
    try:
        arn, filled = _fill(endpoint, options.executions)
        rss = _rss_mb(server.pid)
        settled = _settle(server.pid)
        with tempfile.TemporaryDirectory() as scratch:
            loads = [os.getloadavg()[0]]
            if options.only in ("status", "all"):
                cpu = _cpu_seconds(server.pid)
                status_runs = [_command_cpu(["status"], environment) for _ in range(3)]
                status_cpu = (_cpu_seconds(server.pid) - cpu) / 3
                status = [wall for wall, _ in status_runs]
                status_off = [_command_cpu(["status"], {**environment, **CLIENT_OFF}) for _ in range(3)]
                status_runs += [_command_cpu(["status"], environment) for _ in range(2)]  # interleaved
                status_off += [_command_cpu(["status"], {**environment, **CLIENT_OFF}) for _ in range(2)]
                status_now, status_before = _status_reads(endpoint)
                loads.append(os.getloadavg()[0])
            if options.only in ("trace", "all"):
                trace_runs, trace_off_runs = [], []
                for _ in range(TRACE_ROUNDS):  # interleaved, on and off: the machine's speed drifts
                    trace_runs.append(_command_cpu(["trace", "--out", f"{scratch}/trace.html"], environment))
                    trace_off_runs.append(
                        _command_cpu(["trace", "--out", f"{scratch}/trace-off.html"], {**environment, **CLIENT_OFF})
                    )
                trace, trace_client = sorted(trace_runs)[TRACE_ROUNDS // 2]
                trace_off = sorted(trace_off_runs)[TRACE_ROUNDS // 2]
                size = (Path(scratch) / "trace.html").stat().st_size
                same_page = (Path(scratch) / "trace.html").read_text() == (Path(scratch) / "trace-off.html").read_text()
                listing, reading = _before(endpoint, arn)
                loads.append(os.getloadavg()[0])
        per_call = _per_call_costs(endpoint, arn)
    finally:
        server.terminate()
        server.wait(timeout=60)
    print(
        f"{options.executions} executions (budget {options.budget}) filled in {filled:.0f} s; `onceflow start` RSS {rss:.0f} MB"
        f"; load (1 min) {', '.join(f'{load:.1f}' for load in loads)}; settled after the fill in {settled:.0f} s"
    )
    print(f"{'what':48}{'wall s':>8}{'target s':>10}")
    if options.only in ("status", "all"):
        print(
            f"{'onceflow status (median of 3)':48}{sorted(status)[1]:>8.2f}{1.0:>10.1f}   (server CPU {status_cpu:.2f} s each)"
        )
        print(f"{'status reads now (in this process)':48}{status_now:>8.2f}")
        for label, runs in (("status, client speed-ups off", status_off), ("status, client speed-ups on", status_runs)):
            walls, cpus = sorted(w for w, _ in runs), sorted(c for _, c in runs)
            print(
                f"{label + f' (median of {len(runs)})':48}{walls[len(walls) // 2]:>8.2f}"
                f"{'':>10}   (its CPU {cpus[len(cpus) // 2]:.2f} s; walls {', '.join(f'{w:.2f}' for w in walls)})"
            )
        off_cpu = sorted(c for _, c in status_off)[len(status_off) // 2]
        on_cpu = sorted(c for _, c in status_runs)[len(status_runs) // 2]
        print(f"ratio status CPU off / on: {off_cpu / on_cpu:.2f}×")
        print(f"{'status reads before: all listed, table scanned':48}{status_before:>8.2f}")
    if options.only in ("trace", "all"):
        print(
            f"{'onceflow trace (page ' + f'{size / 1e6:.1f} MB, median of {TRACE_ROUNDS})':48}{trace:>8.2f}{10.0:>10.1f}"
            f"   (walls {', '.join(f'{w:.2f}' for w, _ in sorted(trace_runs))})"
        )
        print(f"{'before: ListExecutions, pages of 100':48}{listing:>8.2f}")
        print(f"{'before: + one history after another (no page)':48}{reading:>8.2f}   ({SAMPLE} read, scaled)")
        print(f"ratio trace now / reads before: {trace / reading:.2f}×")
        print(
            f"{'trace, client speed-ups off (median)':48}{trace_off[0]:>8.2f}{'':>10}   (its CPU {trace_off[1]:.2f} s;"
            f" on: {trace:.2f} s wall, {trace_client:.2f} s CPU; the same page: {same_page})"
        )
    print(f"{'per call (in this process)':48}{'before':>8}{'now':>10}")
    for label, before, now in per_call:
        print(f"{label:48}{before:>8.2f}{now:>10.2f}   ({before / now:.0f}×)")


if __name__ == "__main__":
    main()

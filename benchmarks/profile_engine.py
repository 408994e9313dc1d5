"""Where the embedded engine spends its CPU: py-spy samples every thread of a local pipeline run
(the real starter behind the emulated event source, every execution to its end; attached after
set-up, so imports and the deploy are left out) and this prints the top functions by inclusive and
by own samples, plus the costs issue 13 tracks by name.

    .venv/bin/pip install py-spy                                   # once
    .venv/bin/python benchmarks/profile_engine.py --events 100     # speed-ups as configured
    .venv/bin/python benchmarks/profile_engine.py --events 100 --speedups none
    .venv/bin/python benchmarks/profile_engine.py --events 100 --speedups all --off in_process_integrations
    .venv/bin/python benchmarks/profile_engine.py --raw profile.txt    # summarise an earlier recording

`--speedups` takes `all`, `none` or a comma list of names from onceflow.engine.speedups.
Samples of waiting threads (on the request lock, a socket, a queue: WAITING below) are left out,
so the percentages are shares of CPU, not of wall time. py-spy pauses the process for each sample:
wall and CPU times printed under the profiler are inflated. Its GIL-holder attribution can be wrong
between threads: it once gave `onceflow start`'s safety-net sweep 18 % of the samples where the sweep's
own thread CPU (`time.thread_time` around it) was 1.6 %. Check a surprising share by timing the
function itself; compare code with benchmarks/instructions.py.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Costs named in issue 13, matched on "function (file)" frames of the collapsed stacks.
TRACKED: dict[str, list[tuple[str, str]]] = {
    "boto3 client creation": [("Session.create_client", "botocore/session.py")],
    "JSONPath parsing": [("parse", "jsonpath_ng/ext/parser.py"), ("parse", "jsonpath_ng/jsonpath_ng/parser.py")],
    "ASL definition parsing": [("parse", "asl/parse/asl_parser.py")],
    "SQS queue attributes": [("attributes", "moto/sqs/models.py")],
    "SQS receive_message": [("receive_message", "moto/sqs/models.py")],
    "SQS delete_message": [("delete_message", "moto/sqs/models.py")],
    "boto3 calls over HTTP (client side: botocore send)": [("_send", "botocore/endpoint.py")],
    "boto3 calls in process (moto's BotocoreStubber)": [("_LockedStubber.__call__", "speedups/integration_clients.py")],
    "moto server requests (werkzeug, all of it)": [("run_wsgi", "werkzeug/serving.py")],
    "moto request dispatch (BaseResponse.dispatch)": [("BaseResponse.dispatch", "moto/core/responses.py")],
    "DynamoDB transact_write_items": [("transact_write_items", "moto/dynamodb/models/__init__.py")],
    "execution history / describe": [("get_execution_history", "moto/stepfunctions/")],
    "starter handler": [("lambda_handler", "app.py")],
}
# Leaves that are a thread waiting, not working: py-spy's idle detection misses some of them.
WAITING = {
    ("Condition.wait", "threading.py"),
    ("Thread._wait_for_tstate_lock", "threading.py"),
    ("Event.wait", "threading.py"),
    ("_worker", "concurrent/futures/thread.py"),  # a pool thread waiting for work
    ("SocketIO.readinto", "socket.py"),
    ("socket.accept", "socket.py"),
    ("_PollLikeSelector.select", "selectors.py"),
    ("EpollSelector.select", "selectors.py"),
    ("_SerializedApp.__call__", "onceflow/engine/server.py"),  # waiting for the request lock
    ("_LockedStubber.__call__", "onceflow/engine/speedups/integration_clients.py"),  # the same lock
}
_FRAME = re.compile(r"^(?P<function>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")


def workload(args: argparse.Namespace) -> Path:
    """Set up (imports, embedded AWS, stack) unprofiled, then profile the processing only."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from local_throughput import parse_speedups, run

    output = Path(args.output or tempfile.mkstemp(prefix="onceflow-profile-", suffix=".txt")[1])

    @contextmanager
    def profiled() -> Iterator[None]:
        recorder = _attach_py_spy(os.getpid(), output, args.rate)
        try:
            yield
        finally:
            recorder.send_signal(signal.SIGINT)  # py-spy writes its recording when interrupted
            recorder.wait(timeout=120)

    result = run(args.events, 0.3, parse_speedups(args.speedups, args.off), args.concurrency, None, profiled)
    print(
        f"{result['events']} events, {result['executions']} executions: {result['seconds']:.1f} s wall, "
        f"{result['cpu_seconds']:.1f} s CPU, {result['cpu_ms_per_execution']:.1f} ms CPU per execution "
        f"(under the profiler)",
        flush=True,
    )
    return output


def _attach_py_spy(pid: int, output: Path, rate: int) -> subprocess.Popen[bytes]:
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        raise SystemExit("py-spy is not installed: .venv/bin/pip install py-spy")
    # --gil: only the thread holding the GIL is sampled. Without it, threads waiting for the GIL
    # (after a socket write, os.urandom, a lock) look busy and the profile names the wrong costs.
    command = [py_spy, "record", "--pid", str(pid), "--format", "raw", "--function", "--gil", "--rate", str(rate)]
    recorder = subprocess.Popen([*command, "--output", str(output)], stdout=subprocess.DEVNULL)
    time.sleep(1.0)  # attached before the work starts (a wait, not a test: nothing is asserted on it)
    if recorder.poll() is not None:
        raise SystemExit("py-spy could not attach to this process (ptrace not permitted?)")
    return recorder


def summarise(raw: Path, top: int) -> None:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    tracked: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_short(frame) for frame in stack.split(";")]
        if _waiting(frames[-1]):
            continue
        total += count
        for frame in set(frames):
            inclusive[frame] += count
        own[frames[-1]] += count
        names = {name for name, patterns in TRACKED.items() for frame in stack.split(";") if _matches(frame, patterns)}
        for name in names:
            tracked[name] += count
    if total == 0:
        raise SystemExit(f"no samples in {raw}")
    print(f"\n{total} samples (all threads, waiting ones excluded) from {raw}")
    print("\ntracked costs (inclusive share of samples)")
    for name in TRACKED:
        print(f"  {tracked[name] / total:6.1%}  {name}")
    print(f"\ntop {top} by inclusive samples")
    for frame, count in inclusive.most_common(top):
        print(f"  {count / total:6.1%}  {frame}")
    print(f"\ntop {top} by own samples")
    for frame, count in own.most_common(top):
        print(f"  {count / total:6.1%}  {frame}")


def _matches(frame: str, patterns: list[tuple[str, str]]) -> bool:
    parsed = _FRAME.match(frame)
    if parsed is None:
        return False
    return any(
        (parsed["function"] == function or parsed["function"].endswith("." + function)) and file in parsed["file"]
        for function, file in patterns
    )


def _waiting(frame: str) -> bool:
    function, _, file = frame.partition(" (")
    return (function, file.rstrip(")")) in WAITING


def _short(frame: str) -> str:
    """'function (…/site-packages/moto/sqs/models.py)' -> 'function (moto/sqs/models.py)'."""
    parsed = _FRAME.match(frame)
    if parsed is None:
        return frame
    path = parsed["file"]
    for marker in ("site-packages/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    else:
        path = os.path.relpath(path) if os.path.isabs(path) else path
    return f"{parsed['function']} ({path})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--speedups", default="all", help="all, none, or a comma list of speed-up names")
    parser.add_argument("--off", nargs="*", default=[], help="speed-ups to switch off from --speedups")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--output", help="where to keep py-spy's raw recording")
    parser.add_argument("--raw", type=Path, help="summarise this recording instead of making one")
    args = parser.parse_args()
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    summarise(args.raw or workload(args), args.top)


if __name__ == "__main__":
    main()

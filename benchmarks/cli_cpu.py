"""CPU of each client command (`send`, `status`, `trace`, `redrive`, `logs`) against a running
`onceflow start`, in fresh interpreters as a user runs them, against the 1 s target.

The figure is user + system CPU of the command's process (interpreter start-up and imports
included), the median of several runs; `onceflow start` runs in its own process and is not
counted. A bare interpreter's start-up is printed alongside for scale.

    python -m benchmarks.cli_cpu              # 5 runs per command
    python -m benchmarks.cli_cpu --runs 9
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 1.0
COMMANDS = {
    "send --count 2": ["send", "--count", "2"],
    "status": ["status"],
    "trace --out …": ["trace", "--out", "{scratch}/trace.html"],
    "redrive --dry-run": ["redrive", "--dry-run"],
    "logs": ["logs"],
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(port: int) -> subprocess.Popen[str]:
    """`onceflow start` until its banner's last line; it keeps running while the commands are measured."""
    process = subprocess.Popen(
        [sys.executable, "-m", "onceflow", "start", "--port", str(port), "--time-scale", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 180
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("`onceflow start` ended early:\n" + "".join(seen))
        seen.append(line)
        if line.startswith("Then: onceflow send"):
            return process
    process.terminate()
    raise RuntimeError("no banner from `onceflow start` within 180 s:\n" + "".join(seen))


def _child_cpu(argv: list[str], environment: dict[str, str]) -> float:
    """User + system CPU of one child process, from the rusage of the children this process waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per command (median)")
    options = parser.parse_args()

    port = _free_port()
    environment = {**os.environ, "ONCEFLOW_ENDPOINT": f"http://127.0.0.1:{port}"}
    server = _start(port)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            bare = statistics.median(
                _child_cpu([sys.executable, "-c", "pass"], environment) for _ in range(options.runs)
            )
            medians = {
                label: statistics.median(
                    _child_cpu(
                        [sys.executable, "-m", "onceflow", *(a.format(scratch=scratch) for a in args)], environment
                    )
                    for _ in range(options.runs)
                )
                for label, args in COMMANDS.items()
            }
    finally:
        server.terminate()
        server.wait(timeout=30)

    print(f"client commands against `onceflow start`: CPU per run, median of {options.runs} fresh interpreters")
    print(f"{'command':20}{'CPU s':>8}{'target s':>10}{'CPU / target':>14}")
    for label, seconds in medians.items():
        print(f"{label:20}{seconds:>8.3f}{TARGET_SECONDS:>10.1f}{seconds / TARGET_SECONDS:>13.2f}×")
    print(f"{'(bare interpreter)':20}{bare:>8.3f}")


if __name__ == "__main__":
    main()

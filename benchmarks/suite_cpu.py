"""CPU of the whole test suite (what `make test` runs), per test file, against issue 13's target.

    .venv/bin/python benchmarks/suite_cpu.py                 # the suite as `make test` runs it (2 workers)
    .venv/bin/python benchmarks/suite_cpu.py --workers 0     # in one process
    .venv/bin/python benchmarks/suite_cpu.py --top 25 -- -k schedules   # more rows; pytest arguments after --

Runs pytest in a child process with this file as a plugin, which records each test's CPU (user +
sys of the pytest process and of the subprocesses it waited for: the SAM CLI, checkov, Chromium, a
second moto server; this process adopts the orphans, such as Chromium's helpers, to count them
too), then prints the total against the 180 s target, the share outside tests
(start-up, collection, session fixtures) and the files that use the most. The machine is shared:
run it twice and read the lower figure.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TARGET_SECONDS = 180.0
WALL_TARGET_SECONDS = 300.0  # issue 33: the suite's wall time on 2 cores
ROOT = Path(__file__).resolve().parent.parent
OUTPUT_VARIABLE = "ONCEFLOW_SUITE_CPU_OUTPUT"
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def _adopt_orphans() -> bool:
    """Become the Linux subreaper of what the suite starts: Chromium's helper processes outlive their
    parent, and without this their CPU is counted by no one (reaped by init)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_orphans() -> None:
    """Wait for every adopted descendant, so its CPU is in RUSAGE_CHILDREN."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


# --- the pytest plugin (loaded in the child with `-p suite_cpu`) -----------------------------------
_ROWS: list[tuple[str, float, float, float]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    own, children = _cpu()
    began = time.monotonic()
    yield
    own_after, children_after = _cpu()
    _ROWS.append((item.nodeid, own_after - own, children_after - children, time.monotonic() - began))


def pytest_sessionfinish(session: Any) -> None:
    output = os.environ.get(OUTPUT_VARIABLE)
    if output and _ROWS:  # under pytest-xdist, each worker writes its own rows
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(f"{output}.{worker}").write_text(json.dumps(_ROWS))


# --- the script ------------------------------------------------------------------------------------
def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=15, help="how many test files to list")
    parser.add_argument(
        "--workers", type=int, default=2, help="pytest-xdist workers, as `make test` runs it (0: one process)"
    )
    parser.add_argument("--keep", type=Path, help="write pytest's output and the per-test rows (JSON) here")
    parser.add_argument("pytest_args", nargs="*", help="after --: extra pytest arguments")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        rows_file = Path(scratch) / "rows.json"
        environment = {
            **os.environ,
            OUTPUT_VARIABLE: str(rows_file),
            "ONCEFLOW_REQUIRE_TOOLS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH")])),
        }
        command = [sys.executable, "-m", "pytest", "tests", "--ignore=tests/integration", "-q", "-p", "suite_cpu"]
        command += ["-n", str(args.workers)]
        adopted = _adopt_orphans()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        result = subprocess.run(
            [*command, *args.pytest_args], cwd=ROOT, env=environment, capture_output=True, text=True
        )
        wall = time.monotonic() - began
        if adopted:
            _reap_orphans()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = [row for part in Path(scratch).glob("rows.json.*") for row in json.loads(part.read_text())]
    if args.keep:
        args.keep.write_text(result.stdout)
        args.keep.with_suffix(".json").write_text(json.dumps(rows))

    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "(no pytest output)"
    print(f"pytest: {summary}")
    counted = "every descendant" if adopted else "waited-for subprocesses only (no subreaper here)"
    print(f"suite CPU (user + sys, {counted}): {total:.1f} s over {wall:.0f} s wall ({args.workers} workers)")
    print(
        f"wall target {WALL_TARGET_SECONDS:.0f} s: {wall / WALL_TARGET_SECONDS:.2f}x of it "
        f"({'met' if wall <= WALL_TARGET_SECONDS else 'MISSED'}); load average now {_load()}"
    )
    print(
        f"target {TARGET_SECONDS:.0f} s: {total / TARGET_SECONDS:.2f}x of it ({'met' if total <= TARGET_SECONDS else 'MISSED'})"
    )
    in_tests = sum(own + children for _, own, children, _ in rows)
    print(f"in tests {in_tests:.1f} s, outside them (start-up, collection, session fixtures) {total - in_tests:.1f} s")

    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for node, own, children, seconds in rows:
        totals = by_file[node.split("::")[0]]
        totals[0] += own
        totals[1] += children
        totals[2] += 1
        totals[3] += seconds
    print(f"\n{'CPU s':>7} {'in pytest':>9} {'children':>8} {'wall s':>7} {'tests':>5}  file")
    for name, (own, children, count, seconds) in sorted(by_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[
        : args.top
    ]:
        print(f"{own + children:7.1f} {own:9.1f} {children:8.1f} {seconds:7.1f} {int(count):5d}  {name}")
    if result.returncode != 0:
        print(result.stdout[-3000:], file=sys.stderr)
        raise SystemExit(result.returncode)


if __name__ == "__main__":
    main()

"""Every test file alone, each in a fresh pytest process: passed or not, and its wall time.

    .venv/bin/python benchmarks/files_alone.py                      # every tests/**/test_*.py
    .venv/bin/python benchmarks/files_alone.py --top 20 tests/starter   # some directories or files
    .venv/bin/python benchmarks/files_alone.py --seed 20261205          # the tests of each file in this order
    .venv/bin/python benchmarks/files_alone.py -- -p no:randomly        # pytest arguments after --

What a user who changes one part and runs its tests first sees: nothing warmed by an earlier file
(boto3's clients, moto's interpreter modules, a deployed stack), a file that passes only inside the
suite fails here (issue 37). Files run one after the other (the machine is shared), each bounded by
--timeout seconds; the table lists the slowest first, then any that did not pass with the end of
their output. Exits 1 when one did not pass. Takes the suite's time plus a start-up per file.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class FileRun:
    path: str
    seconds: float
    status: str  # passed | failed (exit N) | timed out
    summary: str  # pytest's last line
    tail: str


def test_files(paths: list[str]) -> list[str]:
    found: set[Path] = set()
    for given in paths or ["tests"]:
        path = ROOT / given
        if path.is_file():
            found.add(path)
        else:
            found.update(path.rglob("test_*.py"))
    return sorted(str(p.relative_to(ROOT)) for p in found if "integration" not in p.parts)


def run_alone(path: str, pytest_args: list[str], timeout: float) -> FileRun:
    command = [sys.executable, "-m", "pytest", path, "-q", "-p", "no:cacheprovider", *pytest_args]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=os.environ)
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout if isinstance(expired.stdout, str) else (expired.stdout or b"").decode()
        return FileRun(path, time.monotonic() - started, "timed out", "", output[-3000:])
    seconds = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else ""
    # Exit 5: nothing collected to run (every test skipped at collection is still a pass here).
    status = "passed" if done.returncode in (0, 5) else f"failed (exit {done.returncode})"
    return FileRun(path, seconds, status, summary, (done.stdout + done.stderr)[-3000:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="test files or directories (default: tests)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per file (default 300)")
    parser.add_argument("--top", type=int, default=15, help="how many of the slowest to list")
    parser.add_argument("--seed", type=int, help="pytest-randomly's seed for every file (default: one at random)")
    arguments, pytest_args = parser.parse_known_args()
    pytest_args = [a for a in pytest_args if a != "--"]
    if "no:randomly" not in pytest_args:
        seed = arguments.seed if arguments.seed is not None else random.randrange(2**31)
        pytest_args = ["-p", "randomly", f"--randomly-seed={seed}", *pytest_args]
        print(f"the tests of each file shuffled with seed {seed}", flush=True)
    files = test_files(arguments.paths)
    runs: list[FileRun] = []
    for number, path in enumerate(files, 1):
        run = run_alone(path, pytest_args, arguments.timeout)
        runs.append(run)
        print(f"[{number}/{len(files)}] {run.seconds:7.1f} s  {run.status:18}  {path}  {run.summary}", flush=True)
    print(f"\n{len(runs)} files, {sum(r.seconds for r in runs):.0f} s in all; the slowest:")
    for run in sorted(runs, key=lambda r: r.seconds, reverse=True)[: arguments.top]:
        print(f"  {run.seconds:7.1f} s  {run.path}  {run.summary}")
    bad = [r for r in runs if r.status != "passed"]
    for run in bad:
        print(f"\n{run.path}: {run.status}\n{run.tail}")
    print(f"\n{len(runs) - len(bad)} of {len(runs)} files passed alone")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

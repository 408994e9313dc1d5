"""The README's demo (500 events, every fault) timed as a user runs it, this tree against another
commit, interleaved in one run (issue 33's target: 15 s on 2 cores).

    .venv/bin/python benchmarks/demo_time.py                    # this tree and main, 2 rounds each
    .venv/bin/python benchmarks/demo_time.py --before 3632bf1 --rounds 3

Each run is `onceflow demo` in a fresh process (the commit `before` from `git archive`, first on
PYTHONPATH, as benchmarks/peer_cpu.py runs it), its wall time and its CPU (user + system, of the
process and what it waited for); the lowest of each side's rounds is the figure (the machine is
shared). A run whose demo fails a verdict is reported as failed.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_cpu import ROOT, _tree_of

TARGET_SECONDS = 15.0


def run_demo(tree: Path | None, scratch: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, exit status) of one `onceflow demo`."""
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    environment.pop("ONCEFLOW_SPEEDUPS_OFF", None)
    if tree is not None:
        paths = [str(tree), str(tree / "functions" / "common")]
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [*paths, environment.get("PYTHONPATH")]))
    cwd = tree or ROOT
    command = [sys.executable, "-c", "from onceflow.cli import main; main()", "demo", "--out", str(scratch / "out")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="main", help="the commit to compare with (git archive)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    print(f"load average at start: {' '.join(load)}; this tree at {commit.stdout.strip()}; before = {args.before}")
    best: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="onceflow-demo-time-") as scratch_name:
        scratch = Path(scratch_name)
        (scratch / "before").mkdir()
        trees = {"this tree": None, "before": _tree_of(args.before, scratch / "before")}
        print(f"{'code':<10}{'wall s':>8}{'CPU s':>8}  verdicts")
        for _ in range(args.rounds):
            for name, tree in trees.items():
                wall, cpu, status = run_demo(tree, scratch)
                print(f"{name:<10}{wall:>8.1f}{cpu:>8.1f}  {'all PASS' if status == 0 else f'FAILED (exit {status})'}")
                if status == 0 and (name not in best or wall < best[name][0]):
                    best[name] = (wall, cpu)
    print(f"load average at end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    if "this tree" in best:
        wall, cpu = best["this tree"]
        met = "met" if wall <= TARGET_SECONDS else "MISSED"
        print(f"this tree: {wall:.1f} s wall ({met}: target {TARGET_SECONDS:.0f} s), {cpu:.1f} s CPU")
        if "before" in best:
            print(
                f"wall {wall / best['before'][0]:.2f}x before's ({best['before'][0]:.1f} s), "
                f"CPU {cpu / best['before'][1]:.2f}x ({best['before'][1]:.1f} s)"
            )


if __name__ == "__main__":
    main()

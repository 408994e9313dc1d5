"""Cost per million events, before and after: `onceflow cost` on a git revision's template, ASL and
functions, then on the working tree. Each run is its own process (each loads its own starter).

    .venv/bin/python benchmarks/cost_per_event.py [--before REV] [--mix new=70,redelivered=25,pending=5]

Targets (issue 10, for the mix): EXPRESS at most 1.3x the single-Lambda floor, STANDARD at most 20x.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

# The template, ASL and starter before the transition and logging work of issue 10.
DEFAULT_BEFORE = "347de7d"


def run(label: str, arguments: list[str]) -> int:
    print(f"\n=== {label} ===", flush=True)
    environment = {**os.environ, "COLUMNS": "170"}
    return subprocess.run(
        [sys.executable, "-m", "onceflow", "cost", *arguments], env=environment, check=False
    ).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=DEFAULT_BEFORE, help="git revision for the 'before' figures")
    parser.add_argument("--mix", default="", help="shares per path (default: the cost model's)")
    options = parser.parse_args()
    mix = ["--mix", options.mix] if options.mix else []
    failed = run(f"before ({options.before})", ["--revision", options.before, *mix])
    failed |= run("after (working tree)", mix)
    return failed


if __name__ == "__main__":
    raise SystemExit(main())

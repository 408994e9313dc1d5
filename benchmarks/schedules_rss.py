"""Memory over many fault schedules in one process (issue 21: 10,000 schedules reached about 1 GB).

    .venv/bin/python benchmarks/schedules_rss.py --schedules 300             # RSS every 50 schedules
    .venv/bin/python benchmarks/schedules_rss.py --schedules 300 --keep      # without the baseline's release

Each schedule runs on the stack the previous one left, brought back to just-deployed by
onceflow/engine/bookkeeping/baseline.py, as tests/properties does. `--keep` skips what issue 21 added to
the restore (moto's model-instance registry, SNS's sent-notification lists and the engine's index
attributes released), to show what each schedule left behind before. Prints the RSS (VmRSS, Linux)
and the growth per schedule, side by side for the two halves of the run.
"""

from __future__ import annotations

import argparse
import logging
import resource
import time
from pathlib import Path

SCHEDULE_STEPS = "send 0, send 1 twice, interrupt 0 at Mark as sent, process, redeliver, send conflict 1, process"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedules", type=int, default=300)
    parser.add_argument("--every", type=int, default=50, help="print the RSS every this many schedules")
    parser.add_argument("--keep", action="store_true", help="restore as before issue 21 (nothing released)")
    args = parser.parse_args()
    logging.getLogger("moto").setLevel(logging.CRITICAL)

    from onceflow.devtools.schedules import Interrupt, Process, Redeliver, Schedule, Send, SendConflict, run_schedule
    from onceflow.engine import EmbeddedAws
    from onceflow.engine.bookkeeping import baseline

    if args.keep:
        baseline.release_between_runs = lambda account_id, region: None  # type: ignore[assignment]
    schedule = Schedule(
        (Send(0), Send(1, copies=2), Interrupt(0, "Mark as sent"), Process(), Redeliver(0), SendConflict(1), Process())
    )
    print(f"schedule: {SCHEDULE_STEPS}; {'before (nothing released)' if args.keep else 'after'}")
    print(f"{'schedules':>10}{'RSS MB':>9}{'KB/schedule since last':>24}{'s/schedule':>12}")
    with EmbeddedAws(time_scale=0.0) as aws:
        first = run_schedule(aws, schedule)
        if not first.passed:
            raise SystemExit(f"the schedule fails its invariants: {first.violations}")
        marks = [(1, _rss_mb(), time.perf_counter())]
        print(f"{1:>10}{marks[0][1]:>9.0f}{'':>24}{'':>12}", flush=True)
        for count in range(2, args.schedules + 1):
            outcome = run_schedule(aws, schedule)
            if not outcome.passed:
                raise SystemExit(f"schedule {count} failed its invariants: {outcome.violations}")
            if count % args.every == 0 or count == args.schedules:
                then_count, then_rss, then_time = marks[-1]
                now_rss, now = _rss_mb(), time.perf_counter()
                marks.append((count, now_rss, now))
                per = (now_rss - then_rss) * 1024 / (count - then_count)
                print(
                    f"{count:>10}{now_rss:>9.0f}{per:>24.1f}{(now - then_time) / (count - then_count):>12.2f}",
                    flush=True,
                )
    if len(marks) > 2:
        middle = marks[len(marks) // 2]
        early = (middle[1] - marks[0][1]) * 1024 / (middle[0] - marks[0][0])
        late = (marks[-1][1] - middle[1]) * 1024 / (marks[-1][0] - middle[0])
        print(f"growth: {early:.1f} KB per schedule in the first half, {late:.1f} KB in the second")


if __name__ == "__main__":
    main()

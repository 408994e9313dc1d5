"""How many fault schedules ran in this session, and what they exercised (printed at the end)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from onceflow.devtools.schedules import ScheduleOutcome


@dataclass
class Tally:
    runs: Counter[str] = field(default_factory=Counter)  # source (generated, explicit, regression) -> runs
    failed: int = 0
    seconds: float = 0.0
    interrupts: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    starter_crashes: int = 0
    throttled_rounds: int = 0  # event source rounds with every StartExecution/StartSyncExecution throttled
    executions: Counter[str] = field(default_factory=Counter)
    fifo_runs: int = 0  # schedules with a FIFO source: R5 checked on each
    r5_violations: int = 0
    r4_violations: int = 0  # R4 is judged on every schedule (the example subscriber is always deployed)
    subscriber_crashes: Counter[str] = field(default_factory=Counter)  # "before_write" -> n
    notification_redeliveries: int = 0

    def add(self, source: str, outcome: ScheduleOutcome) -> None:
        self.runs[source] += 1
        self.failed += 0 if outcome.passed else 1
        self.seconds += outcome.stats.seconds
        self.interrupts.update(outcome.stats.interrupts_fired)
        self.faults.update({k: v for k, v in outcome.stats.faults_injected.items() if v})
        self.starter_crashes += outcome.stats.starter_crashes
        self.throttled_rounds += outcome.stats.throttled_rounds
        self.executions.update(outcome.stats.executions_by_status)
        self.r4_violations += sum(1 for v in outcome.violations if v.startswith("R4"))
        self.subscriber_crashes.update(outcome.stats.subscriber_crashes)
        self.notification_redeliveries += outcome.stats.notification_redeliveries
        if source.startswith("FIFO"):
            self.fifo_runs += 1
            self.r5_violations += sum(1 for v in outcome.violations if v.startswith("R5:"))

    def lines(self) -> list[str]:
        total = sum(self.runs.values())
        if not total:
            return []
        sources = ", ".join(f"{n} {source}" for source, n in sorted(self.runs.items()))
        return [
            f"fault schedules run: {total} ({sources}) in {self.seconds:.0f}s; with invariant violations: {self.failed}",
            f"  executions by status: {dict(sorted(self.executions.items()))}",
            f"  execution interrupts fired: {dict(sorted(self.interrupts.items()))}",
            f"  starter crashes: {self.starter_crashes}; failures injected: {dict(sorted(self.faults.items()))}",
            f"  rounds with every start throttled (start_throttled for good): {self.throttled_rounds}",
            f"  FIFO schedules (R5 checked on each): {self.fifo_runs}; R5 violations: {self.r5_violations}",
            f"  R4 (judged on every schedule that sent an event) violations: {self.r4_violations}; subscriber crashes: "
            f"{dict(sorted(self.subscriber_crashes.items()))}; notifications delivered again: {self.notification_redeliveries}",
        ]


TALLY = Tally()

"""Fault schedules: deliveries, crashes and failure windows run through the real local pipeline,
then recovery, then the invariants of R1–R4 checked on what the stack holds (R5 with a FIFO source).

    from onceflow.devtools.schedules import Schedule, Send, Process, Interrupt, run_schedule
    outcome = run_schedule(aws, Schedule((Send(0), Interrupt(0, "Mark as sent"), Process())))
    assert outcome.passed, outcome.violations
"""

from onceflow.devtools.schedules.invariants import Evidence, check
from onceflow.devtools.schedules.model import (
    BOUNDARIES,
    FAULTS,
    INTERRUPTIBLE_STATES,
    CrashStarter,
    CrashSubscriber,
    Expire,
    Interrupt,
    Open,
    Process,
    Recover,
    Redeliver,
    RedeliverNotification,
    Schedule,
    Send,
    SendConflict,
    SendPoison,
    Step,
    event_id,
)
from onceflow.devtools.schedules.runner import RunOptions, RunStats, ScheduleError, ScheduleOutcome, run_schedule

__all__ = [
    "BOUNDARIES",
    "FAULTS",
    "INTERRUPTIBLE_STATES",
    "CrashStarter",
    "CrashSubscriber",
    "Evidence",
    "Expire",
    "Interrupt",
    "Open",
    "Process",
    "Recover",
    "Redeliver",
    "RedeliverNotification",
    "RunOptions",
    "RunStats",
    "Schedule",
    "ScheduleError",
    "ScheduleOutcome",
    "Send",
    "SendConflict",
    "SendPoison",
    "Step",
    "check",
    "event_id",
    "run_schedule",
]

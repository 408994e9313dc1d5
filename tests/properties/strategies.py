"""Hypothesis strategies for fault schedules: interleavings of deliveries, crashes and windows.

A schedule is one to three phases; a phase arms up to two crashes, failure windows (lost status
change events among them) or TTL expiries, delivers one to three messages (original or resent
orders, concurrent copies, redeliveries of handled records, conflicting payloads, poison) and
processes them, sometimes followed by an operator's recovery.
Three events at most (event-0..event-2) keep a schedule cheap and make collisions on an id likely.
Lists shrink by dropping phases and steps, numbers towards 0, so a shrunk schedule is short.
`express=True` draws what has a meaning on EXPRESS: no lost status change events (Express emits
none), interrupts that time out (StopExecution is Standard-only).
"""

from __future__ import annotations

from hypothesis import strategies as st

from onceflow.devtools.schedules import (
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
)
from onceflow.devtools.schedules.model import SUBSCRIBER_CRASHES

MAX_PHASES = 3
events = st.integers(min_value=0, max_value=2)

sends = st.builds(Send, event=events, copies=st.integers(min_value=1, max_value=3))
redeliveries = st.builds(Redeliver, pick=st.integers(min_value=0, max_value=20))
starter_crashes = st.builds(CrashStarter, after_starts=st.integers(min_value=0, max_value=4))
subscriber_crashes = st.builds(CrashSubscriber, where=st.sampled_from(SUBSCRIBER_CRASHES))
notification_redeliveries = st.builds(RedeliverNotification, pick=st.integers(min_value=0, max_value=20))
EXPRESS_FAULTS = tuple(fault for fault in FAULTS if fault != "status_events_lost")


def windows(express: bool = False) -> st.SearchStrategy[Open]:
    """times: None is an outage for the window's steps; 1-5 is within the Publish retries, above is beyond them."""
    return st.builds(
        Open,
        fault=st.sampled_from(EXPRESS_FAULTS if express else FAULTS),
        times=st.none() | st.integers(min_value=1, max_value=10),
        steps=st.integers(min_value=1, max_value=3),
    )


# DynamoDB TTL runs: every sent record expires (a later resend takes "Already done, record expired").
expiries = st.just(Expire())
conflicts = st.builds(SendConflict, event=events)
poison = st.builds(SendPoison, poison=st.integers(min_value=0, max_value=5))

deliveries: st.SearchStrategy[Step] = st.one_of(
    sends, sends, redeliveries, conflicts, poison, notification_redeliveries
)


@st.composite
def phases(draw: st.DrawFn, express: bool = False) -> list[Step]:
    """Deliveries, with crashes and windows armed for them, then processing (and maybe recovery).

    Interrupts aim at an event delivered in the phase, so most of them fire.
    """
    delivered = draw(st.lists(deliveries, min_size=1, max_size=3))
    targets = sorted({d.event for d in delivered if isinstance(d, Send | SendConflict)}) or [0]
    interrupts = st.builds(
        Interrupt,
        event=st.sampled_from(targets),
        state=st.sampled_from(INTERRUPTIBLE_STATES),
        how=st.just("timeout") if express else st.sampled_from(["stop", "timeout"]),
    )
    armed = draw(
        st.lists(st.one_of(interrupts, windows(express), starter_crashes, subscriber_crashes, expiries), max_size=2)
    )
    ending = draw(st.sampled_from([(Process(),), (Process(), Recover())]))
    return [*armed, *delivered, *ending]


def schedules(max_phases: int = MAX_PHASES, express: bool = False) -> st.SearchStrategy[Schedule]:
    return st.lists(phases(express), min_size=1, max_size=max_phases).map(
        lambda found: Schedule(tuple(step for phase in found for step in phase))
    )

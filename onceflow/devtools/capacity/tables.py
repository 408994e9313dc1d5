"""`onceflow capacity`'s tables (rich): the limits per mode, what binds, bursts, drains and latencies."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from onceflow.devtools.capacity.model import ModeCapacity, sized_maximum_concurrency
from onceflow.devtools.capacity.quotas import Quotas


def _duration(seconds: float) -> str:
    if math.isinf(seconds):
        return "never (arrivals at or above capacity)"
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


def limits_table(capacity: ModeCapacity, quotas: Quotas) -> Table:
    table = Table(title=f"{capacity.label} in {capacity.region}: each limit as events per second")
    for heading in ("limit", "events/s", "basis", "source"):
        table.add_column(heading, justify="right" if heading == "events/s" else "left", overflow="fold")
    for limit in sorted(
        capacity.limits, key=lambda lim: math.inf if lim.events_per_second is None else lim.events_per_second
    ):
        rate = "-" if limit.events_per_second is None else f"{limit.events_per_second:,.0f}"
        source = quotas[limit.quota].source if limit.quota else ""
        table.add_row(limit.name, rate, limit.basis, source)
    return table


def summary_lines(capacity: ModeCapacity, backlog: int) -> list[str]:
    sustained = capacity.sustained
    nxt = capacity.next_limit
    hour_backlog = capacity.backlog_after(3 * sustained, 3600)
    lines = [
        f"sustained: {sustained:,.0f} events/s, bound by {capacity.binding.name}"
        + (f"; next {nxt.name} at {nxt.events_per_second:,.0f} events/s" if nxt and nxt.events_per_second else ""),
        (
            f"burst: {capacity.burst_events:,.0f} events above the sustained rate without a throttled call;"
            " beyond that the source queue holds the backlog (14 days' retention)"
            if capacity.burst_events
            else "burst: any size; the source queue holds what the starter cannot take yet (14 days' retention),"
            " and the event source receives a message only when a starter can take it"
        ),
        f"backlog of {backlog:,} events: drains in {_duration(capacity.drain_seconds(backlog))} with no new"
        f" arrivals, {_duration(capacity.drain_seconds(backlog, sustained / 2))} while events keep arriving at half capacity",
        f"an hour at 3x ({3 * sustained:,.0f} events/s): {hour_backlog:,.0f} events queued at its end,"
        f" drained {_duration(capacity.drain_seconds(hour_backlog))} later",
        f"MaximumConcurrency sized to stay below every other limit: {sized_maximum_concurrency(capacity)}"
        f" (the template has {capacity.settings.maximum_concurrency})",
    ]
    return lines + list(capacity.notes)


def latency_table(capacity: ModeCapacity) -> Table:
    table = Table(title=f"{capacity.label}: end-to-end latency per path from stated per-call latencies (not measured)")
    table.add_column("path")
    table.add_column("ms", justify="right")
    for path, ms in capacity.latencies_ms.items():
        table.add_row(path, f"{ms:,.0f}")
    return table


def print_capacity(capacities: list[ModeCapacity], quotas: Quotas, backlog: int, console: Console) -> None:
    console.print(
        f"Quotas as of {quotas.as_of} (onceflow/devtools/capacity/quotas.json); re-check them on their pages."
    )
    for capacity in capacities:
        console.print(limits_table(capacity, quotas))
        for line in summary_lines(capacity, backlog):
            console.print(f"  {line}", highlight=False, soft_wrap=True)
        console.print(latency_table(capacity))

"""The cost model's tables (rich): per path, per mode, the mix, and what each logging level costs."""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from onceflow.devtools.cost.logs import log_bytes
from onceflow.devtools.cost.model import COMPONENTS, GB, MODES, usage
from onceflow.devtools.cost.paths import PATHS
from onceflow.devtools.cost.run import CostRun

_TITLES = {spec.key: spec.title for spec in PATHS}
LOG_SETTINGS = (("ALL", True), ("ALL", False), ("ERROR", True), ("ERROR", False), ("OFF", False))


def _money(value: float) -> str:
    return f"${value:,.2f}"


JITTERED = "*"  # marks a figure that includes Retry/Wait delays drawn with jitter: it varies run to run


def _figures_whole(table: Table) -> Table:
    """Right-aligned columns (the figures) at least as wide as their widest cell, the others free
    to wrap (headings too): on a narrow terminal rich wraps text instead of cutting `$130.…`."""
    for column in table.columns:
        if column.justify == "right":
            column.min_width = max((len(str(cell)) for cell in column.cells), default=0)
            column.no_wrap = True
        else:
            column.min_width = min(12, max((len(str(cell)) for cell in column.cells), default=0))
        column.overflow = "fold"
    return table


def _print_whole(console: Console, table: Table) -> None:
    """At the terminal's width if the figures fit there, else as wide as they need (the terminal
    then wraps the lines): a figure is never cut."""
    needed = Measurement.get(console, console.options.update_width(10_000), table).minimum
    console.print(table, width=max(console.width, needed))


def _jittered(run: CostRun, mode: str, path: str) -> bool:
    """EXPRESS bills duration, which includes the Retry/Wait delays the run drew (FULL jitter)."""
    return mode == "EXPRESS" and run.runs[mode].measurements[path].retry_delay_seconds > 0


def paths_table(run: CostRun) -> Table:
    standard = run.runs["STANDARD"]
    table = Table(title="Per path: one delivery's billed units, and $ per million events")
    for heading in ("path", "transitions", "WRU", "RRU", "SNS", "SQS req", "Lambda inv"):
        table.add_column(heading, justify="left" if heading == "path" else "right")
    for mode in MODES:
        table.add_column(f"{mode} $/M", justify="right")
    table.add_column("floor $/M", justify="right")
    for path, measurement in standard.measurements.items():
        used = usage(measurement, standard.settings, run.prices, "STANDARD")
        table.add_row(
            _TITLES.get(path, path),
            str(used.transitions),
            f"{used.write_units:g}",
            f"{used.read_units:g}",
            str(used.sns_requests),
            f"{used.sqs_requests:g}",
            f"{used.lambda_invocations:g}",
            *(
                _money(run.path_cost(mode, path).per_million()) + (JITTERED if _jittered(run, mode, path) else "")
                for mode in MODES
            ),
            _money(run.floor(path).per_million()),
        )
    return _figures_whole(table)


def states_table(run: CostRun) -> Table:
    table = Table(title="States entered per path (STANDARD run)")
    table.add_column("path")
    table.add_column("states")
    for path, measurement in run.runs["STANDARD"].measurements.items():
        states = " → ".join(state for e in measurement.executions for state in e.path) or "(no execution)"
        table.add_row(_TITLES.get(path, path), states)
    return table


def mix_table(run: CostRun, mix: dict[str, float]) -> Table:
    shares = ", ".join(f"{share:.0%} {_TITLES.get(path, path)}" for path, share in mix.items())
    floor = run.mix(None, mix)
    table = Table(title=f"Mix ({shares}): $ per million events")
    table.add_column("")
    for name in (*COMPONENTS, "total", "× floor"):
        table.add_column(name, justify="right")
    for mode in MODES:
        cost = run.mix(mode, mix)
        label = mode if run.runs[mode].modelled_because is None else f"{mode} (modelled)"
        varies = any(_jittered(run, mode, path) and share for path, share in mix.items())
        table.add_row(
            label,
            *(_money(cost.parts[name] * 1e6) for name in COMPONENTS),
            _money(cost.per_million()) + (JITTERED if varies else ""),
            f"{cost.total / floor.total:.2f}×",
        )
    table.add_row(
        "single-Lambda floor",
        *(_money(floor.parts[name] * 1e6) for name in COMPONENTS),
        _money(floor.per_million()),
        "1.00×",
    )
    return _figures_whole(table)


def logging_table(run: CostRun, mix: dict[str, float]) -> Table:
    """The state machine's CloudWatch Logs per million events of the mix, at each level."""
    standard = run.runs["STANDARD"]
    table = Table(title="State machine logging: CloudWatch Logs $ per million events of the mix")
    table.add_column("level")
    table.add_column("execution data")
    table.add_column("bytes per event", justify="right")
    table.add_column("$/M", justify="right")
    current = (standard.settings.log_level, standard.settings.include_execution_data)
    for level, data in LOG_SETTINGS:
        per_event = sum(
            share * sum(log_bytes(e.history, e.arn, level, data) for e in standard.measurements[path].executions)
            for path, share in mix.items()
        )
        marker = " (template)" if (level, data) == current else ""
        table.add_row(
            level + marker,
            "yes" if data else "no",
            f"{per_event:,.0f}",
            _money(per_event / GB * run.prices["cloudwatch_logs_per_gb_ingested"] * 1e6),
        )
    return _figures_whole(table)


def print_cost_run(run: CostRun, mix: dict[str, float], console: Console | None = None) -> None:
    console = console or Console()
    settings = run.runs["STANDARD"].settings
    console.print(
        f"template: {run.template}; prices: {run.prices.region} as of {run.prices.as_of}; starter "
        f"{settings.memory_mb} MB {settings.architecture}, batch {settings.batch_size}; state machine logging "
        f"{settings.log_level}{' with execution data' if settings.include_execution_data else ''}"
    )
    for table in (paths_table(run), states_table(run), mix_table(run, mix), logging_table(run, mix)):
        _print_whole(console, table)
    for mode in MODES:
        reason = run.runs[mode].modelled_because
        if reason:
            console.print(
                f"[yellow]{mode} is modelled, not measured:[/yellow] {reason}. Its figures price the STANDARD "
                "run's calls and histories with Express pricing (requests + duration; the starter waits for "
                "each execution)."
            )
    jittered = {
        path: run.runs["EXPRESS"].measurements[path].retry_delay_seconds
        for path in run.runs["EXPRESS"].measurements
        if _jittered(run, "EXPRESS", path)
    }
    if jittered:
        drawn = ", ".join(f"{_TITLES.get(path, path)} {seconds:.1f} s" for path, seconds in jittered.items())
        console.print(
            f"{JITTERED} EXPRESS bills duration, which includes the Retry/Wait delays this run drew with jitter "
            f"({drawn}): these figures vary from run to run."
        )
    console.print(
        "Stated, not measured: call latencies, per-record and per-invocation Lambda time, platform log lines "
        "(see the prices file's assumptions); full batches."
    )

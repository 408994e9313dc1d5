"""The cost model's tables (rich): per path, per mode, the mix, and what each logging level costs."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from onceflow.devtools.cost.logs import log_bytes
from onceflow.devtools.cost.model import COMPONENTS, GB, MODES, usage
from onceflow.devtools.cost.paths import PATHS
from onceflow.devtools.cost.run import CostRun

_TITLES = {spec.key: spec.title for spec in PATHS}
LOG_SETTINGS = (("ALL", True), ("ALL", False), ("ERROR", True), ("ERROR", False), ("OFF", False))


def _money(value: float) -> str:
    return f"${value:,.2f}"


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
            *(_money(run.path_cost(mode, path).per_million()) for mode in MODES),
            _money(run.floor(path).per_million()),
        )
    return table


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
        table.add_row(
            label,
            *(_money(cost.parts[name] * 1e6) for name in COMPONENTS),
            _money(cost.per_million()),
            f"{cost.total / floor.total:.2f}×",
        )
    table.add_row(
        "single-Lambda floor",
        *(_money(floor.parts[name] * 1e6) for name in COMPONENTS),
        _money(floor.per_million()),
        "1.00×",
    )
    return table


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
    return table


def print_cost_run(run: CostRun, mix: dict[str, float], console: Console | None = None) -> None:
    console = console or Console()
    settings = run.runs["STANDARD"].settings
    console.print(
        f"template: {run.template}; prices: {run.prices.region} as of {run.prices.as_of}; starter "
        f"{settings.memory_mb} MB {settings.architecture}, batch {settings.batch_size}; state machine logging "
        f"{settings.log_level}{' with execution data' if settings.include_execution_data else ''}"
    )
    console.print(paths_table(run))
    console.print(states_table(run))
    console.print(mix_table(run, mix))
    console.print(logging_table(run, mix))
    for mode in MODES:
        reason = run.runs[mode].modelled_because
        if reason:
            console.print(
                f"[yellow]{mode} is modelled, not measured:[/yellow] {reason}. Its figures price the STANDARD "
                "run's calls and histories with Express pricing (requests + duration; the starter waits for "
                "each execution)."
            )
    console.print(
        "Stated, not measured: call latencies, per-record and per-invocation Lambda time, platform log lines "
        "(see the prices file's assumptions); full batches."
    )

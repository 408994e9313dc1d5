"""`onceflow`: run, feed, inspect and trace the pipeline on the embedded AWS."""

from __future__ import annotations

import json
import logging
import os
import random
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from onceflow.local.report import RunReport

app = typer.Typer(help=__doc__, no_args_is_help=True, add_completion=False)
console = Console()
DEFAULT_ENDPOINT = os.environ.get("ONCEFLOW_ENDPOINT", "http://127.0.0.1:5000")
EndpointOption = Annotated[str, typer.Option(help="The embedded AWS endpoint started by `onceflow start`.")]


def _quiet_engine_logs() -> None:
    # moto logs every caught task failure with a long repr; the report and traces show them instead.
    logging.getLogger("moto").setLevel(logging.CRITICAL)


@app.command()
def start(
    port: Annotated[int, typer.Option(help="Loopback port for the endpoint.")] = 5000,
    poll: Annotated[bool, typer.Option(help="Run the emulated SQS event source and starter.")] = True,
    time_scale: Annotated[float, typer.Option(help="Retry/Wait delays are multiplied by this.")] = 0.01,
) -> None:
    """Start the embedded AWS, deploy template.yaml on it and keep it up (Ctrl-C stops)."""
    from onceflow.local.embedded import EmbeddedAws
    from onceflow.local.pipeline import LocalPipeline
    from onceflow.local.stack import deploy

    _quiet_engine_logs()
    aws = EmbeddedAws(port=port, time_scale=time_scale).start()
    stack = deploy(aws.endpoint_url)
    table = Table(title="Onceflow local stack", show_header=False)
    for key, value in stack.describe().items():
        table.add_row(key, value)
    console.print(table)
    console.print("Use it from another shell:")
    for key, value in aws.environment().items():
        console.print(f"  export {key}={value}")
    console.print(f"  export ONCEFLOW_ENDPOINT={aws.endpoint_url}")
    console.print("Then: onceflow send --count 10 · onceflow status · onceflow trace")
    pipeline = LocalPipeline(aws, stack, log_stream=open(os.devnull, "w"))  # noqa: SIM115
    try:
        while True:
            if poll:
                handled = pipeline.event_source.poll_once()
                if handled:
                    console.print(f"starter handled a batch of {handled}")
            routed = pipeline.safety_net.sweep().routed
            if routed:
                console.print(f"safety net: {len(routed)} execution(s) ended outside the workflow's paths → DLQ")
            time.sleep(0.2)
    except KeyboardInterrupt:
        console.print("stopping")
    finally:
        aws.stop()


@app.command()
def send(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    count: Annotated[int, typer.Option(help="Orders to generate.")] = 10,
    duplicates: Annotated[float, typer.Option(help="Share of messages that resend an earlier order.")] = 0.0,
    body_file: Annotated[Path | None, typer.Option("--file", help="Send this JSON body instead.")] = None,
    seed: Annotated[int, typer.Option()] = 1,
) -> None:
    """Put orders (or one body from a file) on the source queue."""
    from onceflow.local.demo import make_orders
    from onceflow.local.stack import attach

    stack = attach(endpoint)
    if body_file is not None:
        bodies = [body_file.read_text()]
    else:
        rng = random.Random(seed)
        bodies = [json.dumps(o) for o in make_orders(count, rng)]
        resends = round(count * duplicates / (1 - duplicates)) if duplicates < 1 else 0
        bodies += [rng.choice(bodies) for _ in range(resends)]
    sqs = stack.client("sqs")
    for start_index in range(0, len(bodies), 10):
        chunk = bodies[start_index : start_index + 10]
        sqs.send_message_batch(
            QueueUrl=stack.source_queue_url, Entries=[{"Id": str(i), "MessageBody": b} for i, b in enumerate(chunk)]
        )
    console.print(f"sent {len(bodies)} messages to {stack.source_queue_url}")


@app.command()
def status(endpoint: EndpointOption = DEFAULT_ENDPOINT) -> None:
    """Events with their status and executions; dead letters with their reasons."""
    from onceflow.local.stack import attach
    from onceflow.ops.executions import list_executions
    from onceflow.ops.observe import drain, scan

    stack = attach(endpoint)
    sfn = stack.client("stepfunctions")
    executions_by_event: dict[str, list[str]] = {}
    for execution in list_executions(sfn, stack.state_machine_arn):
        described = sfn.describe_execution(executionArn=execution["executionArn"])
        event_id = json.loads(described.get("input") or "{}").get("event_id", "?")
        executions_by_event.setdefault(event_id, []).append(f"{execution['name']} {execution['status']}")
    events = Table(title="Events")
    for column in ("event_id", "status", "recorded", "sent", "executions"):
        events.add_column(column)
    for record in sorted(scan(stack.client("dynamodb"), stack.processed_events_table), key=lambda r: r["event_id"]):
        event_id = record["event_id"]
        events.add_row(
            event_id,
            record["status"],
            record.get("recorded_at", ""),
            record.get("sent_at", ""),
            "\n".join(executions_by_event.get(event_id, [])),
        )
    console.print(events)
    dead = Table(title="Dead-letter queue")
    for column in ("event_id", "error", "cause", "source"):
        dead.add_column(column)
    for message in drain(stack.client("sqs"), stack.dead_letter_queue_url, delete=False):
        a = message.attributes
        dead.add_row(a.get("event_id", ""), a.get("error", ""), a.get("cause", "")[:120], a.get("source", ""))
    console.print(dead)


@app.command()
def trace(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    out: Annotated[Path, typer.Option(help="Where to write the HTML page.")] = Path("reports/trace.html"),
    execution: Annotated[str | None, typer.Option(help="Execution name to show step by step.")] = None,
) -> None:
    """Write a self-contained HTML page: the state machine graph with the run overlaid."""
    from onceflow.devtools.trace import collect_executions, write_trace
    from onceflow.local.stack import attach

    stack = attach(endpoint)
    sfn = stack.client("stepfunctions")
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"])
    results = collect_executions(sfn, stack.state_machine_arn)
    path = write_trace(definition, results, out, selected=execution)
    console.print(f"trace written to {path}")


@app.command()
def redrive(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    dry_run: Annotated[bool, typer.Option(help="Only count and list what would move.")] = False,
    limit: Annotated[int | None, typer.Option(help="Move at most this many messages.")] = None,
) -> None:
    """Move dead letters back to the source queue (safe: the pipeline is idempotent per event_id)."""
    from onceflow.local.stack import attach
    from onceflow.ops.redrive import redrive as move

    stack = attach(endpoint)
    report = move(
        stack.client("sqs"), stack.dead_letter_queue_url, stack.source_queue_url, dry_run=dry_run, limit=limit
    )
    console.print(report)


def print_report(report: RunReport, fault_counts: dict[str, int], seconds: float) -> None:
    summary = Table(title=f"Onceflow demo ({seconds:.1f} s)", show_header=False)
    rows: list[tuple[str, Any]] = [
        ("messages sent", report.messages_sent),
        ("unique events", report.unique_events),
        ("business rows", report.business_rows),
        (
            "notifications",
            f"{report.notifications} for {report.notified_events} events ({report.duplicate_notifications} duplicates)",
        ),
        ("executions", report.executions),
    ]
    rows += [(f"  path: {path}", n) for path, n in sorted(report.executions_by_path.items())]
    rows += [(f"  dead letter: {reason}", n) for reason, n in sorted(report.dead_letters_by_reason.items())]
    rows += [(f"  fault: {name}", n) for name, n in fault_counts.items()]
    for key, value in rows:
        summary.add_row(key, str(value))
    console.print(summary)
    for verdict in report.verdicts:
        mark = "[bold green]PASS[/]" if verdict.passed else "[bold red]FAIL[/]"
        console.print(f"{mark} {verdict.name}: {verdict.evidence}")
        for problem in verdict.problems:
            console.print(f"     - {problem}")


@app.command()
def demo(
    events: Annotated[int, typer.Option(help="Unique orders in the stream.")] = 500,
    duplicates: Annotated[float, typer.Option(help="Share of messages that are duplicates.")] = 0.3,
    poison: Annotated[int, typer.Option(help="Messages that can never succeed.")] = 6,
    conflicts: Annotated[int, typer.Option(help="Order ids reused with another payload.")] = 3,
    concurrency: Annotated[int, typer.Option(help="Concurrent starter invocations.")] = 4,
    seed: Annotated[int, typer.Option()] = 7,
    time_scale: Annotated[float, typer.Option(help="Retry/Wait delays are multiplied by this.")] = 0.01,
    out: Annotated[Path, typer.Option(help="Folder for the report, the trace page and the starter log.")] = Path(
        "reports"
    ),
) -> None:
    """Run a stream through the whole pipeline with every fault kind, redrive, and judge R1–R3."""
    from onceflow.local.demo import DemoOptions, run_demo, write_trace
    from onceflow.local.report import report_as_dict

    _quiet_engine_logs()
    out.mkdir(parents=True, exist_ok=True)
    options = DemoOptions(events, duplicates, poison, conflicts, concurrency, seed=seed, time_scale=time_scale)
    began = time.monotonic()
    with (
        Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as bar,
        (out / "starter.log").open("w") as log_stream,
    ):
        task = bar.add_task("messages handed to the starter", total=None)

        def progress(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        run = run_demo(options, progress=progress, log_stream=log_stream)
    seconds = time.monotonic() - began
    print_report(run.report, run.faults.counts, seconds)
    (out / "report.json").write_text(
        json.dumps({**report_as_dict(run.report), "faults": run.faults.counts, "seconds": seconds}, indent=2)
    )
    trace_path = write_trace(run, out / "trace.html")
    console.print(f"report: {out / 'report.json'}  trace: {trace_path}  starter log: {out / 'starter.log'}")
    run.pipeline.aws.stop()
    raise typer.Exit(code=0 if run.report.passed else 1)


def main() -> None:
    app()

"""How `onceflow status` lays out the latest executions for the terminal it prints to.

An execution's name is what a person copies into `trace --execution` or the console, so it is
never broken across lines. A terminal wide enough gets one table row per execution; a narrower
one (80 columns) gets each execution as a line of its own (started, status, name), its path on
the next, indented, and its event_id only where the name does not already begin with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from onceflow.ops.denials import DeniedAccess
from onceflow.ops.status import ExecutionLine, StatusReport

STATUS_STYLES = {"SUCCEEDED": "green", "FAILED": "red", "TIMED_OUT": "red", "ABORTED": "red", "RUNNING": "blue"}
TABLE_SPARE = 60  # the columns beside name, event_id and path need about this much, borders included


def _title(report: StatusReport) -> str:
    return f"Latest {len(report.latest)} of {report.execution_count} executions, oldest first"


def _fits_a_table(lines: Iterable[ExecutionLine], width: int) -> bool:
    rows = list(lines)
    widest = max((len(e.name) + len(e.event_id) for e in rows), default=0)
    return width >= widest + TABLE_SPARE + 40  # and at least 40 for the path, folded


def _outcome(report: StatusReport, execution: ExecutionLine) -> str:
    outcome = report.subscriber.get(execution.event_id) if report.subscriber is not None else None
    return outcome.line() if outcome else ""


def latest_executions(report: StatusReport, width: int) -> RenderableType:
    """The latest executions as a table, or as lines when the table would break their names."""
    if _fits_a_table(report.latest, width):
        return _table(report)
    parts: list[RenderableType] = [Text(_title(report), style="italic")]
    for execution in report.latest:
        head = Text.assemble(
            (execution.started[11:23], "dim"),
            "  ",
            (execution.status, STATUS_STYLES.get(execution.status, "")),
            "  ",
            execution.name,
        )
        head.no_wrap = True  # a name is copied whole; the terminal wraps what it must
        parts.append(head)
        if execution.event_id and not execution.name.startswith(execution.event_id[:20]):
            parts.append(Padding(Text(f"event_id {execution.event_id}"), (0, 0, 0, 4)))
        parts.append(Padding(Text(" → ".join(execution.path) or "(no history)"), (0, 0, 0, 4)))
        outcome = _outcome(report, execution)
        if outcome:
            parts.append(Padding(Text(f"subscriber: {outcome}"), (0, 0, 0, 4)))
    return Group(*parts)


def _table(report: StatusReport) -> Table:
    shown = Table(title=_title(report))
    shown.add_column("started", no_wrap=True)
    shown.add_column("execution", no_wrap=True)
    shown.add_column("status", no_wrap=True)
    shown.add_column("event_id", no_wrap=True)
    shown.add_column("path", overflow="fold")
    if report.subscriber is not None:
        shown.add_column("subscriber", overflow="fold")
    for execution in report.latest:
        shown.add_row(
            execution.started[11:23],
            execution.name,
            Text(execution.status, style=STATUS_STYLES.get(execution.status, "")),
            execution.event_id,
            " → ".join(execution.path),
            *([_outcome(report, execution)] if report.subscriber is not None else []),
        )
    return shown


def denials(refused: list[DeniedAccess]) -> RenderableType:
    """Each distinct refused request as one line (the terminal may wrap it, a name is never broken by
    us): how often, who, which action, on which resource, and AWS's reason."""
    parts: list[RenderableType] = [
        Text("Access denied by the local stack's IAM (docs/IAM.md), oldest first", style="italic")
    ]
    for denial in refused:
        parts.append(
            Text.assemble(
                (f"{denial.count}x ", "bold red"),
                (denial.principal, "bold"),
                " is not authorized to perform ",
                (denial.action, "bold"),
                " on ",
                (denial.resource, "bold"),
                (f" ({denial.reason})", "dim"),
            )
        )
    return Group(*parts)

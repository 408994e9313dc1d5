"""What `onceflow trace` prints while it reads: a progress bar (rich) and the pruned histories' line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from onceflow.devtools.trace.collect import Collected, collect


def collect_with_progress(
    sfn: Any,
    state_machine_arn: str,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
    console: Console | None = None,
) -> Collected:
    """collect(), with a bar on stderr (rich leaves it out when stderr is not a terminal)."""
    with Progress(
        TextColumn("reading executions"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("read", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return collect(sfn, state_machine_arn, progress=advance, check=check)


def pruned_line(pruned: int, total: int, budget: int | None) -> str:
    """One line for the command: how many executions have no history, and why."""
    why = (
        f"the endpoint keeps the histories of {budget} finished executions, failed, timed-out and aborted ones "
        "first, then the newest "
        "(`onceflow start --history-budget N` keeps more, at a memory cost)"
        if budget is not None
        else "the endpoint did not keep them"
    )
    return (
        f"{pruned} of {total} executions have no history: {why}; the page lists them with what "
        "DescribeExecution still knows and counts them in no path"
    )

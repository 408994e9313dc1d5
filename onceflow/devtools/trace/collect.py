"""Every execution of a state machine read for the trace page, with boto3 only, as fast as the API allows.

ListExecutions pages of 1,000 (the API's maximum) give every execution's name, status and dates;
one GetExecutionHistory per execution gives its steps, read by a few threads at once (the calls
wait on the endpoint, not on this process). An execution whose history has no events has lost it:
on AWS a history always starts with ExecutionStarted, and the embedded AWS of a long run keeps
only the newest histories (`onceflow start --history-budget`). For those, DescribeExecution still
knows the input, output, error and dates, and they are read instead.

When the state machine carries the budget (the tag `onceflow start` puts on it), the executions it
has pruned are known from the listing alone: the budget keeps the histories of the executions that
ended FAILED, TIMED_OUT or ABORTED first, then the newest others (onceflow.ops.executions.
histories_kept; engine/bookkeeping/retention.py prunes the rest within its next 200 requests, and
this read makes more than that). The others are read with DescribeExecution only, one call each
instead of an empty history and then DescribeExecution: at 5,000 executions and the default budget,
about 4,000 calls fewer. MARGIN more of each kind are read as any other (history first), so an
order of ties in start dates at the budget's edge, or a prune still to come, cannot cost one a history.

Against an embedded AWS (`onceflow start`), the reads go CHUNK executions to a batch, a few HTTP
requests instead of one per execution (onceflow/ops/batched_calls.py): the same calls, the same
answers, parsed by the same client; elsewhere (AWS) one call per execution, from READERS threads.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from onceflow.ops.batched_calls import BatchedCalls
from onceflow.ops.executions import (
    ExecutionResult,
    histories_kept,
    history,
    history_budget,
    list_executions,
    oldest_first,
)

READERS = 8
BATCH_READERS = 2  # batches in flight: the server answers one while this process reads the other
CHUNK = 250  # executions per batch: a progress step, and about 75 ms of the server's request lock
MARGIN = 200  # executions beyond the budget still read history first (engine/retention.py's `every`)

Progress = Callable[[int, int], None]  # (executions read so far, executions in all)
PROGRESS_STEP = 25  # told every 25 executions and at the last: rich's bar redraws 10 times a second
# anyway, and an update per execution was about 4% of `trace`'s CPU at 5,000 (py-spy)


@dataclass(frozen=True)
class Collected:
    executions: list[ExecutionResult]  # oldest first
    pruned: int  # executions whose history is gone (DescribeExecution read instead)
    history_budget: int | None  # as the state machine's tag says, when it has one


def _input_of(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"(input)": text}
    return value if isinstance(value, dict) else {"(input)": value}


def _read(sfn: Any, summary: dict[str, Any], pruned: bool = False) -> ExecutionResult:
    """`pruned`: the endpoint's budget has pruned its history (see the module): DescribeExecution only."""
    arn = summary["executionArn"]
    events = [] if pruned else history(sfn, arn)
    if events:
        return _with_history(summary, events)
    return _described(summary, sfn.describe_execution(executionArn=arn))


def _with_history(summary: dict[str, Any], events: list[dict[str, Any]]) -> ExecutionResult:
    started = next((e for e in events if e["type"] == "ExecutionStarted"), {})
    text = started.get("executionStartedEventDetails", {}).get("input")
    return ExecutionResult(summary["executionArn"], summary["name"], summary["status"], _input_of(text), events)


def _described(summary: dict[str, Any], described: dict[str, Any]) -> ExecutionResult:
    arn = summary["executionArn"]
    described.pop("ResponseMetadata", None)
    return ExecutionResult(
        arn,
        summary["name"],
        described.get("status", summary["status"]),
        _input_of(described.get("input")),
        [],
        described=described,
    )


def _read_batched(
    batched: BatchedCalls, sfn: Any, summaries: list[dict[str, Any]], pruned: list[bool]
) -> list[ExecutionResult]:
    """What `_read` gives for each of `summaries`, its calls made in batches: the first page of each
    history (the rest, rarely, one call after another), then DescribeExecution where none is left."""
    arns = [summary["executionArn"] for summary in summaries]
    read = [i for i, known in enumerate(pruned) if not known]
    pages = batched.call("GetExecutionHistory", [{"executionArn": arns[i], "maxResults": 1000} for i in read])
    events: dict[int, list[dict[str, Any]]] = {}
    for i, page in zip(read, pages, strict=True):
        events[i] = history(sfn, arns[i]) if page.get("nextToken") else page["events"]
    describe = [i for i in range(len(summaries)) if not events.get(i)]
    answers = batched.call("DescribeExecution", [{"executionArn": arns[i]} for i in describe])
    described = dict(zip(describe, answers, strict=True))
    return [
        _described(summary, described[i]) if i in described else _with_history(summary, events[i])
        for i, summary in enumerate(summaries)
    ]


def known_pruned(listed: list[dict[str, Any]], budget: int | None, margin: int = MARGIN) -> set[int]:
    """Positions in `listed` (oldest first) of the finished executions a budget has pruned for sure."""
    if budget is None:
        return set()
    finished = [i for i, summary in enumerate(listed) if summary["status"] != "RUNNING"]
    kept = histories_kept([listed[i]["status"] for i in finished], budget, margin)
    return {i for position, i in enumerate(finished) if position not in kept}


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """For reading and writing a trace: the responses are trees of dicts, lists and strings (about
    a million objects at 5,000 executions), the page's rows too; no cycles to find, and the cyclic
    collector scanned them all several times (0.5 s of a 6.5 s `trace`). Reference counting still
    frees everything."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def collect(
    sfn: Any,
    state_machine_arn: str,
    progress: Progress | None = None,
    readers: int = READERS,
    margin: int = MARGIN,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
    known: Mapping[str, ExecutionResult] | None = None,
) -> Collected:
    """`check` sees the listing (ListExecutions' summaries, oldest first) before any history is read,
    and may raise: a name the state machine has no execution of is told without reading them all.
    `known`: executions read before (by ARN); one that had ended then is taken as it was (an ended
    execution's history does not change), so `trace --watch` reads only what is new or running."""
    budget = history_budget(sfn, state_machine_arn)
    listed = oldest_first(list_executions(sfn, state_machine_arn))
    if check:
        check(listed)
    if progress:
        progress(0, len(listed))
    pruned_for_sure = known_pruned(listed, budget, margin)
    earlier = known or {}

    def read(i: int) -> ExecutionResult:
        was = earlier.get(listed[i]["executionArn"])
        if was is not None and ended(was, i):
            return was
        return _read(sfn, listed[i], i in pruned_for_sure)

    def read_chunk(start: int) -> list[ExecutionResult]:
        positions = range(start, min(start + CHUNK, len(listed)))
        kept = {i: was for i in positions if (was := earlier.get(listed[i]["executionArn"])) and ended(was, i)}
        wanted = [i for i in positions if i not in kept]
        fresh = iter(_read_batched(batched, sfn, [listed[i] for i in wanted], [i in pruned_for_sure for i in wanted]))
        return [kept[i] if i in kept else next(fresh) for i in positions]

    def ended(was: ExecutionResult, i: int) -> bool:
        return was.status != "RUNNING" and was.status == listed[i]["status"]

    results: list[ExecutionResult] = []
    batched = BatchedCalls(sfn)
    if batched.offered:
        with ThreadPoolExecutor(max_workers=BATCH_READERS, thread_name_prefix="trace-reader") as pool:
            for chunk in pool.map(read_chunk, range(0, len(listed), CHUNK)):
                results.extend(chunk)
                if progress:
                    progress(len(results), len(listed))
    else:
        with ThreadPoolExecutor(max_workers=readers, thread_name_prefix="trace-reader") as pool:
            for result in pool.map(read, range(len(listed))):
                results.append(result)
                if progress and (len(results) % PROGRESS_STEP == 0 or len(results) == len(listed)):
                    progress(len(results), len(listed))
    pruned = sum(1 for r in results if r.described is not None)
    return Collected(results, pruned, budget)

"""The trace page of real executions on the embedded engine, checked against their histories."""

from __future__ import annotations

import io
import itertools
import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from onceflow.devtools.trace import collect_executions, write_trace
from onceflow.devtools.trace.collect import collect
from onceflow.devtools.trace.progress import collect_with_progress
from onceflow.engine import EmbeddedAws
from onceflow.engine.bookkeeping.retention import Retention
from onceflow.local.faults import sns_publish_failures
from onceflow.local.stack import LocalStack, deploy
from onceflow.ops.executions import HISTORY_BUDGET_TAG, ExecutionResult, stop_running
from tests.support import order, run_execution
from tests.trace.engine_reads import count_engine_reads
from tests.trace.page_reader import TracePage, external_references, read_page


@dataclass
class Run:
    aws: EmbeddedAws
    stack: LocalStack
    definition: dict[str, Any]
    results: dict[str, ExecutionResult]
    path: Path
    page: TracePage


def _resource_state(definition: dict[str, Any], resource_suffix: str) -> str:
    (name,) = [n for n, s in definition["States"].items() if s.get("Resource", "").endswith(resource_suffix)]
    return name


@pytest.fixture(scope="module")
def run(embedded_aws: EmbeddedAws, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """One stack, four executions: new, redelivered after sent, SNS down beyond retries, redriven."""
    embedded_aws.reset()
    stack = deploy(embedded_aws.endpoint_url)
    results = {"new": run_execution(stack, order("order-1"), name="new-order-1")}
    results["redelivery"] = run_execution(stack, order("order-1"), name="redelivery-order-1")
    with sns_publish_failures() as outage:
        results["outage"] = run_execution(stack, order("order-2"), name="sns-outage-order-2")
    assert outage.injected > 1
    results["redrive"] = run_execution(stack, order("order-2"), name="redrive-order-2")
    definition = json.loads(stack.definition_path.read_text())
    collected = collect_executions(stack.client("stepfunctions"), stack.state_machine_arn)
    path = write_trace(definition, collected, tmp_path_factory.mktemp("trace") / "trace.html")
    yield Run(embedded_aws, stack, definition, results, path, read_page(path))
    stop_running(stack.client("stepfunctions"), [stack.state_machine_arn])


def embedded_lock(run: Run) -> threading.RLock:
    return run.aws.lock  # pruning runs under the request lock, as after a request


def _entered(result: ExecutionResult) -> list[str]:
    return [e["stateEnteredEventDetails"]["name"] for e in result.history if e["type"].endswith("StateEntered")]


def _expected_transitions(results: list[ExecutionResult]) -> tuple[Counter, Counter]:
    """(executions, traversals) per (source, target), straight from the histories."""
    executions: Counter = Counter()
    traversals: Counter = Counter()
    for result in results:
        names = _entered(result)
        pairs = list(itertools.pairwise(names))
        traversals.update(pairs)
        executions.update(set(pairs))
    return executions, traversals


def _expected_retries(result: ExecutionResult) -> Counter:
    """Per state: task scheduled events beyond the first, for each entry."""
    retries: Counter = Counter()
    current, scheduled = None, 0
    for event in [*result.history, {"type": "End"}]:
        if event["type"].endswith("StateEntered") or event["type"] == "End":
            if current is not None:
                retries[current] += max(scheduled - 1, 0)
            current, scheduled = event.get("stateEnteredEventDetails", {}).get("name"), 0
        elif event["type"] == "TaskScheduled":
            scheduled += 1
    return retries


def test_page_draws_every_state_of_the_definition(run: Run) -> None:
    drawn = [s["data-state"] for s in run.page.states]
    assert sorted(drawn) == sorted([*run.definition["States"], "__start__"])
    text = "".join(run.page.text)
    for name in run.definition["States"]:
        assert name in text


def test_transition_counts_match_the_histories(run: Run) -> None:
    executions, traversals = _expected_transitions(list(run.results.values()))
    for rows in (run.page.edges, run.page.transitions):
        seen_executions: Counter = Counter()
        seen_traversals: Counter = Counter()
        for row in rows:
            if row["data-kind"] in ("retry", "start"):
                continue
            pair = (row["data-source"], row["data-target"])
            seen_executions[pair] += int(row["data-executions"])
            seen_traversals[pair] += int(row["data-traversals"])
        assert +seen_executions == executions
        assert +seen_traversals == traversals
    (start,) = [e for e in run.page.edges if e["data-kind"] == "start"]
    assert int(start["data-executions"]) == len(run.results)


def test_edge_kinds_follow_how_each_state_was_left(run: Run) -> None:
    """A task whose last attempt failed left through a Catch; a Choice through a rule or the Default."""
    states = run.definition["States"]
    used = {(e["data-source"], e["data-target"]): e["data-kind"] for e in run.page.edges if int(e["data-executions"])}
    for result in run.results.values():
        last_task_event: dict[str, str] = {}
        current = None
        for event in result.history:
            if event["type"].endswith("StateEntered"):
                name = event["stateEnteredEventDetails"]["name"]
                if current is not None:
                    kind = used[(current, name)]
                    if last_task_event.get(current) == "TaskFailed":
                        assert kind == "catch", (current, name)
                    elif states[current]["Type"] == "Choice":
                        assert kind in ("choice", "default"), (current, name)
                    else:
                        assert kind == "next", (current, name)
                current = name
            elif event["type"] in ("TaskFailed", "TaskSucceeded") and current is not None:
                last_task_event[current] = event["type"]


def test_retries_and_errors_are_counted_per_state(run: Run) -> None:
    publish = _resource_state(run.definition, "sns:publish")
    expected: Counter = Counter()
    for result in run.results.values():
        expected.update(_expected_retries(result))
    for state in run.page.states:
        assert int(state["data-retries"]) == expected[state["data-state"]], state["data-state"]
    max_attempts = run.definition["States"][publish]["Retry"][0]["MaxAttempts"]
    assert expected[publish] == max_attempts
    errors = json.loads(run.page.state(publish)["data-errors"])
    assert errors == {"SNS.ThrottledException": max_attempts + 1}
    (loop,) = [e for e in run.page.edges if e["data-kind"] == "retry" and e["data-source"] == publish]
    assert (loop["data-executions"], loop["data-traversals"]) == ("1", str(max_attempts))
    assert f"↻ {max_attempts} retries in 1 execution" in run.page.html


def test_final_statuses_are_summarised(run: Run) -> None:
    statuses = Counter(r.status for r in run.results.values())
    assert statuses == {"SUCCEEDED": 3, "FAILED": 1}
    for status, count in statuses.items():
        assert f'data-status="{status}" data-count="{count}"' in run.page.html


def test_the_failed_execution_is_shown_step_by_step_by_default(run: Run) -> None:
    outage = run.results["outage"]
    shown = run.page.shown
    assert shown.attrs["data-name"] == outage.name
    assert shown.steps == outage.path
    html = run.page.html
    section = html[html.index(f'data-name="{outage.name}"') :]
    section = section[: section.index("</section>")]
    assert section.count("<summary>Input</summary>") == len(outage.path)
    assert section.count("<summary>Output</summary>") == len(outage.path) - 1  # a Fail state has no exit
    attempts = run.definition["States"][_resource_state(run.definition, "sns:publish")]["Retry"][0]["MaxAttempts"] + 1
    assert f"attempts 1–{attempts} failed: <b>SNS.ThrottledException</b>" in section
    assert "Onceflow.DeadLettered" in section or outage.error is None
    # only the selected execution is written as HTML; every one is in the data the script draws from
    assert [s.attrs["data-name"] for s in run.page.sections] == [outage.name]
    assert [e["name"] for e in run.page.data["executions"]] == [r.name for r in run.results.values()]
    states = run.page.data["states"]
    for result, drawn in zip(run.results.values(), run.page.data["executions"], strict=True):
        assert [states[step[0]] for step in drawn["steps"]] == result.path


def test_a_chosen_execution_is_shown_instead(run: Run, tmp_path: Path) -> None:
    redrive = run.results["redrive"]
    page = read_page(write_trace(run.definition, list(run.results.values()), tmp_path / "t.html", redrive.name))
    assert page.shown.attrs["data-name"] == redrive.name
    assert page.shown.steps == redrive.path
    on_path = [s["data-state"] for s in page.states if "onpath" in s["class"].split()]
    assert sorted(on_path) == sorted({*redrive.path, "__start__"})


def test_page_needs_no_network(run: Run) -> None:
    assert external_references(run.page.html) == []
    assert "<script>" in run.page.html and "<style>" in run.page.html


@pytest.fixture(scope="module")
def pruned(run: Run) -> int:
    """The run with its two oldest histories pruned for good (engine/bookkeeping/retention.py, the budget
    `onceflow start --history-budget` sets), once for the module; how many were pruned. The
    module's other tests read the histories the `run` fixture collected before, or none."""
    with embedded_lock(run):
        return Retention(max_histories=2).prune()


def test_pruned_histories_are_listed_with_what_describe_execution_knows(run: Run, pruned: int, tmp_path: Path) -> None:
    """The pruned keep their dates, status, input and error (DescribeExecution); the page counts
    them in no path, and says how many and why."""
    assert pruned == 2
    sfn = run.stack.client("stepfunctions")
    collected = collect(sfn, run.stack.state_machine_arn)
    without_history = [r for r in collected.executions if r.pruned]
    assert [r.name for r in without_history] == [run.results["new"].name, run.results["redelivery"].name]
    for result in without_history:
        described = sfn.describe_execution(executionArn=result.arn)
        assert result.history == [] and result.input == json.loads(described["input"])
        assert result.described["startDate"] == described["startDate"]
        assert result.described["stopDate"] == described["stopDate"]
    page = read_page(write_trace(run.definition, collected.executions, tmp_path / "t.html", history_budget=2))
    drawn = {e["name"]: e for e in page.data["executions"]}
    new = drawn[run.results["new"].name]
    assert (new["pruned"], new["steps"], new["events"], new["path"]) == (True, [], [], -1)
    assert new["event_id"] == "order-1" and new["status"] == "SUCCEEDED" and new["started"] != "—"
    start = next(s for s in page.states if s["data-state"] == "__start__")
    assert start["data-executions"] == "2"  # the two with a history; the chip still counts all four
    assert 'data-status="SUCCEEDED" data-count="3"' in page.html
    assert "2 of 4 executions have no history" in page.ids["pruned-note"]
    assert "histories of 2 finished executions, failed, timed-out and aborted ones first" in page.ids["pruned-note"]
    paths = page.html[
        page.html.index('<table id="paths">') : page.html.index("</table>", page.html.index('<table id="paths">'))
    ]
    counts = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', paths)]
    assert sum(counts) == 2  # the paths table counts no pruned execution


def test_histories_the_tagged_budget_pruned_are_not_asked_for(
    run: Run, pruned: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the two oldest pruned and the state machine tagged with a budget of 2 (as `onceflow
    start --history-budget 2` tags it), those two are read with DescribeExecution alone, not with
    an empty GetExecutionHistory first; what is collected is the same."""
    assert pruned == 2
    sfn = run.stack.client("stepfunctions")
    arn = run.stack.state_machine_arn
    before = collect(sfn, arn)  # no tag yet: every history asked for
    sfn.tag_resource(resourceArn=arn, tags=[{"key": HISTORY_BUDGET_TAG, "value": "2"}])
    asked = count_engine_reads(monkeypatch)
    try:
        after = collect(sfn, arn, margin=0)
    finally:
        sfn.untag_resource(resourceArn=arn, tagKeys=[HISTORY_BUDGET_TAG])
    assert asked == {"GetExecutionHistory": 2, "DescribeExecution": 2}
    assert (after.pruned, after.history_budget) == (2, 2)
    assert [(r.name, r.status, r.input, r.history, r.described) for r in after.executions] == [
        (r.name, r.status, r.input, r.history, r.described) for r in before.executions
    ]


def test_a_check_of_the_listing_stops_before_any_history_is_read(run: Run) -> None:
    """`onceflow trace --execution NAME` tells a name the state machine has no execution of from the
    listing (cli.py passes such a check), not after reading every history."""
    sfn = run.stack.client("stepfunctions")
    asked: Counter = Counter()
    sfn.meta.events.register("before-call.states.GetExecutionHistory", lambda **_: asked.update(["history"]))
    seen: list[int] = []

    def refuse(listed: list[dict[str, Any]]) -> None:
        seen.append(len(listed))
        raise LookupError("no such execution")

    with pytest.raises(LookupError):
        collect(sfn, run.stack.state_machine_arn, check=refuse)
    assert seen == [4] and asked == {}


def test_reading_shows_a_progress_bar_on_a_terminal(run: Run) -> None:
    """What `onceflow trace` draws on stderr while it reads (rich; left out when not a terminal)."""
    terminal = io.StringIO()
    collected = collect_with_progress(
        run.stack.client("stepfunctions"),
        run.stack.state_machine_arn,
        console=Console(file=terminal, force_terminal=True, width=100),
    )
    drawn = terminal.getvalue()
    assert len(collected.executions) == 4
    assert "reading executions" in drawn and "4/4" in drawn


def test_a_trace_is_read_and_written_without_the_cycle_collector_and_leaves_it_as_it_was() -> None:
    import gc

    from onceflow.devtools.trace.collect import without_cycle_collection

    assert gc.isenabled()
    with without_cycle_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with without_cycle_collection():
            pass
        assert not gc.isenabled()  # one the caller switched off stays off
    finally:
        gc.enable()

"""The history budget keeps the executions an on-call engineer opens: failed, timed out, aborted first.

Issue 30: the budget kept the newest 1,000 executions, so after 2,600 events the run's only FAILED
execution had no history. Now a budget keeps the histories of the executions that ended badly first
(newest first), then the newest others (onceflow.ops.executions.histories_kept), in the engine
(engine/bookkeeping/retention.py) and in what `onceflow trace` reads as pruned without asking
(devtools/trace/collect.py, known_pruned).
"""

from __future__ import annotations

import pytest

from onceflow.devtools.trace.collect import collect, known_pruned
from onceflow.engine.bookkeeping.retention import Retention
from onceflow.local.faults import sns_publish_failures
from onceflow.ops.executions import HISTORY_BUDGET_TAG, histories_kept
from tests.support import order, run_execution
from tests.trace.engine_reads import count_engine_reads


def test_the_one_failure_of_2600_keeps_its_history_with_the_newest_successes() -> None:
    statuses = ["SUCCEEDED"] * 2600
    statuses[137] = "FAILED"
    kept = histories_kept(statuses, 1000)
    assert 137 in kept and len(kept) == 1000
    assert kept - {137} == set(range(2600 - 999, 2600))  # then the newest successes


@pytest.mark.parametrize(
    ("statuses", "budget", "kept"),
    [
        (["FAILED", "TIMED_OUT", "ABORTED", "SUCCEEDED"], 3, {0, 1, 2}),  # every bad kind before a success
        (["FAILED", "FAILED", "FAILED", "SUCCEEDED"], 2, {1, 2}),  # more failures than budget: the newest
        (["SUCCEEDED", "FAILED", "SUCCEEDED"], 0, set()),
    ],
    ids=["bad-kinds-first", "newest-failures", "none"],
)
def test_ended_badly_first_newest_first_within_the_budget(statuses: list[str], budget: int, kept: set[int]) -> None:
    assert histories_kept(statuses, budget) == kept


def test_the_engine_prunes_the_successes_before_the_failure_and_trace_knows_which(
    stack, embedded_aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One execution dead-lettered by an SNS outage, then five that succeeded; a budget of 3 keeps the
    failed one and the two newest successes; `trace` reads the other three with DescribeExecution
    alone (the state machine tagged with the budget, as `onceflow start` tags it)."""
    sfn = stack.client("stepfunctions")
    with sns_publish_failures():
        failed = run_execution(stack, order("order-out"), name="outage-order-out")
    assert failed.status == "FAILED"
    succeeded = [run_execution(stack, order(f"order-{i}"), name=f"fine-order-{i}") for i in range(5)]
    with embedded_aws.lock:
        assert Retention(max_histories=3).prune() == 3
    with_history = {
        e["name"]
        for e in sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
        if sfn.get_execution_history(executionArn=e["executionArn"])["events"]
    }
    assert with_history == {failed.name, succeeded[3].name, succeeded[4].name}

    sfn.tag_resource(resourceArn=stack.state_machine_arn, tags=[{"key": HISTORY_BUDGET_TAG, "value": "3"}])
    asked = count_engine_reads(monkeypatch)  # one by one or in batches (ops/batched_calls.py)
    try:
        collected = collect(sfn, stack.state_machine_arn, margin=0)
    finally:
        sfn.untag_resource(resourceArn=stack.state_machine_arn, tagKeys=[HISTORY_BUDGET_TAG])
    assert asked["GetExecutionHistory"] == 3  # only the kept ones: the pruned were known from the listing
    assert {r.name for r in collected.executions if not r.pruned} == with_history
    assert collected.pruned == 3


def test_known_pruned_leaves_running_executions_and_a_margin_of_each_kind_to_be_read() -> None:
    listed = [{"status": s} for s in ["SUCCEEDED", "FAILED", "SUCCEEDED", "RUNNING", "SUCCEEDED", "SUCCEEDED"]]
    assert known_pruned(listed, 2, margin=0) == {0, 2, 4}  # kept: the failure and the newest success
    assert known_pruned(listed, 2, margin=1) == {0, 2}  # one more success read with its history first
    assert known_pruned(listed, None) == set()

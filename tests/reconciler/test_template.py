"""What template.yaml must keep for the reconciler and the safety net (read from the file, no AWS)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from onceflow.local.template import TEMPLATE_PATH, load_sam_template, plan_local_stack
from onceflow_common import pending

RESOURCES = load_sam_template()["Resources"]
APP = (Path(__file__).parents[2] / "functions" / "reconciler" / "app.py").read_text()


def _ref(node: object) -> str | None:
    if isinstance(node, dict) and "Ref" in node:
        return str(node["Ref"])
    if isinstance(node, dict) and "Fn::GetAtt" in node:
        target = node["Fn::GetAtt"]
        return str(target[0] if isinstance(target, list) else target.split(".")[0])
    return None


def test_the_safety_net_rule_invokes_the_reconciler_with_retries_and_its_own_dead_letter_queue():
    [target] = RESOURCES["SafetyNetRule"]["Properties"]["Targets"]
    assert _ref(target["Arn"]) == "ReconcilerFunction"
    assert target["RetryPolicy"] == {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}
    assert _ref(target["DeadLetterConfig"]["Arn"]) == "SafetyNetDeadLetterQueue"
    permission = RESOURCES["SafetyNetInvokesReconciler"]["Properties"]
    assert (permission["Principal"], _ref(permission["SourceArn"])) == ("events.amazonaws.com", "SafetyNetRule")
    # Failed asynchronous invocations (after Lambda's retries) land there too, and it is alarmed.
    reconciler = RESOURCES["ReconcilerFunction"]["Properties"]
    assert _ref(reconciler["DeadLetterQueue"]["TargetArn"]) == "SafetyNetDeadLetterQueue"
    alarm = RESOURCES["SafetyNetDeadLetterQueueAlarm"]["Properties"]
    assert alarm["Dimensions"][0]["Value"] == {"Fn::GetAtt": ["SafetyNetDeadLetterQueue", "QueueName"]}
    # The DLQ no longer admits EventBridge: every dead letter is written by one of our functions or the ASL.
    statements = RESOURCES["DeadLetterQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert all(s["Effect"] == "Deny" for s in statements)


def test_the_reconciler_runs_on_a_schedule():
    events = RESOURCES["ReconcilerFunction"]["Properties"]["Events"]
    assert [(e["Type"], e["Properties"]["Schedule"]) for e in events.values()] == [("Schedule", "rate(5 minutes)")]


def test_the_pending_index_is_the_sparse_one_the_reconciler_queries():
    table = RESOURCES["ProcessedEventsTable"]["Properties"]
    [index] = table["GlobalSecondaryIndexes"]
    assert (
        index["IndexName"]
        == RESOURCES["ReconcilerFunction"]["Properties"]["Environment"]["Variables"]["PENDING_INDEX_NAME"]
    )
    assert [(k["AttributeName"], k["KeyType"]) for k in index["KeySchema"]] == [
        ("pending_shard", "HASH"),
        ("pending_since", "RANGE"),
    ]
    assert set(index["Projection"]["NonKeyAttributes"]) >= {"execution_arn", "payload_hash"}
    assert pending.all_shards() == [f"{n:02d}" for n in range(16)]


def test_the_stuck_pending_alarm_reads_the_reconcilers_metric_and_alarms_when_it_is_missing():
    alarm = RESOURCES["StuckPendingAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("Onceflow", "EventsPendingTooLong")
    assert f'name="{alarm["MetricName"]}"' in APP  # the name the reconciler emits
    assert alarm["TreatMissingData"] == "breaching"  # no count: the reconciler is not running
    schedule = RESOURCES["ReconcilerFunction"]["Properties"]["Events"]["Sweep"]["Properties"]["Schedule"]
    minutes = int(re.fullmatch(r"rate\((\d+) minutes\)", schedule).group(1))
    assert alarm["Period"] >= 2 * minutes * 60  # every period holds a run: missing data is a real signal
    threshold = RESOURCES["ReconcilerFunction"]["Properties"]["Environment"]["Variables"]["PENDING_THRESHOLD_SECONDS"]
    assert threshold == {"Ref": "StuckPendingAlarmSeconds"}


def test_the_local_plan_emulates_every_function_with_its_layers_and_schedule():
    plan = plan_local_stack("plan-test", "us-east-1", "123456789012", path=TEMPLATE_PATH)
    assert set(plan.functions) == {lid for lid, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"}
    reconciler = plan.functions["ReconcilerFunction"]
    assert (reconciler.schedules, reconciler.sqs_queue_logical_id) == (("rate(5 minutes)",), None)
    assert [d.name for d in reconciler.layer_dirs] == ["common"]
    assert plan.function.logical_id == "StarterFunction"
    assert re.fullmatch(r"arn:aws:lambda:us-east-1:123456789012:function:plan-test-ReconcilerFunction", _target(plan))


def _target(plan) -> str:
    [target] = plan.cloudformation["Resources"]["SafetyNetRule"]["Properties"]["Targets"]
    return str(target["Arn"])


def test_the_execution_lookback_covers_the_longest_execution():
    """ListExecutions sorts by start, newest first; a sweep stops paging at executions that started
    a lookback before its checkpoint, so one that ran longer would be missed when it ends after it."""
    [uri] = [
        r["Properties"]["DefinitionUri"] for r in RESOURCES.values() if r["Type"] == "AWS::Serverless::StateMachine"
    ]
    definition = json.loads((TEMPLATE_PATH.parent / uri).read_text())
    variables = RESOURCES["ReconcilerFunction"]["Properties"]["Environment"]["Variables"]
    assert int(variables["EXECUTION_LOOKBACK_SECONDS"]) >= definition["TimeoutSeconds"] > 0

"""The safety net: executions that end outside the dead-letter path reach the DLQ, and redrive recovers them.

The route is template.yaml's EventBridge rule as deployed on the embedded AWS, to the real
reconciler function (run by the local function runtime, invoked as EventBridge invokes a Lambda
target: asynchronously, retried, then dead-lettered); the starter is the real one behind the
emulated SQS event source.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator

import pytest
from moto.sqs.exceptions import SQSException
from moto.sqs.models import SQSBackend

from onceflow.devtools.schedules.hooks import ExecutionInterrupts
from onceflow.local import faults
from onceflow.local import safety_net as safety_net_module
from onceflow.local.faults import sns_publish_failures, sqs_send_failures
from onceflow.local.safety_net import ASYNC_ATTEMPTS, SafetyNet, ScheduledRuns
from onceflow.local.template import load_sam_template
from onceflow.ops.executions import wait_for, wait_for_all
from onceflow.ops.observe import drain, scan
from onceflow.ops.redrive import redrive
from onceflow_common.status_change import needs_dead_letter
from tests.support import order


@pytest.fixture
def interrupts(stack) -> Iterator[ExecutionInterrupts]:
    """Stop an execution as it enters a chosen state (the operator's StopExecution)."""
    with ExecutionInterrupts(stack.client("stepfunctions")).installed() as armed:
        yield armed


RESUMED_PENDING_PATH = [
    "Record event and business item",
    "Look up earlier record",
    "What is left to do?",
    "Publish notification",
    "Mark as sent",
]


def _statuses(stack) -> list[str]:
    return [r["status"] for r in scan(stack.client("dynamodb"), stack.processed_events_table)]


def _order_ids(stack) -> list[str]:
    return [r["order_id"] for r in scan(stack.client("dynamodb"), stack.business_table)]


def _redrive_and_process(stack, event_source, already: set[str]):
    """Redrive the DLQ to the source queue, let the real starter take it, wait for the new executions."""
    sqs = stack.client("sqs")
    report = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=False, limit=None)
    event_source.run_until_empty()
    results = wait_for_all(stack.client("stepfunctions"), stack.state_machine_arn)
    return report, [r for r in results if r.arn not in already]


def test_the_emulated_route_is_the_templates_rule(stack, safety_net):
    declared = load_sam_template()["Resources"]["SafetyNetRule"]["Properties"]
    expected = copy.deepcopy(declared["EventPattern"])
    expected["detail"]["stateMachineArn"] = [stack.state_machine_arn]
    reconciler = stack.functions["ReconcilerFunction"]

    assert safety_net.rule.pattern == expected
    region, account = stack.state_machine_arn.split(":")[3:5]  # the endpoint's own account
    assert safety_net.rule.target_arns == (f"arn:aws:lambda:{region}:{account}:function:{reconciler.name}",)
    assert {"status": ["FAILED"], "error": [{"anything-but": ["Onceflow.DeadLettered"]}]} in expected["detail"]["$or"]


def test_the_rule_and_the_reconciler_agree_on_what_needs_a_dead_letter(stack, safety_net):
    """The reconciler's sweep applies `needs_dead_letter` where the rule's pattern is not there to."""
    statuses = ["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"]
    errors = [None, "Onceflow.DeadLettered", "States.Runtime", "Operator.Stopped"]
    for status, error in itertools.product(statuses, errors):
        event = {
            "source": "aws.states",
            "detail-type": "Step Functions Execution Status Change",
            "detail": {"stateMachineArn": stack.state_machine_arn, "status": status, "error": error},
        }
        assert safety_net.rule.matches(event) == needs_dead_letter(status, error), (status, error)


def test_operator_stop_after_record_is_dead_lettered_and_redrive_resumes_on_the_pending_path(
    stack, event_source, inbox, safety_net, retry_pause
):
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    body = json.dumps(order("order-stopped"))
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=body)

    with sns_publish_failures(times=1) as outage:
        event_source.run_until_empty()
        retry_pause.wait_until_reached()  # recorded, first publish failed, waiting to retry
        [running] = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
        assert _statuses(stack) == ["pending"]
        sfn.stop_execution(executionArn=running["executionArn"], error="Operator.Stopped", cause="SNS incident")
        retry_pause.released.set()
        stopped = wait_for(sfn, running["executionArn"])

    assert stopped.status == "ABORTED"
    assert outage.calls == 1  # stopped before the retry: nothing was published
    assert _statuses(stack) == ["pending"]  # the SQS message is gone: only the safety net can recover it
    assert drain(sqs, stack.dead_letter_queue_url, delete=False) == []

    swept = safety_net.sweep()
    assert [(c.status, c.routed, c.lost, c.failed) for c in swept.changes] == [("ABORTED", True, False, False)]
    [dead] = drain(sqs, stack.dead_letter_queue_url, delete=False)
    assert dead.body == body  # the original SQS body, with the reason in its attributes
    assert {k: dead.attributes[k] for k in ("source", "error", "event_id", "execution_arn")} == {
        "source": "reconciler",
        "error": "Operator.Stopped",
        "event_id": "order-stopped",
        "execution_arn": stopped.arn,
    }
    assert dead.attributes["cause"] == "SNS incident"

    moved, resumed = _redrive_and_process(stack, event_source, already={stopped.arn})

    assert (moved.moved, moved.items[0].source, moved.items[0].event_id) == (1, "reconciler", "order-stopped")
    [result] = resumed
    assert (result.status, result.path) == ("SUCCEEDED", RESUMED_PENDING_PATH)
    assert _statuses(stack) == ["sent"]
    assert _order_ids(stack) == ["order-stopped"]  # one business row: the resume wrote nothing
    assert inbox.by_event_id()["order-stopped"] >= 1
    assert drain(sqs, stack.dead_letter_queue_url) == []
    assert safety_net.sweep().routed == []  # the successful resume is reported, not routed


def test_self_dead_lettered_execution_is_not_dead_lettered_twice(stack, event_source, safety_net):
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-outage")))

    with sns_publish_failures():
        event_source.run_until_empty()
        [result] = wait_for_all(sfn, stack.state_machine_arn)

    assert (result.status, result.error) == ("FAILED", "Onceflow.DeadLettered")
    swept = safety_net.sweep()
    assert [(c.status, c.error, c.routed) for c in swept.changes] == [("FAILED", "Onceflow.DeadLettered", False)]
    dead = drain(sqs, stack.dead_letter_queue_url)
    assert [(m.attributes["source"], m.attributes["error"]) for m in dead] == [
        ("state-machine", "SNS.ThrottledException")
    ]


def test_a_failing_dead_letter_path_is_caught_by_the_safety_net(stack, event_source, inbox, safety_net):
    """SNS is down and so is the DLQ for the state machine: the execution fails with the SQS error."""
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-double-fault")))

    with sns_publish_failures(), sqs_send_failures("DeadLetterQueue") as dlq_down:
        event_source.run_until_empty()
        [failed] = wait_for_all(sfn, stack.state_machine_arn)
    assert dlq_down.injected >= 1
    assert failed.status == "FAILED" and failed.error not in (None, "Onceflow.DeadLettered")
    assert _statuses(stack) == ["pending"]

    swept = safety_net.sweep()  # the DLQ is reachable again, as EventBridge's retries would find it
    assert [(c.error, c.routed, c.failed) for c in swept.changes] == [(failed.error, True, False)]

    moved, resumed = _redrive_and_process(stack, event_source, already={failed.arn})
    assert moved.by_reason() == {f"reconciler: {failed.error}": 1}
    assert [r.path for r in resumed] == [RESUMED_PENDING_PATH]
    assert (_statuses(stack), _order_ids(stack)) == (["sent"], ["order-double-fault"])
    assert inbox.by_event_id() == {"order-double-fault": 1}


def test_sweeps_report_each_ended_execution_once_and_route_no_success(stack, event_source, safety_net):
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-fine")))
    event_source.run_until_empty()
    wait_for_all(sfn, stack.state_machine_arn)

    first, second = safety_net.sweep(), safety_net.sweep()

    assert [(c.status, c.routed) for c in first.changes] == [("SUCCEEDED", False)]
    assert second.changes == []
    assert drain(sqs, stack.dead_letter_queue_url) == []


def test_a_sweep_reports_every_execution_that_ended_since_the_last_even_past_one_page(
    stack, event_source, safety_net, monkeypatch
):
    """A sweep reads ListExecutions in small pages, newest first, down to its horizon: more ended
    executions than a page holds are all reported, each once."""
    monkeypatch.setattr(safety_net_module, "SWEEP_PAGE_SIZE", 2)
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-first")))
    event_source.run_until_empty()
    wait_for_all(sfn, stack.state_machine_arn)
    [first] = [c.execution_arn for c in safety_net.sweep().changes]  # the horizon is now that execution
    for n in range(5):
        sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order(f"order-{n}")))
    event_source.run_until_empty()
    later = {r.arn for r in wait_for_all(sfn, stack.state_machine_arn)} - {first}

    reported = [c.execution_arn for c in safety_net.sweep().changes]

    assert len(later) == 5 and sorted(reported) == sorted(later)
    assert safety_net.sweep().changes == []


def test_a_status_change_the_reconciler_fails_on_goes_to_the_targets_dead_letter_queue(stack, event_source, interrupts):
    """Lambda retries an asynchronous invocation twice, then sends the event to the function's
    DeadLetterConfig queue (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html);
    the scheduled sweep dead-letters the execution once the DLQ takes messages again."""
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    interrupts.arm("order-unlucky", "Publish notification", "stop")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-unlucky")))
    event_source.run_until_empty()
    [stopped] = wait_for_all(sfn, stack.state_machine_arn)
    net = SafetyNet(stack)
    # Not retryable by boto3 (a denied send), so each attempt fails at once.
    denied = faults.inject(
        SQSBackend,
        "send_message",
        lambda: SQSException("AccessDenied", "Injected fault: not authorized to send"),
        applies=lambda queue_name, *args, **kwargs: queue_name.endswith(stack.dead_letter_queue_url.rsplit("/", 1)[1]),
        name="sqs.send_message:AccessDenied",
    )

    with denied as dlq_denied:
        swept = net.sweep()

    assert dlq_denied.injected == ASYNC_ATTEMPTS
    assert [(c.routed, c.failed) for c in swept.changes] == [(True, True)]
    [parked] = drain(sqs, stack.functions["ReconcilerFunction"].dead_letter_queue_url)
    assert parked.json["detail"]["executionArn"] == stopped.arn
    assert drain(sqs, stack.dead_letter_queue_url, delete=False) == []

    ScheduledRuns(stack, net.invoker).run()

    [dead] = drain(sqs, stack.dead_letter_queue_url)
    assert (dead.attributes["source"], dead.attributes["execution_arn"]) == ("reconciler", stopped.arn)


def test_a_sweep_reports_a_success_the_rule_cannot_match_without_describing_it(
    stack, event_source, safety_net, interrupts
):
    """The rule matches failures only: a SUCCEEDED execution's change is reported unrouted from the
    listing alone; an execution stopped by an operator is still described, routed and dead-lettered."""
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    interrupts.arm("order-stopped", "Publish notification", "stop")
    for order_id in ("order-fine", "order-stopped"):
        sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order(order_id)))
    event_source.run_until_empty()
    results = {r.status: r.arn for r in wait_for_all(sfn, stack.state_machine_arn)}
    described: list[str] = []

    def note(params: dict, **_: object) -> None:
        described.append(params["executionArn"])

    sfn.meta.events.register("provide-client-params.states.DescribeExecution", note)
    try:
        changes = safety_net.sweep().changes
    finally:
        sfn.meta.events.unregister("provide-client-params.states.DescribeExecution", note)

    assert sorted((c.status, c.routed, c.error) for c in changes) == [
        ("ABORTED", True, "Onceflow.OperatorStopped"),
        ("SUCCEEDED", False, None),
    ]
    assert described == [results["ABORTED"]]
    assert [m.attributes.get("error") for m in drain(sqs, stack.dead_letter_queue_url)] == ["Onceflow.OperatorStopped"]


def test_a_rule_that_reads_more_than_a_listing_tells_has_every_success_described(safety_net):
    rule = safety_net.rule
    reads_input = copy.deepcopy(rule.pattern)
    reads_input["detail"]["input"] = [{"prefix": "{"}]
    arn = rule.pattern["detail"]["stateMachineArn"][0]
    assert not rule.may_route_a_success(arn)  # the template's: failures only
    assert type(rule)(rule.name, reads_input, rule.target_arns).may_route_a_success(arn)
    matches_all = {"source": ["aws.states"]}
    assert type(rule)(rule.name, matches_all, rule.target_arns).may_route_a_success(arn)

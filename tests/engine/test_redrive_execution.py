"""RedriveExecution on the embedded endpoint behaves as AWS documents it for Standard workflows.

API: https://docs.aws.amazon.com/step-functions/latest/apireference/API_RedriveExecution.html;
behaviour and limits: https://docs.aws.amazon.com/step-functions/latest/dg/redrive-executions.html
(resumes at the unsuccessful state with the input it was entered with, keeps the ARN and the
history, appends ExecutionRedriven; FAILED, TIMED_OUT or ABORTED Standard executions within 14
days); DescribeExecution's redriveCount / redriveDate / redriveStatus / redriveStatusReason as
the API reference describes them; `$$.Execution.RedriveCount` from the Context object page
(https://docs.aws.amazon.com/step-functions/latest/dg/input-output-contextobject.html).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.bookkeeping.retention import Retention
from onceflow.engine.stepfunctions.api import redrive_execution
from onceflow.local.event_source import SqsEventSource
from onceflow.local.faults import sns_publish_failures
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult, history, poll_until, wait_for
from onceflow.ops.observe import NotificationInbox
from tests.engine.harness import Account
from tests.support import RetryHold, order, order_rows, state_rows

TOPIC = "redrive-topic"
TOPIC_ARN = f"arn:aws:sns:{REGION}:{ACCOUNT_ID}:{TOPIC}"

# Prepare (a Pass) -> Publish (fails while the topic is missing) -> Report (reads the redrive count).
PUBLISH_AFTER_PREPARE = {
    "StartAt": "Prepare",
    "States": {
        "Prepare": {"Type": "Pass", "Parameters": {"message.$": "$.text", "prepared": True}, "Next": "Publish"},
        "Publish": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sns:publish",
            "Parameters": {"TopicArn": TOPIC_ARN, "Message.$": "$.message"},
            "ResultSelector": {"id.$": "$.MessageId"},
            "ResultPath": "$.published",
            "Next": "Report",
        },
        "Report": {
            "Type": "Pass",
            "Parameters": {"prepared.$": "$.prepared", "redrives.$": "$$.Execution.RedriveCount"},
            "End": True,
        },
    },
}


def not_redrivable(call: Any) -> str:
    with pytest.raises(ClientError) as caught:
        call()
    assert caught.value.response["Error"]["Code"] == "ExecutionNotRedrivable"
    return caught.value.response["Error"]["Message"]


def redrive_fields(account: Account, execution_arn: str) -> dict[str, Any]:
    described = account.describe(execution_arn)
    return {key: value for key, value in described.items() if key.startswith("redrive")}


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def wait_until_running_again(account: Account, execution_arn: str) -> None:
    poll_until(lambda: account.describe(execution_arn)["status"] == "RUNNING", 10, "the redriven run")


@pytest.fixture
def failed_publish(account: Account) -> ExecutionResult:
    """An execution that failed at Publish (the topic does not exist yet)."""
    arn = account.start(account.state_machine(PUBLISH_AFTER_PREPARE), {"text": "hello"})
    result = wait_for(account.sfn, arn, timeout=30)
    assert (result.status, result.error) == ("FAILED", "SNS.NotFoundException")
    return result


def start_held_at_retry(account: Account, hold: RetryHold) -> str:
    """Start an execution whose Publish fails once and then waits to retry (the topic is missing)."""
    definition = json.loads(json.dumps(PUBLISH_AFTER_PREPARE))
    definition["States"]["Publish"]["Retry"] = [{"ErrorEquals": ["SNS.NotFoundException"], "MaxAttempts": 1}]
    arn = account.start(account.state_machine(definition), {"text": "hello"})
    assert hold.reached.wait(10), "Publish did not reach its retry"
    return arn


@pytest.fixture
def hold(account: Account, monkeypatch: pytest.MonkeyPatch) -> Iterator[RetryHold]:
    hold = RetryHold()
    monkeypatch.setattr(account.aws.clock, "sleep", hold.sleep)
    yield hold
    hold.released.set()


@pytest.fixture
def held_at_retry(account: Account, hold: RetryHold) -> tuple[str, RetryHold]:
    return start_held_at_retry(account, hold), hold


def test_resumes_at_the_failed_state_and_keeps_the_history(account: Account, failed_publish: ExecutionResult) -> None:
    account.client("sns").create_topic(Name=TOPIC)
    redriven = account.sfn.redrive_execution(executionArn=failed_publish.arn)
    result = wait_for(account.sfn, failed_publish.arn, timeout=30)

    assert result.status == "SUCCEEDED"
    assert json.loads(account.describe(failed_publish.arn)["output"]) == {"prepared": True, "redrives": 1}
    # Prepare succeeded the first time and is not rerun; Publish runs again with the input it had.
    assert result.path == ["Prepare", "Publish", "Publish", "Report"]
    events = types(result.history)
    assert events[: len(failed_publish.history)] == types(failed_publish.history)
    assert events[len(failed_publish.history)] == "ExecutionRedriven"
    assert events[len(failed_publish.history) + 1] == "TaskStateEntered"
    assert events[-1] == "ExecutionSucceeded"
    assert [event["id"] for event in result.history] == list(range(1, len(result.history) + 1))
    [event] = [e for e in result.history if e["type"] == "ExecutionRedriven"]
    assert event["executionRedrivenEventDetails"] == {"redriveCount": 1}
    entered = [e for e in result.history if e["type"] == "TaskStateEntered"]
    assert json.loads(entered[-1]["stateEnteredEventDetails"]["input"]) == {"message": "hello", "prepared": True}

    fields = redrive_fields(account, failed_publish.arn)
    assert fields["redriveCount"] == 1
    assert fields["redriveDate"] == redriven["redriveDate"]
    assert fields["redriveStatus"] == "NOT_REDRIVABLE"
    assert fields["redriveStatusReason"] == "Execution is SUCCEEDED and cannot be redriven"


def test_a_failed_execution_that_was_never_redriven_is_redrivable(
    account: Account, failed_publish: ExecutionResult
) -> None:
    assert redrive_fields(account, failed_publish.arn) == {"redriveCount": 0, "redriveStatus": "REDRIVABLE"}


def test_list_executions_counts_redrives_and_filters_on_them(account: Account, failed_publish: ExecutionResult) -> None:
    machine_arn = account.describe(failed_publish.arn)["stateMachineArn"]
    other = wait_for(account.sfn, account.start(machine_arn, {"text": "other"}), timeout=30)
    account.sfn.redrive_execution(executionArn=failed_publish.arn)
    wait_for(account.sfn, failed_publish.arn, timeout=30)

    listed = {e["executionArn"]: e for e in account.sfn.list_executions(stateMachineArn=machine_arn)["executions"]}
    assert listed[failed_publish.arn]["redriveCount"] == 1 and "redriveDate" in listed[failed_publish.arn]
    assert listed[other.arn]["redriveCount"] == 0 and "redriveDate" not in listed[other.arn]

    def names(redrive_filter: str) -> list[str]:
        page = account.sfn.list_executions(stateMachineArn=machine_arn, redriveFilter=redrive_filter)
        return [e["executionArn"] for e in page["executions"]]

    assert names("REDRIVEN") == [failed_publish.arn]
    assert names("NOT_REDRIVEN") == [other.arn]


def test_a_status_filter_follows_a_redriven_execution(account: Account, failed_publish: ExecutionResult) -> None:
    """ListExecutions' statusFilter answers the status the execution has now: a redriven execution
    is no longer FAILED (it runs, then succeeds), however the list was filtered before."""
    machine_arn = account.describe(failed_publish.arn)["stateMachineArn"]

    def arns(status: str) -> list[str]:
        page = account.sfn.list_executions(stateMachineArn=machine_arn, statusFilter=status)
        return [e["executionArn"] for e in page["executions"]]

    assert (arns("FAILED"), arns("SUCCEEDED")) == ([failed_publish.arn], [])
    account.client("sns").create_topic(Name=TOPIC)
    account.sfn.redrive_execution(executionArn=failed_publish.arn)
    wait_for(account.sfn, failed_publish.arn, timeout=30)
    assert (arns("FAILED"), arns("SUCCEEDED")) == ([], [failed_publish.arn])


def test_each_redrive_counts_and_appends_one_redriven_event(account: Account, failed_publish: ExecutionResult) -> None:
    for expected_count in (1, 2):
        account.sfn.redrive_execution(executionArn=failed_publish.arn)
        result = wait_for(account.sfn, failed_publish.arn, timeout=30)
        assert result.status == "FAILED"  # the topic is still missing
        assert redrive_fields(account, failed_publish.arn)["redriveCount"] == expected_count
    redriven = [e["executionRedrivenEventDetails"] for e in result.history if e["type"] == "ExecutionRedriven"]
    assert redriven == [{"redriveCount": 1}, {"redriveCount": 2}]
    assert types(result.history).count("ExecutionFailed") == 3
    assert result.path.count("Prepare") == 1


def test_the_same_client_token_does_not_redrive_twice(account: Account, failed_publish: ExecutionResult) -> None:
    first = account.sfn.redrive_execution(executionArn=failed_publish.arn, clientToken="token-1")
    wait_for(account.sfn, failed_publish.arn, timeout=30)
    again = account.sfn.redrive_execution(executionArn=failed_publish.arn, clientToken="token-1")
    assert again["redriveDate"] == first["redriveDate"]
    assert redrive_fields(account, failed_publish.arn)["redriveCount"] == 1
    assert types(history(account.sfn, failed_publish.arn)).count("ExecutionRedriven") == 1

    account.sfn.redrive_execution(executionArn=failed_publish.arn, clientToken="token-2")
    wait_for(account.sfn, failed_publish.arn, timeout=30)
    assert redrive_fields(account, failed_publish.arn)["redriveCount"] == 2


def test_succeeded_execution_is_not_redrivable(account: Account) -> None:
    result = account.run({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
    assert result.status == "SUCCEEDED"
    message = not_redrivable(lambda: account.sfn.redrive_execution(executionArn=result.arn))
    assert message.startswith("Execution is SUCCEEDED and cannot be redriven")


def test_running_execution_is_not_redrivable(account: Account, held_at_retry: tuple[str, RetryHold]) -> None:
    arn, _ = held_at_retry
    message = not_redrivable(lambda: account.sfn.redrive_execution(executionArn=arn))
    assert message.startswith("Execution is RUNNING and cannot be redriven")
    assert redrive_fields(account, arn) == {
        "redriveCount": 0,
        "redriveStatus": "NOT_REDRIVABLE",
        "redriveStatusReason": "Execution is RUNNING and cannot be redriven",
    }


def test_aborted_execution_resumes_at_the_state_it_was_stopped_in(
    account: Account, held_at_retry: tuple[str, RetryHold]
) -> None:
    arn, hold = held_at_retry
    account.sfn.stop_execution(executionArn=arn, error="Operator", cause="stopped by hand")
    hold.released.set()
    assert wait_for(account.sfn, arn, timeout=30).status == "ABORTED"

    account.client("sns").create_topic(Name=TOPIC)
    account.sfn.redrive_execution(executionArn=arn)
    result = wait_for(account.sfn, arn, timeout=30)
    assert result.status == "SUCCEEDED"
    assert result.path == ["Prepare", "Publish", "Publish", "Report"]
    events = types(result.history)
    assert events.index("ExecutionRedriven") == events.index("ExecutionAborted") + 1


def test_timed_out_execution_resumes_and_its_timeout_starts_again(account: Account) -> None:
    """Publish's Retry asks for 10 s under TimeoutSeconds 5: the execution times out there (a Retry's
    seconds are the execution's, interpreter/deadlines.py); redriven, the timeout starts again."""
    definition = json.loads(json.dumps(PUBLISH_AFTER_PREPARE))
    definition["TimeoutSeconds"] = 5
    definition["States"]["Publish"]["Retry"] = [
        {"ErrorEquals": ["SNS.NotFoundException"], "IntervalSeconds": 10, "MaxAttempts": 1}
    ]
    arn = account.start(account.state_machine(definition), {"text": "hello"})
    assert wait_for(account.sfn, arn, timeout=30).status == "TIMED_OUT"
    assert redrive_fields(account, arn)["redriveStatus"] == "REDRIVABLE"

    account.client("sns").create_topic(Name=TOPIC)
    account.sfn.redrive_execution(executionArn=arn)
    result = wait_for(account.sfn, arn, timeout=30)
    assert result.status == "SUCCEEDED"  # a timeout counted from the first start would have ended it at once
    assert result.path == ["Prepare", "Publish", "Publish", "Report"]
    events = types(result.history)
    assert events.index("ExecutionRedriven") == events.index("ExecutionTimedOut") + 1


def test_a_redriven_executions_timeout_is_measured_on_its_time_line(account: Account) -> None:
    """TimeoutSeconds starts again for the redriven run (redrive-executions.html) and, as for a first
    run (interpreter/deadlines.py; AWS's recording test_global_timeout), a Wait past it ends the
    execution TIMED_OUT whatever the time scale: here a Wait of 60 s under TimeoutSeconds 5, which
    time scale 0 makes instant (before: the redriven run counted real seconds and SUCCEEDED)."""
    definition = json.loads(json.dumps(PUBLISH_AFTER_PREPARE))
    definition["TimeoutSeconds"] = 5
    definition["States"]["Publish"]["Next"] = "Linger"
    definition["States"]["Linger"] = {"Type": "Wait", "Seconds": 60, "Next": "Report"}
    arn = account.start(account.state_machine(definition), {"text": "hello"})
    assert wait_for(account.sfn, arn, timeout=30).status == "FAILED"

    account.client("sns").create_topic(Name=TOPIC)
    account.sfn.redrive_execution(executionArn=arn)
    result = wait_for(account.sfn, arn, timeout=30)

    assert result.status == "TIMED_OUT"
    assert types(result.history)[-2:] == ["WaitStateEntered", "ExecutionTimedOut"]


def test_a_history_budget_does_not_prune_a_redriven_execution_while_it_runs(
    account: Account, hold: RetryHold, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long local run prunes finished executions' histories (engine/bookkeeping/retention.py); a redriven one
    is running again and must keep its history until it ends again."""
    arn = start_held_at_retry(account, hold)
    account.sfn.stop_execution(executionArn=arn)
    hold.released.set()
    assert wait_for(account.sfn, arn, timeout=30).status == "ABORTED"

    again = RetryHold()
    monkeypatch.setattr(account.aws.clock, "sleep", again.sleep)
    account.sfn.redrive_execution(executionArn=arn)
    assert again.reached.wait(10), "the redriven Publish did not reach its retry"
    with account.aws.lock:
        Retention(max_histories=0).prune()
    again.released.set()
    result = wait_for(account.sfn, arn, timeout=30)
    assert result.status == "FAILED"  # the topic is still missing: the retry fails too
    assert types(result.history).count("ExecutionRedriven") == 1
    assert result.history[-1]["type"] == "ExecutionFailed"


def test_an_execution_that_ended_in_a_fail_state_fails_there_again(account: Account) -> None:
    """Our reading of "continues from the unsuccessful step" for a Fail state: the Fail state is the
    unsuccessful step, so the redrive enters it again; the steps before it are not rerun."""
    definition = {
        "StartAt": "Check",
        "States": {
            "Check": {"Type": "Pass", "Next": "Give up"},
            "Give up": {"Type": "Fail", "Error": "Onceflow.DeadLettered", "Cause": "in the dead-letter queue"},
        },
    }
    result = account.run(definition)
    account.sfn.redrive_execution(executionArn=result.arn)
    again = wait_for(account.sfn, result.arn, timeout=30)
    assert (again.status, again.error) == ("FAILED", "Onceflow.DeadLettered")
    assert again.path == ["Check", "Give up", "Give up"]


def test_express_execution_is_not_redrivable(account: Account) -> None:
    machine_arn = account.state_machine(
        {"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "E"}}}, kind="EXPRESS"
    )
    arn = account.start(machine_arn)  # not described: AWS refuses DescribeExecution of an Express execution
    message = not_redrivable(lambda: account.sfn.redrive_execution(executionArn=arn))
    assert "EXPRESS" in message


def test_redrivable_for_14_days_after_it_stopped(
    account: Account, failed_publish: ExecutionResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = account.describe(failed_publish.arn)["stopDate"]
    monkeypatch.setattr(redrive_execution, "clock", lambda: stopped + datetime.timedelta(days=14, seconds=1))
    message = not_redrivable(lambda: account.sfn.redrive_execution(executionArn=failed_publish.arn))
    assert message.startswith("Execution redrivable period exceeded")
    assert redrive_fields(account, failed_publish.arn)["redriveStatus"] == "NOT_REDRIVABLE"

    monkeypatch.setattr(redrive_execution, "clock", lambda: stopped + datetime.timedelta(days=13, hours=23))
    account.sfn.redrive_execution(executionArn=failed_publish.arn)
    assert wait_for(account.sfn, failed_publish.arn, timeout=30).status == "FAILED"
    assert redrive_fields(account, failed_publish.arn)["redriveCount"] == 1


def test_unknown_execution_does_not_exist(account: Account) -> None:
    arn = f"arn:aws:states:{REGION}:{ACCOUNT_ID}:execution:nothing:here"
    with pytest.raises(ClientError) as caught:
        account.sfn.redrive_execution(executionArn=arn)
    assert caught.value.response["Error"]["Code"] == "ExecutionDoesNotExist"


# The pipeline itself: an operator stop while Publish waits to retry, then RedriveExecution.


@pytest.fixture
def pipeline_hold(embedded_aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[RetryHold]:
    hold = RetryHold()
    monkeypatch.setattr(embedded_aws.clock, "sleep", hold.sleep)
    yield hold
    hold.released.set()


def test_a_stopped_pipeline_execution_is_redriven_to_sent_without_writing_again(
    stack: LocalStack, event_source: SqsEventSource, inbox: NotificationInbox, pipeline_hold: RetryHold
) -> None:
    sfn = stack.client("stepfunctions")
    stack.client("sqs").send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-redriven")))
    with sns_publish_failures(times=1) as outage:
        event_source.run_until_empty()
        assert pipeline_hold.reached.wait(10), "Publish did not reach its retry"
        [running] = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
        sfn.stop_execution(executionArn=running["executionArn"], error="Operator.Stopped", cause="SNS incident")
        pipeline_hold.released.set()
        assert wait_for(sfn, running["executionArn"], timeout=30).status == "ABORTED"
    assert outage.calls == 1
    assert [row["status"] for row in state_rows(stack)] == ["pending"]

    sfn.redrive_execution(executionArn=running["executionArn"])
    result = wait_for(sfn, running["executionArn"], timeout=30)

    assert result.status == "SUCCEEDED"
    assert result.path.count("Record event and business item") == 1  # the business row is not written again
    assert result.path[-2:] == ["Publish notification", "Mark as sent"]
    assert [row["status"] for row in state_rows(stack)] == ["sent"]
    assert len(order_rows(stack)) == 1
    assert inbox.by_event_id() == {"order-redriven": 1}

"""`.waitForTaskToken` tasks as AWS runs them: the callers that answer them, and what a failing
Parallel does to a task still waiting.

Service integration patterns, "Wait for a Callback with Task Token":
https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html#connect-wait-token
SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat:
https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
Each test names the recording of AWS it follows (LocalStack's tests/aws/services/stepfunctions/v2
snapshots, recorded against AWS itself). The engine's side:
onceflow/engine/stepfunctions/interpreter/parallel_aborts.py.
"""

from __future__ import annotations

import json
from typing import Any

from onceflow.ops.executions import wait_for
from tests.engine.harness import Account


def _queue(account: Account, name: str) -> tuple[Any, str]:
    sqs = account.client("sqs")
    return sqs, sqs.create_queue(QueueName=name)["QueueUrl"]


def _token(sqs: Any, queue_url: str) -> str:
    """The task token of the next message on the queue (a long poll: the engine answers it when sent)."""
    [message] = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=10)["Messages"]
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return json.loads(message["Body"])["TaskToken"]


def _wait_task(queue_url: str) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {"QueueUrl": queue_url, "MessageBody": {"Context.$": "$", "TaskToken.$": "$$.Task.Token"}},
        "End": True,
    }


def _events(history: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    return [(e["id"], e["previousEventId"], e["type"]) for e in history]


def test_a_task_failing_in_a_parallel_branch_is_aborted_and_the_catch_sees_null_error(account: Account):
    """AWS's recording (callback/test_callback.snapshot.json,
    test_sqs_failure_in_wait_for_task_tok_no_error_field[SQS_PARALLEL_WAIT_FOR_TASK_TOKEN], April
    2024): SendTaskFailure with neither error nor cause to the one waiting task of a Parallel's
    branch: TaskFailed #8, TaskStateAborted #9 linked to it, ParallelStateFailed #10 linked to the
    TaskFailed too, and the Catch's ResultPath gets {"Error": null, "Cause": null}."""
    sqs, queue_url = _queue(account, "tokens-parallel-failure")
    definition = {
        "StartAt": "ParallelJob",
        "States": {
            "ParallelJob": {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": "SendMessageWithWait", "States": {"SendMessageWithWait": _wait_task(queue_url)}}
                ],
                "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.states_all_error", "Next": "Caught"}],
                "End": True,
            },
            "Caught": {"Type": "Pass", "End": True},
        },
    }
    arn = account.start(account.state_machine(definition), {"Message": "test_message_txt"})
    account.sfn.send_task_failure(taskToken=_token(sqs, queue_url))
    result = wait_for(account.sfn, arn, timeout=30)

    assert result.status == "SUCCEEDED", result.history
    assert _events(result.history)[6:11] == [
        (7, 6, "TaskSubmitted"),
        (8, 7, "TaskFailed"),
        (9, 8, "TaskStateAborted"),
        (10, 8, "ParallelStateFailed"),
        (11, 10, "ParallelStateExited"),
    ]
    assert json.loads(result.history[-1]["executionSucceededEventDetails"]["output"])["states_all_error"] == {
        "Error": None,
        "Cause": None,
    }


def test_a_task_waiting_in_one_branch_is_aborted_when_another_branch_fails(account: Account):
    """The developer guide's Parallel page: "If any branch fails … the entire Parallel state fails,
    and all branches that are still running are stopped". A branch still waiting for its token is
    aborted as AWS records an aborted Task (TaskStateAborted after the branch's last event, as in
    the recording above), and its task writes nothing to the history once the execution ended
    (https://docs.aws.amazon.com/step-functions/latest/dg/state-parallel.html)."""
    sqs, waiting_queue = _queue(account, "tokens-still-waiting")
    _, failing_queue = _queue(account, "tokens-failing")
    definition = {
        "StartAt": "Both",
        "States": {
            "Both": {
                "Type": "Parallel",
                "End": True,
                "Branches": [
                    {"StartAt": "Waiting", "States": {"Waiting": _wait_task(waiting_queue)}},
                    {"StartAt": "Failing", "States": {"Failing": _wait_task(failing_queue)}},
                ],
            }
        },
    }
    arn = account.start(account.state_machine(definition), {})
    waiting_token = _token(sqs, waiting_queue)
    account.sfn.send_task_failure(taskToken=_token(sqs, failing_queue), error="Rejected", cause="by the test")
    result = wait_for(account.sfn, arn, timeout=30)

    assert result.status == "FAILED" and result.history[-1]["type"] == "ExecutionFailed", result.history
    assert result.history[-1]["executionFailedEventDetails"] == {"error": "Rejected", "cause": "by the test"}
    by_id = {e["id"]: e for e in result.history}
    aborted = [e for e in result.history if e["type"] == "TaskStateAborted"]
    assert len(aborted) == 2, _events(result.history)
    linked = {by_id[e["previousEventId"]]["type"] for e in aborted}
    assert linked == {"TaskFailed", "TaskSubmitted"}, _events(result.history)
    assert waiting_token  # never answered: the Parallel's failure ended its wait
    assert len(account.sfn.get_execution_history(executionArn=arn)["events"]) == len(result.history)

"""Running a MockConfigFile.json test case and reading what it left behind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from onceflow.local.stack import LocalStack
from onceflow.ops.executions import ExecutionResult, wait_for
from onceflow.ops.observe import QueuedMessage, drain
from tests.support import dead_letters, execution_input, order, order_rows, state_rows  # noqa: F401 (re-exported)

MOCK_CONFIG_FILE = Path(__file__).resolve().parents[2] / "statemachine" / "test" / "MockConfigFile.json"
ASL_FILE = Path(__file__).resolve().parents[2] / "statemachine" / "pipeline.asl.json"

RECORD = "Record event and business item"
LOOK_UP = "Look up earlier record"
WHAT_IS_LEFT = "What is left to do?"
SAME_PAYLOAD = "Same payload as the stored business item?"
PUBLISH = "Publish notification"
MARK_SENT = "Mark as sent"
DEAD_LETTER = "Send to dead-letter queue"
TO_DEAD_LETTER = "Dead-letter queue is FIFO?"  # the queue-type Choice every dead-letter path passes
TASKS = (RECORD, LOOK_UP, PUBLISH, MARK_SENT, DEAD_LETTER)

EVENT_ID = "order-1"  # the event every mocked lookup describes


def mocked_state_machine_name() -> str:
    """The one StateMachines key of the mock file: the name the local stack gives the state machine."""
    [name] = json.loads(MOCK_CONFIG_FILE.read_text())["StateMachines"]
    return name


def event_body() -> dict[str, Any]:
    return order(EVENT_ID)


def event_input() -> dict[str, Any]:
    return json.loads(execution_input(event_body(), message_id="message-1"))


def run_case(stack: LocalStack, test_case: str, timeout: float = 15) -> ExecutionResult:
    """Start `stateMachineArn#test_case` with the starter's input for the event, as Step Functions Local runs it."""
    sfn = stack.client("stepfunctions")
    arn = sfn.start_execution(
        stateMachineArn=f"{stack.state_machine_arn}#{test_case}",
        name=f"{EVENT_ID}-{test_case}",
        input=json.dumps(event_input()),
    )["executionArn"]
    return wait_for(sfn, arn, timeout=timeout)


def attempts(result: ExecutionResult) -> dict[str, int]:
    """Invocations of each Task state (1 + its retries, summed over every entry into it)."""
    return {state: result.attempts(state) for state in TASKS}


def source_messages(stack: LocalStack) -> list[QueuedMessage]:
    return drain(stack.client("sqs"), stack.source_queue_url)


def seed_earlier_run(stack: LocalStack, status: str, execution_arn: str) -> None:
    """What an earlier execution of the same event wrote before it crashed: both records."""
    given = event_input()
    dynamodb = stack.client("dynamodb")
    dynamodb.put_item(
        TableName=stack.processed_events_table,
        Item={
            "event_id": {"S": EVENT_ID},
            "status": {"S": status},
            "payload_hash": {"S": given["payload_hash"]},
            "received_at": {"S": given["received_at"]},
            "execution_arn": {"S": execution_arn},
            **({"ttl": {"N": str(given["ttl"])}} if status == "sent" else {}),
        },
    )
    dynamodb.put_item(
        TableName=stack.business_table,
        Item={
            "order_id": {"S": EVENT_ID},
            "payload": {"S": json.dumps(given["payload"])},
            "payload_hash": {"S": given["payload_hash"]},
            "execution_arn": {"S": execution_arn},
        },
    )

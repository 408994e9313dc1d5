"""The fault injector produces what AWS produces for a cancelled TransactWriteItems, as the Step
Functions aws-sdk integration reports it: `DynamoDb.TransactionCanceledException` with one
cancellation reason per item, in request order, in the cause text.
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html"""

from __future__ import annotations

import re

import pytest

from onceflow.local.faults import (
    dynamodb_throttling,
    dynamodb_transaction_conflicts,
    dynamodb_transaction_throttled,
)
from onceflow.ops.executions import wait_for
from tests.engine.harness import Account, single_state

CAUSE = re.compile(
    r"^Transaction cancelled, please refer cancellation reasons for specific reasons \[(?P<reasons>[^\]]*)\]"
    r" \(Service: DynamoDb, Status Code: 400, Request ID: [^)]+\)$"
)


def _tables(account: Account) -> tuple[str, str]:
    dynamodb = account.client("dynamodb")
    for name in ("fault-state", "fault-business"):
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    return "fault-state", "fault-business"


def _transaction(account: Account) -> dict:
    state, business = _tables(account)
    return single_state(
        {
            "Type": "Task",
            "Resource": "arn:aws:states:::aws-sdk:dynamodb:transactWriteItems",
            "Parameters": {
                "TransactItems": [
                    {"Put": {"TableName": state, "Item": {"id": {"S": "e-1"}}}},
                    {"Put": {"TableName": business, "Item": {"id": {"S": "o-1"}}}},
                ]
            },
        },
        name="Write both",
    )


def _cancellation_reasons(account: Account, definition: dict) -> list[str]:
    result = account.run(definition)
    assert result.status == "FAILED"
    [failure] = result.task_failures("Write both")
    assert failure["error"] == "DynamoDb.TransactionCanceledException"
    match = CAUSE.match(failure["cause"])
    assert match, failure["cause"]
    return match["reasons"].split(", ")


@pytest.mark.parametrize(
    ("fault", "position", "expected"),
    [
        (dynamodb_transaction_conflicts, 0, ["TransactionConflict", "None"]),
        (dynamodb_transaction_conflicts, 1, ["None", "TransactionConflict"]),
        (dynamodb_transaction_throttled, 0, ["ThrottlingError", "None"]),
        (dynamodb_transaction_throttled, -1, ["None", "ThrottlingError"]),
    ],
)
def test_cancellation_names_the_reason_on_the_item_at_its_position(account, fault, position, expected):
    definition = _transaction(account)
    with fault(times=1, position=position) as injected:
        reasons = _cancellation_reasons(account, definition)
    assert injected.injected == 1
    assert reasons == expected


def test_cancellation_can_target_an_item_by_table(account):
    definition = _transaction(account)
    with dynamodb_transaction_throttled(times=1, table_contains="business") as injected:
        reasons = _cancellation_reasons(account, definition)
    assert injected.injected == 1
    assert reasons == ["None", "ThrottlingError"]


def test_throttling_a_transaction_cancels_it_rather_than_raising_throughput_exceeded(account):
    """AWS: "throttling of an item inside a transaction" is a cancellation with reason ThrottlingError."""
    definition = _transaction(account)
    with dynamodb_throttling(times=1) as injected:
        reasons = _cancellation_reasons(account, definition)
    assert injected.injected == 1
    assert reasons == ["ThrottlingError", "None"]


def test_a_cancelled_transaction_writes_nothing_and_the_next_one_goes_through(account):
    definition = _transaction(account)
    arn = account.state_machine(definition)
    with dynamodb_transaction_conflicts(times=1) as injected:
        first = account.sfn.start_execution(stateMachineArn=arn, name="first", input="{}")["executionArn"]
        assert wait_for(account.sfn, first).status == "FAILED"
        assert account.client("dynamodb").scan(TableName="fault-state")["Items"] == []
        second = account.sfn.start_execution(stateMachineArn=arn, name="second", input="{}")["executionArn"]
        assert wait_for(account.sfn, second).status == "SUCCEEDED"
    assert (injected.calls, injected.injected) == (2, 1)


def test_single_item_throttling_stays_throughput_exceeded(account):
    _tables(account)
    definition = single_state(
        {
            "Type": "Task",
            "Resource": "arn:aws:states:::dynamodb:putItem",
            "Parameters": {"TableName": "fault-state", "Item": {"id": {"S": "e-1"}}},
        },
        name="Write one",
    )
    with dynamodb_throttling(times=1, operation="put_item") as injected:
        result = account.run(definition)
    assert injected.injected == 1
    [failure] = result.task_failures("Write one")
    assert failure["error"] == "DynamoDB.ProvisionedThroughputExceededException"

"""DynamoDB's key and index-key checks on every write path, as DynamoDB answers them.

BEHAVIOURS lists each with the AWS page it follows. The messages are DynamoDB's own, as the public
conformance suites that run against AWS captured them (docs/TESTING.md, "DynamoDB key schemas").
The engine's side is onceflow/engine/dynamodb/key_schema.py.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.engine.behaviours import check_behaviours
from tests.engine.harness import Account, single_state

VIOLATIONS = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.OnlineOps.ViolationDetection.html"
TRANSACT = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html"
QUOTAS = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html"
GET_ITEM = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_GetItem.html"

BEHAVIOURS: dict[str, tuple[str, str]] = {
    "An index key of another type than its definition is refused, naming the index (put, batch, update)": (
        VIOLATIONS,
        "test_an_index_key_of_another_type_is_refused_naming_the_index",
    ),
    "In a transaction it cancels the transaction with a ValidationError reason; nothing is written": (
        TRANSACT,
        "test_a_transaction_writing_a_wrong_index_key_type_is_cancelled_with_a_validation_error",
    ),
    "A Key that is not the table's key attributes with their types does not match the schema": (
        GET_ITEM,
        "test_a_key_of_another_type_does_not_match_the_schema",
    ),
    "Index keys over the key size limits (2048 bytes partition, 1024 sort) are refused": (
        QUOTAS,
        "test_index_keys_over_the_size_limits_are_refused",
    ),
    "The Record step's transaction with a number for pending_since fails as on AWS": (
        TRANSACT,
        "test_a_workflow_transaction_with_a_number_for_a_string_index_key_is_cancelled",
    ),
}

TABLE = "processed-events"
INDEX_MISMATCH = (
    "One or more parameter values were invalid: Type mismatch for Index Key pending_since "
    "Expected: S Actual: N IndexName: pending-since"
)
KEY_MISMATCH = "The provided key element does not match the schema"


def test_every_behaviour_names_an_aws_page_and_a_test():
    check_behaviours(BEHAVIOURS, globals())


def _table(account: Account) -> Any:
    """The shape of Onceflow's processed_events table: key event_id (S), the sparse pending-since index
    on pending_shard (S) and pending_since (S)."""
    dynamodb = account.client("dynamodb")
    dynamodb.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("event_id", "pending_shard", "pending_since")
        ],
        KeySchema=[{"AttributeName": "event_id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "pending-since",
                "KeySchema": [
                    {"AttributeName": "pending_shard", "KeyType": "HASH"},
                    {"AttributeName": "pending_since", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    return dynamodb


def _refused(call: Callable[[], Any]) -> dict[str, Any]:
    with pytest.raises(ClientError) as raised:
        call()
    return raised.value.response


def _pending(event_id: str, since: dict[str, str]) -> dict[str, Any]:
    return {"event_id": {"S": event_id}, "pending_shard": {"S": "03"}, "pending_since": since}


def _stored(dynamodb: Any) -> list[dict[str, Any]]:
    return dynamodb.scan(TableName=TABLE)["Items"]


@pytest.mark.parametrize("path", ["put_item", "batch_write_item", "update_item"])
def test_an_index_key_of_another_type_is_refused_naming_the_index(account: Account, path: str):
    """moto stored the item (put, batch) or named the attribute a table key without the index (update)."""
    dynamodb = _table(account)
    dynamodb.put_item(TableName=TABLE, Item={"event_id": {"S": "e-1"}, "status": {"S": "sent"}})
    calls = {
        "put_item": lambda: dynamodb.put_item(TableName=TABLE, Item=_pending("e-2", {"N": "1767225600"})),
        "batch_write_item": lambda: dynamodb.batch_write_item(
            RequestItems={TABLE: [{"PutRequest": {"Item": _pending("e-2", {"N": "1767225600"})}}]}
        ),
        "update_item": lambda: dynamodb.update_item(
            TableName=TABLE,
            Key={"event_id": {"S": "e-1"}},
            UpdateExpression="SET #s = :pending, pending_since = :since",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":pending": {"S": "pending"}, ":since": {"N": "1767225600"}},
        ),
    }

    error = _refused(calls[path])["Error"]

    assert (error["Code"], error["Message"]) == ("ValidationException", INDEX_MISMATCH)
    assert _stored(dynamodb) == [{"event_id": {"S": "e-1"}, "status": {"S": "sent"}}], "nothing written"


@pytest.mark.parametrize(
    "write",
    [
        {"Put": {"TableName": TABLE, "Item": _pending("e-2", {"N": "1767225600"})}},
        {
            "Update": {
                "TableName": TABLE,
                "Key": {"event_id": {"S": "e-2"}},
                "UpdateExpression": "SET pending_since = :since",
                "ExpressionAttributeValues": {":since": {"N": "1767225600"}},
            }
        },
    ],
    ids=["Put", "Update"],
)
def test_a_transaction_writing_a_wrong_index_key_type_is_cancelled_with_a_validation_error(
    account: Account, write: dict[str, Any]
):
    """TransactWriteItems' `ValidationError` cancellation reason, the message PutItem gives; moto
    committed the Put and answered the Update with a top-level ValidationException."""
    dynamodb = _table(account)
    valid = {"Put": {"TableName": TABLE, "Item": {"event_id": {"S": "e-1"}}}}

    response = _refused(lambda: dynamodb.transact_write_items(TransactItems=[valid, write]))

    assert response["Error"]["Code"] == "TransactionCanceledException"
    assert response["Error"]["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError]"
    )
    assert response["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ValidationError", "Message": INDEX_MISMATCH},
    ]
    assert _stored(dynamodb) == [], "neither item written"


def test_a_key_of_another_type_does_not_match_the_schema(account: Account):
    """GetItem, DeleteItem, UpdateItem and BatchWriteItem refuse it up front; in a transaction an
    Update/Delete/ConditionCheck Key cancels with that message and a Put's table key with PutItem's
    type mismatch (moto accepted GetItem and DeleteItem, named a type mismatch elsewhere, and refused
    the transactions at the top level)."""
    dynamodb = _table(account)
    number_key = {"event_id": {"N": "1"}}
    update = {"UpdateExpression": "SET x = :x", "ExpressionAttributeValues": {":x": {"S": "x"}}}
    refused = [
        lambda: dynamodb.get_item(TableName=TABLE, Key=number_key),
        lambda: dynamodb.delete_item(TableName=TABLE, Key=number_key),
        lambda: dynamodb.update_item(TableName=TABLE, Key=number_key, **update),
        lambda: dynamodb.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": number_key}}]}),
        lambda: dynamodb.batch_write_item(RequestItems={TABLE: [{"DeleteRequest": {"Key": number_key}}]}),
    ]
    for call in refused:
        assert _refused(call)["Error"] == {"Code": "ValidationException", "Message": KEY_MISMATCH}

    writes = {
        "Update": {"TableName": TABLE, "Key": number_key, **update},
        "Delete": {"TableName": TABLE, "Key": number_key},
        "ConditionCheck": {"TableName": TABLE, "Key": number_key, "ConditionExpression": "attribute_not_exists(x)"},
        "Put": {"TableName": TABLE, "Item": number_key},
    }
    reasons = {
        operation: _refused(partial(dynamodb.transact_write_items, TransactItems=[{operation: body}]))[
            "CancellationReasons"
        ]
        for operation, body in writes.items()
    }
    put_mismatch = "One or more parameter values were invalid: Type mismatch for key event_id expected: S actual: N"
    assert reasons == {
        "Update": [{"Code": "ValidationError", "Message": KEY_MISMATCH}],
        "Delete": [{"Code": "ValidationError", "Message": KEY_MISMATCH}],
        "ConditionCheck": [{"Code": "ValidationError", "Message": KEY_MISMATCH}],
        "Put": [{"Code": "ValidationError", "Message": put_mismatch}],
    }


def test_index_keys_over_the_size_limits_are_refused(account: Account):
    """A sort key over 1024 bytes, as PutItem refuses a table's (moto checked only on PutItem)."""
    dynamodb = _table(account)
    too_long = {"S": "x" * 1025}

    put = _refused(lambda: dynamodb.put_item(TableName=TABLE, Item=_pending("e-1", too_long)))
    update = _refused(
        lambda: dynamodb.update_item(
            TableName=TABLE,
            Key={"event_id": {"S": "e-1"}},
            UpdateExpression="SET pending_since = :since",
            ExpressionAttributeValues={":since": too_long},
        )
    )

    assert put["Error"]["Message"] == (
        "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit "
        "of 1024 bytes"
    )
    assert update["Error"]["Message"] == (
        "The update expression attempted to update a secondary index key beyond allowed size limits"
    )
    assert _stored(dynamodb) == []
    dynamodb.put_item(TableName=TABLE, Item=_pending("e-1", {"S": "x" * 1024}))  # at the limit: fits


def test_a_workflow_transaction_with_a_number_for_a_string_index_key_is_cancelled(account: Account):
    """The pipeline's Record step as a team might get it wrong (`N` for pending_since): the aws-sdk task
    fails DynamoDb.TransactionCanceledException naming the ValidationError, so a Catch on it sees
    it; moto wrote both items and the execution succeeded."""
    dynamodb = _table(account)
    record = {
        "Type": "Task",
        "Resource": "arn:aws:states:::aws-sdk:dynamodb:transactWriteItems",
        "Parameters": {
            "TransactItems": [
                {"Put": {"TableName": TABLE, "Item": _pending("e-1", {"N": "1767225600"})}},
            ]
        },
    }

    result = account.run(single_state(record), {})

    assert result.status == "FAILED"
    [failed] = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert failed["error"] == "DynamoDb.TransactionCanceledException"
    assert "[ValidationError]" in failed["cause"]
    assert _stored(dynamodb) == []

"""An UpdateItem applies and is refused as moto's expression machinery applies and refuses it whether
the engine applies a plain SET/REMOVE of top-level attributes directly (the `plain_updates` speed-up)
or not. Compared here request by request against moto's own update_item on two copies of the same
table (the item, the answer or the error, the stream), and through the API on the embedded engine
(`ONCEFLOW_SPEEDUPS_OFF=plain_updates` runs this file the other way).

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models import DynamoDBBackend

from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.engine.speedups import plain_updates

MOTO_UPDATE = DynamoDBBackend.__dict__["update_item"]  # this module is imported before any engine starts
KEY_ONLY = {"pk": {"S": "k"}}
STORED = {
    "pk": {"S": "k"},
    "status": {"S": "pending"},
    "payload_hash": {"S": "h1"},
    "pending_shard": {"S": "3"},
    "pending_since": {"S": "2026-01-01T00:00:00Z"},
    "tags": {"SS": ["a", "b"]},
    "n": {"N": "5"},
}
MARK_AS_SENT = {
    "update_expression": "SET #status = :sent, sent_at = :now, sent_by = :execution, #ttl = :ttl "
    "REMOVE pending_since, pending_shard",
    "expression_attribute_names": {"#status": "status", "#ttl": "ttl"},
    "expression_attribute_values": {
        ":sent": {"S": "sent"},
        ":now": {"S": "2026-01-01T00:00:01Z"},
        ":execution": {"S": "arn:aws:states:us-east-1:123456789012:execution:m:e"},
        ":payload_hash": {"S": "h1"},
        ":ttl": {"N": "1790000000"},
    },
    "condition_expression": "attribute_exists(pk) AND payload_hash = :payload_hash",
}


@dataclass
class Case:
    name: str
    request: dict[str, Any]
    direct: bool  # applied by the speed-up itself, not handed to moto's update_item
    item: dict[str, Any] | None = field(default_factory=lambda: copy.deepcopy(STORED))
    table: str = "plain"


def _values(**values: dict[str, Any]) -> dict[str, Any]:
    return {f":{name}": value for name, value in values.items()}


def _update(expression: str, names: dict[str, str] | None = None, values: dict[str, Any] | None = None, **more: Any):
    return {
        "update_expression": expression,
        "expression_attribute_names": names or {},
        "expression_attribute_values": values or {},
        **more,
    }


CASES = [
    Case("the pipeline's mark as sent", MARK_AS_SENT, direct=True),
    Case(
        "mark as sent whose condition fails",
        {
            **MARK_AS_SENT,
            "expression_attribute_values": {
                **MARK_AS_SENT["expression_attribute_values"],
                ":payload_hash": {"S": "other"},
            },
        },
        direct=True,
    ),
    Case(
        "a failed condition asking for the old item",
        {
            **MARK_AS_SENT,
            "condition_expression": "attribute_not_exists(pk)",
            "expression_attribute_values": {
                k: v for k, v in MARK_AS_SENT["expression_attribute_values"].items() if k != ":payload_hash"
            },
            "return_values_on_condition_check_failure": "ALL_OLD",
        },
        direct=True,
    ),
    Case("mark as sent on a stream's table", MARK_AS_SENT, direct=True, table="streamed"),
    Case(
        "a range key table", _update("SET a = :a REMOVE b", values=_values(a={"S": "x"})), direct=True, table="ranged"
    ),
    Case(
        "REMOVE before SET",
        _update("REMOVE n, gone SET a = :a, #b = :b", {"#b": "b"}, _values(a={"N": "1"}, b={"BOOL": True})),
        direct=True,
    ),
    Case(
        "every kind of value",
        _update(
            "SET m = :m, l = :l, ss = :ss, ns = :ns, bs = :bs, bin = :bin, nul = :nul, e = :e",
            values=_values(
                m={"M": {"inner": {"L": [{"S": "x"}, {"N": "2"}]}}},
                l={"L": [{"M": {"a": {"S": "b"}}}]},
                ss={"SS": ["x", "y"]},
                ns={"NS": ["1", "2"]},
                bs={"BS": [b"\x01"]},
                bin={"B": b"\x00\x01"},
                nul={"NULL": True},
                e={"S": ""},
            ),
        ),
        direct=True,
    ),
    Case("one value set twice", _update("SET a = :v, b = :v", values=_values(v={"L": [{"S": "x"}]})), direct=True),
    Case("no condition, the index keys removed", _update("REMOVE pending_shard, pending_since"), direct=True),
    Case(
        "an existing attribute replaced", _update("SET #s = :s", {"#s": "status"}, _values(s={"N": "7"})), direct=True
    ),
    Case(
        "an update past the item size limit",
        _update("SET small = :small, big = :big", values=_values(small={"S": "x"}, big={"S": "y" * 300_000})),
        direct=True,
        item={**copy.deepcopy(STORED), "large": {"S": "z" * 200_000}},
    ),
    # Handed to moto's update_item: the item is missing, or something in the request may be refused.
    Case("a missing item (created)", MARK_AS_SENT | {"condition_expression": None}, direct=False, item=None),
    Case("a missing item whose condition fails", MARK_AS_SENT, direct=False, item=None),
    Case("an undefined value", _update("SET a = :missing", values=_values(a={"S": "x"})), direct=False),
    Case("an undefined name", _update("SET #missing = :a", values=_values(a={"S": "x"})), direct=False),
    Case("a reserved word", _update("SET #s = :a, name = :a", {"#s": "status"}, _values(a={"S": "x"})), direct=False),
    Case("a reserved word removed", _update("REMOVE size"), direct=False),
    Case("one attribute twice", _update("SET a = :a, #a = :a", {"#a": "a"}, _values(a={"S": "x"})), direct=False),
    Case("set and remove of one attribute", _update("SET a = :a REMOVE a", values=_values(a={"S": "x"})), direct=False),
    Case("the key attribute set", _update("SET #k = :a", {"#k": "pk"}, _values(a={"S": "x"})), direct=False),
    Case("the key attribute removed", _update("REMOVE pk"), direct=False),
    Case("an index key set", _update("SET pending_shard = :a", values=_values(a={"S": "4"})), direct=False),
    Case(
        "an index key set to an empty string",
        _update("SET #p = :a", {"#p": "pending_shard"}, _values(a={"S": ""})),
        direct=False,
    ),
    Case(
        "an index key of the wrong type", _update("SET pending_since = :a", values=_values(a={"N": "4"})), direct=False
    ),
    Case("a function", _update("SET a = if_not_exists(a, :a)", values=_values(a={"S": "x"})), direct=False),
    Case("arithmetic", _update("SET n = n + :one", values=_values(one={"N": "1"})), direct=False),
    Case(
        "arithmetic on a missing attribute",
        _update("SET n = gone + :one", values=_values(one={"N": "1"})),
        direct=False,
    ),
    Case("a nested path", _update("SET m.inner = :a", values=_values(a={"S": "x"})), direct=False),
    Case("a list element", _update("REMOVE l[0]"), direct=False),
    Case("ADD", _update("ADD n :one", values=_values(one={"N": "1"})), direct=False),
    Case("DELETE", _update("DELETE tags :t", values=_values(t={"SS": ["a"]})), direct=False),
    Case("two SET clauses", _update("SET a = :a SET b = :a", values=_values(a={"S": "x"})), direct=False),
    Case("a syntax error", _update("SET a = ", values=_values(a={"S": "x"})), direct=False),
    Case(
        "Expected instead of a condition",
        _update("SET a = :a", values=_values(a={"S": "x"}), expected={"status": {"Value": {"S": "pending"}}}),
        direct=False,
    ),
    Case(
        "AttributeUpdates",
        {
            "update_expression": "",
            "expression_attribute_names": {},
            "expression_attribute_values": {},
            "attribute_updates": {"a": {"Action": "PUT", "Value": {"S": "x"}}},
        },
        direct=False,
    ),
    Case("a condition that does not parse", MARK_AS_SENT | {"condition_expression": "attribute_exists("}, direct=False),
    Case(
        "a key without the range key", _update("SET a = :a", values=_values(a={"S": "x"})), direct=False, table="ranged"
    ),
]


def _backend() -> DynamoDBBackend:
    backend = DynamoDBBackend(REGION, ACCOUNT_ID)
    strings = lambda *names: [{"AttributeName": n, "AttributeType": "S"} for n in names]  # noqa: E731
    index = {
        "IndexName": "pending-since",
        "KeySchema": [
            {"AttributeName": "pending_shard", "KeyType": "HASH"},
            {"AttributeName": "pending_since", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    }
    common = {
        "throughput": None,
        "indexes": None,
        "billing_mode": "PAY_PER_REQUEST",
        "sse_specification": None,
        "tags": [],
        "deletion_protection_enabled": None,
        "warm_throughput": None,
    }
    backend.create_table(
        "plain",
        schema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        attr=strings("pk", "pending_shard", "pending_since"),
        global_indexes=[index],
        streams=None,
        **common,
    )
    backend.create_table(
        "streamed",
        schema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        attr=strings("pk"),
        global_indexes=None,
        streams={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        **common,
    )
    backend.create_table(
        "ranged",
        schema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        attr=strings("pk", "sk"),
        global_indexes=None,
        streams=None,
        **common,
    )
    return backend


def _key(case: Case) -> dict[str, Any]:
    return {**KEY_ONLY, "sk": {"S": "s"}} if case.table == "ranged" and case.direct else KEY_ONLY


def _outcome(update: Any, case: Case) -> dict[str, Any]:
    backend = _backend()
    if case.item is not None:
        extra = {"sk": {"S": "s"}} if case.table == "ranged" else {}
        backend.put_item(case.table, {**case.item, **extra})
    table = backend.get_table(case.table)
    table.stream_shard and table.stream_shard.items.clear()
    request = copy.deepcopy(case.request)
    try:
        answer: Any = update(backend, case.table, _key(case), **request).to_json()
    except Exception as error:  # the refusal itself is what is compared
        answer = (type(error).__name__, str(error), getattr(error, "item", None))
    records = [
        # The time, and the record's size, which counts the time's digits (a float's text, of varying length).
        {k: v for k, v in record.record["dynamodb"].items() if k not in {"ApproximateCreationDateTime", "SizeBytes"}}
        | {"eventName": record.record["eventName"]}
        for record in (table.stream_shard.items if table.stream_shard else [])
    ]
    return {"answer": answer, "items": [item.to_json() for item in table.all_items()], "stream": records}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_an_update_applies_as_moto_s_update_item_applies_it(case):
    handed: list[str] = []

    def moto_update(*args: Any, **kwargs: Any) -> Any:
        handed.append(case.name)
        return MOTO_UPDATE(*args, **kwargs)

    [(_, _, speeded)] = plain_updates.patches([(DynamoDBBackend, "update_item", moto_update)])
    expected = _outcome(MOTO_UPDATE, case)
    handed.clear()
    assert _outcome(speeded, case) == expected
    assert handed == ([] if case.direct else [case.name]), "applied directly" if case.direct else "handed to moto"


def test_the_cases_cover_answers_and_refusals_of_both_paths():
    """The comparison above is worth something only if both paths both applied and refused."""
    outcomes = {case.name: (case.direct, isinstance(_outcome(MOTO_UPDATE, case)["answer"], tuple)) for case in CASES}
    assert {(direct, refused) for direct, refused in outcomes.values()} == {
        (True, False),
        (True, True),
        (False, False),
        (False, True),
    }
    assert outcomes["an update past the item size limit"] == (True, True)
    assert outcomes["mark as sent on a stream's table"] == (True, False)


def test_a_plan_is_made_only_for_the_plain_form():
    assert plain_updates.plan_of("SET #s = :s, a = :a REMOVE b") == (
        plain_updates.Action(plain_updates.Target("#s", placeholder=True), ":s"),
        plain_updates.Action(plain_updates.Target("a", placeholder=False), ":a"),
        plain_updates.Action(plain_updates.Target("b", placeholder=False), None),
    )
    for text in (
        "SET a = b",
        "SET a = :a + :b",
        "SET a.b = :a",
        "ADD a :a",
        "SET a = :a SET b = :b",
        "SET",
        "REMOVE name",
    ):
        assert plain_updates.plan_of(text) is None, text


# Through the API, on the embedded engine, with the speed-up as the suite runs it (on unless switched off).


@pytest.fixture
def table(stack) -> tuple[Any, str]:
    return stack.client("dynamodb"), stack.processed_events_table


def _pending(dynamodb: Any, table: str, shard: str) -> list[str]:
    """The events of one shard of the pipeline's sparse pending index."""
    found = dynamodb.query(
        TableName=table,
        IndexName="pending-since",
        KeyConditionExpression="pending_shard = :shard",
        ExpressionAttributeValues={":shard": {"S": shard}},
    )["Items"]
    return [row["event_id"]["S"] for row in found]


def test_marking_an_event_sent_takes_it_out_of_the_pending_index(table):
    """The direct update keeps the index_query speed-up's index of the sparse pending index: the item
    leaves it when its index keys are removed."""
    dynamodb, name = table
    item = {k: v for k, v in STORED.items() if k not in {"pk", "tags", "n"}} | {"event_id": {"S": "plain-1"}}
    dynamodb.put_item(TableName=name, Item=item)

    assert "plain-1" in _pending(dynamodb, name, "3")
    request = {k: v for k, v in MARK_AS_SENT.items() if k != "condition_expression"}
    dynamodb.update_item(
        TableName=name,
        Key={"event_id": {"S": "plain-1"}},
        UpdateExpression=request["update_expression"],
        ConditionExpression="attribute_exists(event_id) AND payload_hash = :payload_hash",
        ExpressionAttributeNames=request["expression_attribute_names"],
        ExpressionAttributeValues=request["expression_attribute_values"],
    )
    assert "plain-1" not in _pending(dynamodb, name, "3")
    stored = dynamodb.get_item(TableName=name, Key={"event_id": {"S": "plain-1"}})["Item"]
    assert stored["status"] == {"S": "sent"} and "pending_shard" not in stored and stored["ttl"] == {"N": "1790000000"}


def test_a_failed_condition_is_refused_and_changes_nothing(table):
    dynamodb, name = table
    dynamodb.put_item(TableName=name, Item={"event_id": {"S": "plain-2"}, "payload_hash": {"S": "h1"}})
    with pytest.raises(ClientError) as refused:
        dynamodb.update_item(
            TableName=name,
            Key={"event_id": {"S": "plain-2"}},
            UpdateExpression="SET #s = :sent",
            ConditionExpression="payload_hash = :h",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":sent": {"S": "sent"}, ":h": {"S": "other"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert refused.value.response["Item"] == {"event_id": {"S": "plain-2"}, "payload_hash": {"S": "h1"}}
    stored = dynamodb.get_item(TableName=name, Key={"event_id": {"S": "plain-2"}})["Item"]
    assert stored == {"event_id": {"S": "plain-2"}, "payload_hash": {"S": "h1"}}


def test_an_update_that_gives_an_item_its_index_keys_puts_it_in_the_pending_index(table):
    """An update of index keys goes to moto's path, and the index_query speed-up still records the
    write (it wraps whatever update_item the speed-ups before it leave)."""
    dynamodb, name = table
    dynamodb.put_item(TableName=name, Item={"event_id": {"S": "plain-3"}, "status": {"S": "sent"}})
    assert _pending(dynamodb, name, "7") == []  # the index is built at its first query, before the update
    dynamodb.update_item(
        TableName=name,
        Key={"event_id": {"S": "plain-3"}},
        UpdateExpression="SET pending_shard = :shard, pending_since = :since",
        ExpressionAttributeValues={":shard": {"S": "7"}, ":since": {"S": "2026-01-01T00:00:00Z"}},
    )
    assert _pending(dynamodb, name, "7") == ["plain-3"]


@pytest.mark.embedded_only(reason="counts the embedded engine's own validator runs")
def test_the_engine_applies_a_plain_update_without_moto_s_validator_when_switched_on(table, embedded_aws, monkeypatch):
    """The speed-up is in the engine's chain of UpdateItem patches (not overwritten by a later one):
    a plain update runs no UpdateExpressionValidator with it on, one with it off; a function always does."""
    from moto.dynamodb import models as dynamodb_models

    dynamodb, name = table
    runs: list[str] = []

    class Counted(dynamodb_models.UpdateExpressionValidator):
        def validate(self) -> Any:
            runs.append("validated")
            return super().validate()

    monkeypatch.setattr(dynamodb_models, "UpdateExpressionValidator", Counted)
    dynamodb.put_item(TableName=name, Item={"event_id": {"S": "plain-4"}, "status": {"S": "pending"}})

    def update(expression: str) -> int:
        runs.clear()
        dynamodb.update_item(
            TableName=name,
            Key={"event_id": {"S": "plain-4"}},
            UpdateExpression=expression,
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":sent": {"S": "sent"}},
        )
        return len(runs)

    switched_on = plain_updates.PLAIN_UPDATES in embedded_aws.speedups
    assert update("SET #s = :sent REMOVE pending_shard") == (0 if switched_on else 1)
    assert update("SET #s = if_not_exists(#s, :sent)") == 1


def test_a_cancelled_transaction_leaves_a_plain_update_s_item_as_it_was(table):
    """A transaction's plain Update applied before another of its items fails is rolled back with it
    (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html:
    all or nothing)."""
    dynamodb, name = table
    before = {"event_id": {"S": "plain-5"}, "status": {"S": "pending"}, "pending_shard": {"S": "3"}}
    dynamodb.put_item(TableName=name, Item=before)
    with pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": name,
                        "Key": {"event_id": {"S": "plain-5"}},
                        "UpdateExpression": "SET #s = :sent REMOVE pending_shard",
                        "ConditionExpression": "attribute_exists(event_id)",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {":sent": {"S": "sent"}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": name,
                        "Key": {"event_id": {"S": "plain-missing"}},
                        "ConditionExpression": "attribute_exists(event_id)",
                    }
                },
            ]
        )
    error = cancelled.value.response
    assert error["Error"]["Code"] == "TransactionCanceledException"
    assert [reason["Code"] for reason in error["CancellationReasons"]] == ["None", "ConditionalCheckFailed"]
    assert dynamodb.get_item(TableName=name, Key={"event_id": {"S": "plain-5"}})["Item"] == before

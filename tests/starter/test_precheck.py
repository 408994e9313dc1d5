"""The already-sent lookup on its own, against the stack's real state table: which events it lets
the starter acknowledge without an execution (only `sent` with the same payload_hash), in
BatchGetItem's pages of 100 keys (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html:
at most 100 items, no duplicate keys in one request)."""

from __future__ import annotations

from starter.messages import PipelineEvent
from starter.precheck import already_sent


def event(event_id: str, payload_hash: str = "h") -> PipelineEvent:
    return PipelineEvent(event_id=event_id, payload_hash=payload_hash, execution_input="{}")


def put_state(dynamodb, table: str, event_id: str, status: str, payload_hash: str = "h") -> None:
    dynamodb.put_item(
        TableName=table,
        Item={"event_id": {"S": event_id}, "status": {"S": status}, "payload_hash": {"S": payload_hash}},
    )


def test_only_sent_with_the_same_payload_is_already_sent(stack):
    dynamodb, table = stack.client("dynamodb"), stack.processed_events_table
    put_state(dynamodb, table, "sent-same", "sent")
    put_state(dynamodb, table, "sent-other", "sent", payload_hash="other")
    put_state(dynamodb, table, "pending", "pending")
    put_state(dynamodb, table, "no-status", "sent")
    dynamodb.update_item(
        TableName=table,
        Key={"event_id": {"S": "no-status"}},
        UpdateExpression="REMOVE #s",
        ExpressionAttributeNames={"#s": "status"},
    )

    found = already_sent(
        dynamodb, table, [event(i) for i in ("sent-same", "sent-other", "pending", "no-status", "unknown")]
    )

    assert found == {("sent-same", "h")}


def test_more_than_a_page_of_keys_and_repeated_ids(stack):
    dynamodb, table = stack.client("dynamodb"), stack.processed_events_table
    for n in range(0, 150, 3):
        put_state(dynamodb, table, f"e-{n}", "sent")
    events = [event(f"e-{n}") for n in range(150)] + [event("e-0"), event("e-3")]  # a batch may repeat an id

    assert already_sent(dynamodb, table, events) == {(f"e-{n}", "h") for n in range(0, 150, 3)}


def test_one_id_twice_in_a_batch_with_two_payloads_only_the_matching_one_is_done(stack):
    dynamodb, table = stack.client("dynamodb"), stack.processed_events_table
    put_state(dynamodb, table, "e-1", "sent", payload_hash="first")

    found = already_sent(dynamodb, table, [event("e-1", "first"), event("e-1", "second")])

    assert found == {("e-1", "first")}

"""Parsing, validation, hashing and the execution input, as pure functions: no AWS."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onceflow_common.pending import shard_for
from starter.limits import MAX_STATE_BYTES, WORKFLOW_STATE_OVERHEAD_BYTES
from starter.messages import MAX_EXECUTION_INPUT_BYTES, InvalidMessage, parse_record, payload_hash
from tests.starter.helpers import settings as starter_settings
from tests.support import order, sqs_record

SENT_MS = 1_790_000_000_000


def parse(body, message_id: str = "message-1", **record_changes):
    record = sqs_record(body, message_id=message_id, sent_timestamp=SENT_MS)
    record.update(record_changes)
    return parse_record(record, starter_settings())


def test_valid_order_becomes_execution_input():
    event = parse(order("order-1"))
    document = json.loads(event.execution_input)
    assert event.event_id == document["event_id"] == "order-1"
    assert document["payload"] == order("order-1")
    assert document["payload_hash"] == event.payload_hash == payload_hash(order("order-1"))
    assert document["received_at"] == "2026-09-21T14:13:20.000Z"  # the SQS send time of SENT_MS
    assert document["ttl"] == SENT_MS // 1000 + 35 * 86_400
    assert document["message"] == {"id": "message-1", "body": json.dumps(order("order-1")), "redrive_count": "0"}
    assert document["pending_shard"] == shard_for("order-1")
    assert set(document) == {"event_id", "payload_hash", "payload", "received_at", "ttl", "pending_shard", "message"}


def test_same_record_twice_gives_identical_input():
    record = sqs_record(order("order-1"), message_id="m-1", sent_timestamp=SENT_MS)
    redelivered = {**record, "receiptHandle": "another-handle", "attributes": {**record["attributes"]}}
    redelivered["attributes"]["ApproximateReceiveCount"] = "2"
    redelivered["attributes"]["ApproximateFirstReceiveTimestamp"] = str(SENT_MS + 60_000)
    first, second = parse_record(record, starter_settings()), parse_record(redelivered, starter_settings())
    assert first.execution_input == second.execution_input


def test_send_time_falls_back_to_first_receive_then_to_now():
    record = sqs_record(order(), sent_timestamp=SENT_MS)
    del record["attributes"]["SentTimestamp"]
    fallback = json.loads(parse_record(record, starter_settings()).execution_input)
    assert fallback["received_at"] == "2026-09-21T14:13:20.005Z"
    record["attributes"] = {}
    now = json.loads(parse_record(record, starter_settings()).execution_input)
    assert now["ttl"] > time.time() + 34 * 86_400  # never a ttl in the past, which TTL would delete


def test_payload_hash_ignores_key_order_and_whitespace():
    body = order("order-1", note={"b": [1, {"y": 2, "x": 1}], "a": "ä"})
    shuffled = dict(reversed(list(body.items())))
    shuffled["note"] = {"a": "ä", "b": [1, {"x": 1, "y": 2}]}
    spaced = json.dumps(shuffled, indent=4, ensure_ascii=True)
    assert parse(body).payload_hash == parse(spaced).payload_hash == payload_hash(shuffled)
    assert parse(body).payload_hash != parse(order("order-1", amount=43)).payload_hash


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=10,
)


def _shuffled(value, rng: random.Random):
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffled(child, rng) for key, child in items}
    if isinstance(value, list):
        return [_shuffled(child, rng) for child in value]
    return value


@settings(max_examples=60, deadline=None)
@given(document=st.dictionaries(st.text(max_size=8), json_values, max_size=6), seed=st.integers())
def test_payload_hash_is_key_order_independent_for_any_document(document, seed):
    assert payload_hash(_shuffled(document, random.Random(seed))) == payload_hash(document)


def test_distinct_messages_with_one_event_id_share_the_hash_not_the_input():
    first, second = parse(order("order-1"), "m-1"), parse(order("order-1"), "m-2")
    assert first.payload_hash == second.payload_hash
    assert first.execution_input != second.execution_input  # the message id is part of it


HUGE_NOTE = "x" * (MAX_EXECUTION_INPUT_BYTES // 2)


@pytest.mark.parametrize(
    ("body", "field", "rule", "event_id"),
    [
        pytest.param("not json {", "body", "json", None, id="not-json"),
        pytest.param("[1, 2]", "body", "json_object", None, id="json-array"),
        pytest.param('"order-1"', "body", "json_object", None, id="json-string"),
        pytest.param(json.dumps({"customer_id": "c"}), "order_id", "event_id", None, id="no-event-id"),
        pytest.param(json.dumps(order("")), "order_id", "event_id", None, id="empty-event-id"),
        pytest.param(json.dumps(order(7)), "order_id", "event_id", None, id="numeric-event-id"),
        pytest.param(json.dumps(order("o-1", amount=-1)), "amount", "greater_than", "o-1", id="negative-amount"),
        pytest.param(json.dumps(order("o-1", amount="lots")), "amount", "decimal_parsing", "o-1", id="amount-text"),
        pytest.param(
            json.dumps({**order("o-1"), "currency": "euro"}),
            "currency",
            "string_pattern_mismatch",
            "o-1",
            id="bad-currency",
        ),
        pytest.param(
            json.dumps({**order("o-1"), "customer_id": None}), "customer_id", "string_type", "o-1", id="null-customer"
        ),
        pytest.param(json.dumps(order("o-1")).replace("42.5", "NaN"), "body", "json", None, id="nan"),
        pytest.param('{"order_id": "o-\\ud800"}', "body", "json", None, id="unpaired-surrogate"),
        pytest.param("[" * 100_000 + "]" * 100_000, "body", "json", None, id="deeply-nested"),
        pytest.param('{"order_id": "o", "n": ' + "9" * 5000 + "}", "body", "json", None, id="too-many-digits"),
        pytest.param(json.dumps(order("ü" * 1100)), "order_id", "event_id_length", None, id="event-id-over-2048-bytes"),
        pytest.param(
            json.dumps(order("o-1", note=HUGE_NOTE)), "body", "max_state_size", "o-1", id="input-over-the-state-limit"
        ),
    ],
)
def test_poison_message_names_message_field_and_rule(body, field, rule, event_id):
    with pytest.raises(InvalidMessage) as raised:
        parse(body, message_id="poison-1")
    invalid = raised.value
    assert (invalid.message_id, invalid.field, invalid.rule, invalid.event_id) == ("poison-1", field, rule, event_id)
    assert f"message poison-1: field '{field}' breaks rule '{rule}'" in str(invalid)


def test_body_under_the_sqs_limit_can_still_exceed_the_execution_input_limit():
    # The input carries the payload and the original body: about twice the body's size.
    body = json.dumps(order("o-1", note="x" * 140_000))
    assert len(body) < 262_144
    with pytest.raises(InvalidMessage, match="max_state_size"):
        parse(body)


@pytest.mark.parametrize(
    ("number_text", "field", "rule"),
    [
        # Python reads 1e400 as inf and would write it as Infinity, which AWS rejects at StartExecution.
        pytest.param("1e400", "amount", "finite_number", id="1e400"),
        pytest.param("-1e400", "amount", "finite_number", id="minus-1e400"),
        # A field no model validates (Order allows extra fields): only the number check sees it.
        pytest.param("1e400", "note", "finite_number", id="1e400-in-an-unvalidated-field"),
        pytest.param("1" * 39, "amount", "dynamodb_number", id="integer-of-39-significant-digits"),
        pytest.param("1e200", "amount", "dynamodb_number", id="over-dynamodb-magnitude"),
        pytest.param("1e-200", "amount", "dynamodb_number", id="under-dynamodb-magnitude"),
    ],
)
def test_numbers_aws_cannot_carry_are_rejected_with_their_field(number_text, field, rule):
    body = json.dumps(order("o-1", note=0.25)).replace("42.5" if field == "amount" else "0.25", number_text)
    with pytest.raises(InvalidMessage) as raised:
        parse(body, message_id="m-n")
    assert (raised.value.field, raised.value.rule, raised.value.event_id) == (field, rule, "o-1")


def test_a_bad_number_deep_inside_is_named_by_its_path():
    body = json.dumps(order("o-1", lines=[{"qty": 1}, {"qty": 2, "odd key": [0, 1]}])).replace("[0, 1]", "[0, 1e999]")
    with pytest.raises(InvalidMessage) as raised:
        parse(body)
    assert (raised.value.field, raised.value.rule) == ('lines[1]."odd key"[1]', "finite_number")


@pytest.mark.parametrize(
    "number_text", ["9" * 38, "-" + "9" * 38, "0", "0.0", "1e-130", "9.99e125", "123456789012345678901234567890"]
)
def test_numbers_within_the_limits_pass(number_text):
    body = json.dumps(order("o-1", n=0)).replace('"n": 0', f'"n": {number_text}')
    assert json.loads(parse(body).execution_input)["payload"]["n"] == json.loads(number_text)


def test_input_bound_leaves_room_for_what_the_workflow_adds():
    assert MAX_EXECUTION_INPUT_BYTES == MAX_STATE_BYTES - WORKFLOW_STATE_OVERHEAD_BYTES == 262_144 - 8_192


@pytest.mark.parametrize("size_kb", [60, 100])
def test_bodies_that_fit_the_largest_state_are_accepted(size_kb):
    body = json.dumps(order("o-big", note="x" * (size_kb * 1000)))
    assert len(parse(body).execution_input.encode()) <= MAX_EXECUTION_INPUT_BYTES


def test_a_200_kb_body_cannot_fit_and_is_rejected():
    with pytest.raises(InvalidMessage) as raised:
        parse(json.dumps(order("o-big", note="x" * 200_000)))
    assert (raised.value.field, raised.value.rule, raised.value.event_id) == ("body", "max_state_size", "o-big")


def test_the_bound_is_exact_to_the_byte():
    base = json.dumps(order("o-edge", note=""))
    fixed = len(parse(base).execution_input.encode())
    fits = (MAX_EXECUTION_INPUT_BYTES - fixed) // 2  # the note is carried twice
    assert (
        len(parse(json.dumps(order("o-edge", note="x" * fits))).execution_input.encode()) <= MAX_EXECUTION_INPUT_BYTES
    )
    with pytest.raises(InvalidMessage, match="max_state_size"):
        parse(json.dumps(order("o-edge", note="x" * (fits + 1))))


def test_a_redriven_record_carries_its_redrive_count_into_the_input():
    """The workflow's dead letter writes `message.redrive_count` back as `onceflow_redrive_count`."""
    record = sqs_record(order("order-1"), message_id="m-1")
    record["messageAttributes"] = {"onceflow_redrive_count": {"stringValue": "3", "dataType": "Number"}}
    assert json.loads(parse_record(record, starter_settings()).execution_input)["message"]["redrive_count"] == "3"
    record["messageAttributes"]["onceflow_redrive_count"]["stringValue"] = "not a count"
    assert json.loads(parse_record(record, starter_settings()).execution_input)["message"]["redrive_count"] == "0"

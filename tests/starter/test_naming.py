"""Execution names: at most 80 characters, a charset Step Functions accepts (also with logging
on), deterministic, readable event_id prefix, distinct per delivery. Pure: no AWS."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from starter.naming import MAX_NAME_LENGTH, execution_name

# What Step Functions accepts for executions of a state machine that logs to CloudWatch Logs.
LOGGABLE_NAME = re.compile(r"^[0-9A-Za-z_-]{1,80}$")
MESSAGE_ID = "059f36b4-87a3-44ab-83d2-661975830a7d"


def test_name_is_readable_prefix_then_digest():
    name = execution_name("order-1", MESSAGE_ID)
    assert re.fullmatch(r"order-1-[0-9a-f]{24}", name)


def test_same_delivery_same_name():
    assert execution_name("order-1", MESSAGE_ID) == execution_name("order-1", MESSAGE_ID)


def test_resend_with_new_message_id_gets_a_new_name():
    assert execution_name("order-1", MESSAGE_ID) != execution_name("order-1", "another-message-id")


def test_ids_sharing_the_readable_prefix_get_different_names():
    long_prefix = "x" * 60
    first, second = execution_name(long_prefix + "a", MESSAGE_ID), execution_name(long_prefix + "b", MESSAGE_ID)
    assert first != second
    assert first.split("-")[0] == second.split("-")[0] == "x" * 48


def test_very_long_event_id_is_cut_to_80_characters():
    name = execution_name("order/" + "9" * 5000, MESSAGE_ID)
    assert len(name) <= MAX_NAME_LENGTH
    assert LOGGABLE_NAME.match(name)
    assert name.startswith("order_999")


def test_unicode_and_forbidden_characters_are_replaced():
    name = execution_name("bestellung: Müller/2024 #7 {ä}", MESSAGE_ID)
    assert LOGGABLE_NAME.match(name)
    assert name.startswith("bestellung_M_ller_2024_7-")


def test_event_id_without_any_usable_character_still_gets_a_name():
    name = execution_name("注文", MESSAGE_ID)
    assert re.fullmatch(r"event-[0-9a-f]{24}", name)
    assert name != execution_name("請求", MESSAGE_ID)  # the digest still tells them apart


def test_separator_inside_ids_cannot_make_two_deliveries_collide():
    # A naive "event_id\nmessage_id" digest would give these the same name.
    prefix = "p" * 48
    assert execution_name(prefix + "\nb", "m") != execution_name(prefix, "b\nm")


@settings(max_examples=300, deadline=None)
@given(event_id=st.text(min_size=1, max_size=300), message_id=st.uuids().map(str))
def test_any_event_id_gives_a_valid_deterministic_name(event_id, message_id):
    name = execution_name(event_id, message_id)
    assert len(name) <= MAX_NAME_LENGTH
    assert LOGGABLE_NAME.match(name)
    assert name == execution_name(event_id, message_id)
    readable = name.rsplit("-", 1)[0]
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", event_id)
    assert readable == "event" or cleaned.lstrip("_-").startswith(readable)  # a readable part of the id


@settings(max_examples=100, deadline=None)
@given(
    event_id=st.text(min_size=1, max_size=100), ids=st.lists(st.uuids().map(str), min_size=2, max_size=5, unique=True)
)
def test_distinct_message_ids_give_distinct_names(event_id, ids):
    assert len({execution_name(event_id, message_id) for message_id in ids}) == len(ids)

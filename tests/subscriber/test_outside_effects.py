"""The recipe for effects outside DynamoDB (onceflow_subscriber/outside.py): Powertools'
idempotency keyed by event_id, on the embedded DynamoDB. Each test asserts one line of what the
module states it guarantees, including the window where it does not: a crash between the effect
and its COMPLETED record calls the effect again once the INPROGRESS record has expired.

Powertools' documented behaviour: https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/
("Handling exceptions", "Lambda timeouts", "IdempotencyAlreadyInProgressError").
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)

from onceflow_subscriber import Notification
from onceflow_subscriber.outside import OncePerEvent


@dataclass
class _Context:
    """The part of the Lambda context Powertools reads: the time left in this invocation."""

    remaining_millis: int

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis


@pytest.fixture
def persistence(subscriber_stack) -> DynamoDBPersistenceLayer:
    """A table as Powertools documents it: key `id`, TTL on `expiration`."""
    dynamodb = subscriber_stack.client("dynamodb")
    name = f"idempotency-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return DynamoDBPersistenceLayer(table_name=name, boto3_client=dynamodb)


def _once(persistence: DynamoDBPersistenceLayer, remaining_millis: int = 30_000) -> OncePerEvent:
    once = OncePerEvent(persistence)
    once.register_lambda_context(_Context(remaining_millis))
    return once


def _notification(event_id: str = "order-1", payload_hash: str = "h1", message_id: str = "m-1") -> Notification:
    return Notification(event_id, payload_hash, {"order_id": event_id}, message_id, "{}")


def test_a_duplicate_within_the_window_does_not_call_the_effect_again(persistence):
    once, calls = _once(persistence), []

    @once
    def post(notification: Notification) -> dict:
        calls.append(notification.message_id)
        return {"posted": notification.event_id}

    assert post(_notification(message_id="m-1")) == {"posted": "order-1"}
    assert post(_notification(message_id="m-2")) == {"posted": "order-1"}  # the stored result
    assert calls == ["m-1"]


def test_another_payload_under_the_same_event_id_is_refused(persistence):
    once = _once(persistence)
    post = once(lambda notification: {"posted": notification.event_id})
    post(_notification(payload_hash="h1"))
    with pytest.raises(IdempotencyValidationError):
        post(_notification(payload_hash="h2"))


def test_an_effect_that_raised_is_called_again_on_the_next_delivery(persistence):
    once, calls = _once(persistence), []

    @once
    def post(notification: Notification) -> dict:
        calls.append(notification.message_id)
        if len(calls) == 1:
            raise ConnectionError("webhook timed out")  # it may have acted: a second call follows
        return {"posted": True}

    with pytest.raises(ConnectionError):
        post(_notification(message_id="m-1"))
    assert post(_notification(message_id="m-2")) == {"posted": True}
    assert calls == ["m-1", "m-2"]


def test_a_crash_between_the_effect_and_its_record_calls_the_effect_again_after_the_invocation_expired(
    persistence, monkeypatch
):
    """The stated window: INPROGRESS blocks duplicates while the crashed invocation could still be
    running, then expires, and the next delivery calls the effect a second time."""
    once, calls = _once(persistence), []
    post = once(lambda notification: calls.append(notification.message_id) or {"posted": True})

    # The first invocation has 1 ms left: its INPROGRESS record expires with it.
    once.register_lambda_context(_Context(remaining_millis=1))
    crash = RuntimeError("the function crashed before COMPLETED was written")
    monkeypatch.setattr(persistence, "save_success", lambda *args, **kwargs: (_ for _ in ()).throw(crash))
    with pytest.raises(IdempotencyPersistenceLayerError):
        post(_notification(message_id="m-1"))
    monkeypatch.undo()

    once.register_lambda_context(_Context(remaining_millis=30_000))
    post(_notification(message_id="m-2"))
    assert calls == ["m-1", "m-2"]  # the duplicate the window allows


def test_while_the_crashed_invocation_could_still_run_a_duplicate_is_held_back(persistence, monkeypatch):
    once, calls = _once(persistence), []
    post = once(lambda notification: calls.append(notification.message_id) or {"posted": True})
    monkeypatch.setattr(persistence, "save_success", lambda *args, **kwargs: (_ for _ in ()).throw(RuntimeError()))
    with pytest.raises(IdempotencyPersistenceLayerError):
        post(_notification(message_id="m-1"))
    monkeypatch.undo()

    with pytest.raises(IdempotencyAlreadyInProgressError):  # reported failed: SQS delivers it again later
        post(_notification(message_id="m-2"))
    assert calls == ["m-1"]

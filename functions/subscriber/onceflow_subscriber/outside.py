"""Effects outside DynamoDB (a webhook, a chat message, an e-mail): deduplicated as far as honestly
possible, with Powertools' idempotency utility keyed by the notification's `event_id`.

No transaction can span DynamoDB and another system, so what this gives is weaker than
`ExactlyOnce`, and it is stated here plainly (docs/SUBSCRIBERS.md says the same):

- Powertools writes an INPROGRESS record for the event_id, calls the effect, then marks the record
  COMPLETED. A duplicate notification that finds COMPLETED (within `expires_after_seconds`) does
  not call the effect again; one that finds INPROGRESS fails and is delivered again later.
- The effect raised: the record is deleted and the next delivery calls it again. If the other
  system did act but the answer was lost (a timeout), that is a second call.
- The function crashed or timed out after the effect and before COMPLETED was written: the
  INPROGRESS record expires when the invocation's time would have run out, and the next delivery
  calls the effect again. That window, and record expiry, are the only duplicates.
So: at least once, duplicates suppressed except in the crash window between the effect and its
record, and after the record expires. Nothing is lost (a failed call is redelivered, then
dead-lettered by the queue's redrive policy). Exactly once needs the receiver's help: pass the
event_id as its idempotency key (an `Idempotency-Key` header, a message id) wherever it takes one.
The opposite choice, at most once (write a marker first, then call; a crash in between loses the
effect), breaks R4's "loses none" and is not offered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.idempotency import (
    BasePersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)

from onceflow_subscriber.notification import Notification

R = TypeVar("R")
# A duplicate later than this calls the effect again. The pipeline's duplicates come from
# redeliveries and redrives of a pending event, in practice within the queues' 14-day retention.
DEFAULT_EXPIRES_AFTER_SECONDS = 14 * 24 * 3600


class OncePerEvent:
    """A decorator for `effect(notification) -> result` that calls it once per event_id, as far as
    the module docstring says. The result must be JSON-serialisable: it is stored and returned to
    duplicates. Call `register_lambda_context(context)` in each invocation, so that an INPROGRESS
    record left by a crash expires with that invocation's time, not after `expires_after_seconds`.

        once = OncePerEvent(DynamoDBPersistenceLayer(table_name=os.environ["IDEMPOTENCY_TABLE"]))

        @once
        def post_to_chat(notification: Notification) -> dict:
            ...  # pass notification.event_id as the receiver's idempotency key where it takes one
    """

    def __init__(
        self, persistence_store: BasePersistenceLayer, expires_after_seconds: int = DEFAULT_EXPIRES_AFTER_SECONDS
    ):
        self.persistence_store = persistence_store
        self.config = IdempotencyConfig(
            event_key_jmespath="event_id",
            payload_validation_jmespath="payload_hash",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=expires_after_seconds,
        )

    def register_lambda_context(self, context: Any) -> None:
        self.config.register_lambda_context(context)

    def __call__(self, effect: Callable[[Notification], R]) -> Callable[[Notification], R]:
        # Powertools reads the dataclass as a dict: the key is its event_id, and another payload
        # under the same event_id (payload_hash) raises IdempotencyValidationError.
        guarded = idempotent_function(
            data_keyword_argument="notification", persistence_store=self.persistence_store, config=self.config
        )(effect)

        def call(notification: Notification) -> R:
            return guarded(notification=notification)

        return call

"""The subscriber building block: apply a notification's effect once per `event_id`.

    once = ExactlyOnce(dynamodb, markers_table)
    batch = NotificationBatch(lambda n: once.apply(n, my_effect_items(n)), sqs, dead_letter_queue_url, logger)
    response, _ = batch.handle(event, context)   # the partial batch response for Lambda

`ExactlyOnce` (DynamoDB effects: exactly once, in one transaction with a marker), `OncePerEvent`
(effects elsewhere, with Powertools' idempotency: at least once, duplicates suppressed except in
the window it states), and the errors that dead-letter a notification with its reason.
docs/SUBSCRIBERS.md says what each guarantees.
"""

from onceflow_subscriber.batch import DEAD_LETTERED, BatchOutcome, NotificationBatch
from onceflow_subscriber.errors import CannotApply, EffectRefused, InvalidNotification, PayloadConflict
from onceflow_subscriber.exactly_once import ALREADY_APPLIED, APPLIED, Applied, ExactlyOnce, TransactionNotCommitted
from onceflow_subscriber.notification import (
    EVENT_ID_ATTRIBUTE,
    PAYLOAD_HASH_ATTRIBUTE,
    Notification,
    parse_notification,
)

__all__ = [
    "ALREADY_APPLIED",
    "APPLIED",
    "DEAD_LETTERED",
    "EVENT_ID_ATTRIBUTE",
    "PAYLOAD_HASH_ATTRIBUTE",
    "Applied",
    "BatchOutcome",
    "CannotApply",
    "EffectRefused",
    "ExactlyOnce",
    "InvalidNotification",
    "Notification",
    "NotificationBatch",
    "PayloadConflict",
    "TransactionNotCommitted",
    "parse_notification",
]

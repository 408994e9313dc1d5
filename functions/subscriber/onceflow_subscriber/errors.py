"""Why a notification cannot be applied. Each names the message, the field and the rule it broke;
the batch handler dead-letters it with these as the reason (onceflow_common.dead_letters)."""

from __future__ import annotations


class CannotApply(Exception):
    """A notification that can never be applied: it goes to the dead-letter queue with the reason."""

    error = "Onceflow.CannotApply"

    def __init__(self, message_id: str, field: str, rule: str, detail: str, event_id: str | None = None):
        self.message_id = message_id
        self.field = field
        self.rule = rule
        self.detail = detail
        self.event_id = event_id
        super().__init__(f"message {message_id}: field '{field}' breaks rule '{rule}': {detail}")


class InvalidNotification(CannotApply):
    """Not a notification of the pipeline, or a payload the subscriber's own rules refuse."""

    error = "Onceflow.InvalidNotification"


class PayloadConflict(CannotApply):
    """This event_id was applied with another payload: nothing is applied a second time."""

    error = "Onceflow.PayloadConflict"


class EffectRefused(CannotApply):
    """DynamoDB refused the effect itself: a condition of the subscriber's own items failed, or an
    item is not valid (ValidationException). Nothing was written."""

    error = "Onceflow.EffectRefused"

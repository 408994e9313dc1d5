"""The reconciler's configuration, from the environment template.yaml gives it."""

from __future__ import annotations

import os
from dataclasses import dataclass

from onceflow_common import pending


class ConfigurationError(RuntimeError):
    pass


def _required(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def _seconds(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    try:
        value = int(text) if text else default
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number of seconds, not {text!r}") from None
    if value < 0:
        raise ConfigurationError(f"{name} must not be negative")
    return value


@dataclass(frozen=True)
class Settings:
    state_machine_arn: str
    dead_letter_queue_url: str
    processed_events_table: str
    pending_index: str
    reconciler_table: str
    # An event pending longer than this is counted (the stuck-pending alarm) and, if its execution
    # has ended, dead-lettered.
    pending_threshold_seconds: int
    # How far back of the stored checkpoint ListExecutions looks again: covers ListExecutions'
    # eventual consistency and the longest execution (a sweep lists by start, filters by stop).
    lookback_seconds: int
    # A dead letter's marker lives as long as the dead letter can: the DLQ's retention. After it,
    # an event still pending is dead-lettered again (its first dead letter may have expired).
    claim_retention_seconds: int
    # A claim not completed within this time belongs to a run that crashed: a later run takes it over.
    claim_stale_seconds: int
    max_dead_letters_per_run: int

    @classmethod
    def from_environment(cls) -> Settings:
        return cls(
            state_machine_arn=_required("STATE_MACHINE_ARN"),
            dead_letter_queue_url=_required("DEAD_LETTER_QUEUE_URL"),
            processed_events_table=_required("PROCESSED_EVENTS_TABLE"),
            pending_index=os.environ.get("PENDING_INDEX_NAME") or pending.INDEX_NAME,
            reconciler_table=_required("RECONCILER_TABLE"),
            pending_threshold_seconds=_seconds("PENDING_THRESHOLD_SECONDS", 3600),
            lookback_seconds=_seconds("EXECUTION_LOOKBACK_SECONDS", 3600),
            claim_retention_seconds=_seconds("CLAIM_RETENTION_SECONDS", 14 * 24 * 3600),
            claim_stale_seconds=_seconds("CLAIM_STALE_SECONDS", 900),
            max_dead_letters_per_run=_seconds("MAX_DEAD_LETTERS_PER_RUN", 500),
        )
